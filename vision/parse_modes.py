"""One strategy per parse mode: what ``ScreenParser`` does with the tree and the pixels.

``TreeMode`` keeps the accessibility tree's elements and blocks; ``VisionMode`` reads the
pixels only (OCR, widget detection, grouping, evidence, phantoms left out, a dimmed-screen
check);
``FusionMode`` reads the tree first, reads text only where the tree has no words, detects
widgets on the pixels and fuses both.  ``choose_mode`` turns the configured mode and the
screen into a strategy (``auto``: fusion when the screen carries a tree).  Each strategy
returns a ``Found``; numbering, blocks and the description are the parser's job.

The steps shared by strategies live here as small functions over a ``ParseJob`` (the one
parse in progress: screen, settings, backends, timer, warnings).  Nothing here builds a
backend or keeps state between parses.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from vision.config import PipelineConfig
from vision.detect import WidgetDetector
from vision.errors import BackendUnavailable
from vision.evidence import with_evidence
from vision.fusion import fuse
from vision.geometry import Rect
from vision.grouping import build_elements, label_from_neighbours
from vision.hierarchy import parse_hierarchy
from vision.icons import IconClassifier
from vision.occlusion import mark_covered, pixel_occluder
from vision.ocr import OcrBackend, RapidOcrBackend, incremental_read
from vision.phantoms import split_phantoms
from vision.plain_lists import find_plain_rows
from vision.rows import find_rows
from vision.sliders import find_sliders
from vision.text_split import split_wide_gaps
from vision.tiles import find_tiles
from vision.tree_text import mask_tree_text, named_icons, tree_spans, worded
from vision.types import Block, Disagreement, Element, ElementKind, Screen, ScreenParse, StageTiming, TextSpan

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Previous:
    """The frame before: its screen and parse (for incremental OCR)."""

    screen: Screen
    parse: ScreenParse


class StageTimer:
    """Runs stages and records how long each took (milliseconds)."""

    def __init__(self) -> None:
        self.timings: list[StageTiming] = []

    def run(self, stage: str, fn: Callable[[], Any]) -> Any:
        t0 = time.perf_counter()
        try:
            return fn()
        finally:
            self.timings.append(StageTiming(stage, round((time.perf_counter() - t0) * 1000, 2)))


class Backends(Protocol):
    """Where a strategy gets its engines (the parser builds them once, lazily)."""

    def ocr_backend(self) -> OcrBackend: ...

    def detector(self) -> WidgetDetector: ...

    def icon_classifier(self) -> IconClassifier | None: ...


@dataclass(slots=True)
class ParseJob:
    """One parse in progress (lives on one thread, for one call)."""

    screen: Screen
    config: PipelineConfig
    backends: Backends
    timer: StageTimer
    previous: Previous | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def tiny(self) -> bool:
        size = self.screen.size
        return min(size.width, size.height) < self.config.min_image_side


@dataclass(slots=True)
class Found:
    """What a strategy found, before numbering, blocks and the description."""

    mode: str
    elements: list[Element] = field(default_factory=list)
    blocks: list[Block] = field(default_factory=list)
    texts: list[TextSpan] = field(default_factory=list)
    notes: list[Disagreement] = field(default_factory=list)
    occluder: Rect | None = None


@dataclass(slots=True)
class TreeFound:
    """The tree's part of a parse: its elements (row labels filled), blocks and dialog panel."""

    elements: list[Element]
    blocks: list[Block]
    occluder: Rect | None


class ParseStrategy(Protocol):
    """How one mode turns a screen into elements."""

    name: str

    def run(self, job: ParseJob, tree: TreeFound | None) -> Found: ...


# --------------------------------------------------------------------------- shared steps


def read_tree(job: ParseJob) -> TreeFound:
    """Parse the screen's tree (timed as ``tree``); its warnings join the job's."""
    c, screen = job.config, job.screen
    tp = job.timer.run("tree", lambda: parse_hierarchy(screen.hierarchy_xml, screen.size, collapse=c.hierarchy_collapse))
    job.warnings.extend(tp.warnings)
    return TreeFound(label_from_neighbours(list(tp.elements), screen.size.width), list(tp.blocks), tp.occluder)


def _comparable(job: ParseJob) -> bool:
    prev = job.previous
    return bool(job.config.incremental_ocr and prev is not None and prev.screen.image.shape == job.screen.image.shape
                and any(t.stage.startswith("ocr") for t in prev.parse.timings))


def read_text(job: ParseJob) -> list[TextSpan]:
    """Pixel-only OCR: the whole frame, or only what changed since a comparable previous frame."""
    ocr = job.backends.ocr_backend()
    prev = job.previous
    if prev is None or not _comparable(job):
        return job.timer.run("ocr", lambda: split_wide_gaps(job.screen.image, ocr.read(job.screen.image)))

    def changed() -> list[TextSpan]:
        assert prev is not None
        spans, change = incremental_read(ocr, job.screen.image, prev.screen.image, prev.parse.text_spans,
                                         max_changed=job.config.incremental_max_changed)
        log.debug("incremental OCR: %.1f%% changed, %d regions", change.fraction * 100, len(change.regions))
        return spans

    return job.timer.run("ocr_incremental", changed)


def read_tree_gaps(job: ParseJob, tree: Sequence[Element]) -> list[TextSpan]:
    """Fusion OCR: the tree's words become spans; the engine reads only the rest of the frame.

    The boxes whose words the tree gives (and icons the tree names) are painted over
    first, in this frame and in a comparable previous one, so OCR neither reads them nor
    sees them change."""
    image = job.screen.image
    named = worded(tree, image)
    hide = named + named_icons(tree, image)
    known = tree_spans(named)
    masked = mask_tree_text(image, hide)
    ocr = job.backends.ocr_backend()
    prev = job.previous
    if prev is None or not _comparable(job):
        return job.timer.run("ocr_tree_gaps", lambda: _read_written_rows(ocr, masked)) + known
    prev_masked = mask_tree_text(prev.screen.image, hide)
    taken = {(s.rect, s.text) for s in known}
    prev_spans = [s for s in prev.parse.text_spans if (s.rect, s.text) not in taken]

    def changed() -> list[TextSpan]:
        spans, _ = incremental_read(ocr, masked, prev_masked, prev_spans, max_changed=job.config.incremental_max_changed)
        return spans

    return job.timer.run("ocr_incremental", changed) + known


def _read_written_rows(ocr: OcrBackend, image: np.ndarray) -> list[TextSpan]:
    """OCR of a frame with the tree's words painted over: mostly flat rows, which the
    RapidOCR backend can leave out of detection."""
    if isinstance(ocr, RapidOcrBackend):
        return ocr.read(image, written_rows_only=True)
    return ocr.read(image)


def _guarded(job: ParseJob, what: str, fn: Callable[[], Any], fallback: Any) -> Any:
    """``fn()``; an engine failing on one odd frame becomes a warning, not a lost parse."""
    try:
        return fn()
    except BackendUnavailable:
        raise
    except Exception as exc:
        log.exception("%s failed", what)
        job.warnings.append(f"{what} failed on this frame: {exc}")
        return fallback


def find_widgets(job: ParseJob, texts: Sequence[TextSpan]) -> list[Element]:
    """Detection, grouping with icon labels, and (by default) the evidence rule."""
    c, image = job.config, job.screen.image
    dets = _guarded(job, "widget detection", lambda: job.timer.run("detect", lambda: job.backends.detector().detect(image, texts)), [])
    icons = job.backends.icon_classifier()
    elements, _ = job.timer.run("group", lambda: build_elements(image, dets, texts, icons=icons,
                                                                 icon_min_confidence=c.icon_min_confidence))
    return with_evidence(elements, job.screen.size) if c.evidence else elements


def drop_phantoms(job: ParseJob, pixels: list[Element]) -> list[Element]:
    """Pixel-only elements without the phantoms ``vision.phantoms`` finds (parts of a
    picture, blank marks): they are not offered as elements, their words stay in the spans."""
    real, phantoms = job.timer.run("phantoms", lambda: split_phantoms(job.screen.image, pixels))
    if phantoms:
        log.debug("%d phantom elements left out", len(phantoms))
    return real


def cover(job: ParseJob, pixels: list[Element], tree: list[Element], occluder: Rect | None) -> tuple[list[Element], list[Element], Rect | None]:
    """Mark what a dialog covers: the tree's panel, else (if enabled) a dimmed screen around one."""
    from_pixels = False
    if occluder is None and job.config.occlusion:
        bars = [e.rect for e in pixels if e.kind in (ElementKind.STATUS_BAR, ElementKind.NAVIGATION_BAR)]
        occluder = job.timer.run("occlusion", lambda: pixel_occluder(job.screen.image, bars))
        from_pixels = occluder is not None
    if occluder is not None:
        pixels = mark_covered(pixels, occluder)
        if from_pixels:
            tree = mark_covered(tree, occluder)
    return pixels, tree, occluder


# --------------------------------------------------------------------------- strategies


class TreeMode:
    """The accessibility tree alone: its elements and structural blocks."""

    name = "tree"

    def run(self, job: ParseJob, tree: TreeFound | None) -> Found:
        assert tree is not None
        return Found(self.name, list(tree.elements), list(tree.blocks), occluder=tree.occluder)


class VisionMode:
    """Pixels alone: OCR, widgets, evidence, a dimmed-screen check."""

    name = "vision"

    def run(self, job: ParseJob, tree: TreeFound | None) -> Found:
        if job.tiny:
            job.warnings.append(f"image too small to parse ({job.screen.size})")
            return Found(self.name)
        texts: list[TextSpan] = _guarded(job, "OCR", lambda: read_text(job), [])
        pixels = find_widgets(job, texts)
        if job.config.evidence:
            pixels = drop_phantoms(job, pixels)
        pixels, _, occluder = cover(job, pixels, [], None)
        pixels = pixels + job.timer.run("rows", lambda: find_rows(job.screen.image, pixels))
        pixels = pixels + job.timer.run("plain_rows", lambda: find_plain_rows(job.screen.image, pixels))
        pixels = pixels + job.timer.run("tiles", lambda: find_tiles(job.screen.image, pixels))
        pixels = pixels + job.timer.run("sliders", lambda: find_sliders(job.screen.image, pixels))
        return Found(self.name, pixels, texts=texts, occluder=occluder)


class FusionMode:
    """The tree first; OCR where it has no words; widgets from pixels; both fused."""

    name = "fusion"

    def run(self, job: ParseJob, tree: TreeFound | None) -> Found:
        assert tree is not None
        tree_elements = list(tree.elements)
        texts: list[TextSpan] = []
        pixels: list[Element] = []
        occluder = tree.occluder
        if job.tiny:
            job.warnings.append(f"image too small to parse ({job.screen.size})")
        else:
            gaps = job.config.ocr_tree_gaps
            texts = _guarded(job, "OCR", lambda: read_tree_gaps(job, tree_elements) if gaps else read_text(job), [])
            pixels = find_widgets(job, texts)
            pixels, tree_elements, occluder = cover(job, pixels, tree_elements, tree.occluder)
        image: np.ndarray = job.screen.image
        elements, notes = job.timer.run("fuse", lambda: fuse(tree_elements, pixels, texts, image))
        return Found(self.name, elements, texts=texts, notes=notes, occluder=occluder)


STRATEGIES: dict[str, ParseStrategy] = {s.name: s for s in (TreeMode(), VisionMode(), FusionMode())}


def choose_mode(job: ParseJob) -> tuple[ParseStrategy, TreeFound | None]:
    """The strategy for this screen and the tree it needs (read here), falling back to
    pixels with a warning when the screen has no usable tree."""
    mode = job.config.mode
    has_tree = bool(job.screen.hierarchy_xml)
    if mode == "auto":
        mode = "fusion" if has_tree else "vision"
    if mode in ("tree", "fusion") and not has_tree:
        job.warnings.append("no accessibility dump on this screen; parsing pixels only")
        mode = "vision"
    tree = read_tree(job) if mode in ("tree", "fusion") else None
    if mode == "fusion" and tree is not None and not tree.elements:
        mode = "vision"
    return STRATEGIES[mode], tree
