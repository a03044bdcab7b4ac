"""``ScreenParser``: Screen -> ScreenParse, stage by stage, with per-stage timings.

Stages (each a backend chosen by ``PipelineConfig``): accessibility tree, OCR (full,
incremental against a previous frame, or with a tree only where the tree has no words), widget detection (YOLO ONNX if shipped, else the
OpenCV detector), grouping with icon labels, fusion with the tree, block division with
captions and active tabs, occlusion (what a dialog, sheet or menu covers: from the tree,
else from a dimmed screen), and the LLM-facing description.  Backends are built lazily on
first use and reused; a parser is safe to share between threads for reading (a lock
guards construction).  Bad input yields a valid, empty parse with a warning.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from vision import blocks as blocks_mod
from vision.config import PipelineConfig
from vision.describe import describe
from vision.detect import CvDetector, HybridDetector, NoDetector, WidgetDetector, YoloOnnxDetector
from vision.errors import BackendUnavailable
from vision.evidence import with_evidence
from vision.fusion import fuse
from vision.geometry import Size
from vision.grouping import build_elements, label_from_neighbours
from vision.hierarchy import parse_hierarchy, reading_order_key
from vision.icons import IconClassifier, OnnxIconClassifier
from vision.occlusion import mark_covered, pixel_occluder
from vision.ocr import NoOcr, OcrBackend, RapidOcrBackend, incremental_read
from vision.tree_text import mask_tree_text, tree_spans, worded
from vision.types import Block, Disagreement, Element, ElementKind, Screen, ScreenParse, StageTiming, TextSpan

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Previous:
    """The frame before: its screen and parse (for incremental OCR)."""

    screen: Screen
    parse: ScreenParse


class _Timer:
    def __init__(self) -> None:
        self.timings: list[StageTiming] = []

    def run(self, stage: str, fn: Callable[[], Any]) -> Any:
        t0 = time.perf_counter()
        try:
            return fn()
        finally:
            self.timings.append(StageTiming(stage, round((time.perf_counter() - t0) * 1000, 2)))


class ScreenParser:
    """Parses screens with the backends ``config`` names (built once, on first use)."""

    def __init__(self, config: PipelineConfig | None = None, *, ocr: OcrBackend | None = None,
                 detector: WidgetDetector | None = None, icons: IconClassifier | None = None) -> None:
        self.config = config or PipelineConfig()
        self._ocr, self._detector, self._icons = ocr, detector, icons
        self._icons_resolved = icons is not None
        self._lock = threading.Lock()
        self._last: Previous | None = None
        self.detector_name = ""

    # ------------------------------------------------------------------ backends

    def ocr_backend(self) -> OcrBackend:
        with self._lock:
            if self._ocr is None:
                c = self.config
                if c.ocr == "none":
                    self._ocr = NoOcr()
                elif c.ocr == "paddle":
                    from vision.ocr import PaddleOcrBackend

                    self._ocr = PaddleOcrBackend(c.ocr_min_confidence)
                else:
                    self._ocr = RapidOcrBackend(c.ocr_min_confidence, c.ocr_det_max_side, c.ocr_use_cls, c.ocr_threads)
            return self._ocr

    def detector(self) -> WidgetDetector:
        with self._lock:
            if self._detector is None:
                c = self.config
                if c.detector == "none":
                    self._detector, self.detector_name = NoDetector(), "none"
                elif c.detector in ("auto", "hybrid", "yolo"):
                    try:
                        from vision.assets import model_path

                        path = model_path(c.detector_model)
                        if path is None:
                            raise BackendUnavailable(f"detector model {c.detector_model} not found")
                        yolo = YoloOnnxDetector(path, c.detector_min_confidence)
                        if c.detector == "yolo":
                            self._detector, self.detector_name = yolo, "yolo"
                        else:
                            self._detector, self.detector_name = HybridDetector(yolo, CvDetector()), "hybrid"
                    except BackendUnavailable as exc:
                        if c.detector != "auto":
                            raise
                        log.info("%s; using the OpenCV detector", exc)
                        self._detector, self.detector_name = CvDetector(), "cv"
                else:
                    self._detector, self.detector_name = CvDetector(), "cv"
            return self._detector

    def icon_classifier(self) -> IconClassifier | None:
        with self._lock:
            if not self._icons_resolved:
                self._icons_resolved = True
                c = self.config
                if c.icons in ("auto", "onnx"):
                    try:
                        from vision.assets import model_path

                        self._icons = OnnxIconClassifier(model_path(c.icon_model))
                    except BackendUnavailable as exc:
                        if c.icons == "onnx":
                            raise
                        log.info("%s; buttons without text stay unnamed", exc)
                elif c.icons == "clip":
                    weights = c.extra.get("clip_weights", "")
                    from pathlib import Path

                    from vision.icons import ClipIconClassifier

                    self._icons = ClipIconClassifier(Path(weights))
            return self._icons

    def warm_up(self) -> None:
        """Build every backend now (and run them once on a blank frame)."""
        blank = np.full((320, 180, 3), 255, np.uint8)
        self.parse(Screen(blank))

    # ------------------------------------------------------------------ parse

    def parse(self, screen: Screen, previous: Previous | tuple[Screen, ScreenParse] | None = None) -> ScreenParse:
        if isinstance(previous, tuple):
            previous = Previous(*previous)
        c = self.config
        if previous is None and c.remember_previous:
            previous = self._last
        timer = _Timer()
        t_start = time.perf_counter()
        image = screen.image
        size = screen.size
        warnings: list[str] = []
        mode = c.mode
        if mode == "auto":
            mode = "fusion" if screen.hierarchy_xml else "vision"
        if mode in ("tree", "fusion") and not screen.hierarchy_xml:
            warnings.append("no accessibility dump on this screen; parsing pixels only")
            mode = "vision"
        if size.width * size.height > c.max_image_pixels:
            return ScreenParse(size, warnings=(f"image too large ({size}); raise max_image_pixels to parse it",))
        tiny = min(size.width, size.height) < c.min_image_side

        tree_elements: list[Element] = []
        tree_blocks: list[Block] = []
        occluder = None
        if mode in ("tree", "fusion"):
            tp = timer.run("tree", lambda: parse_hierarchy(screen.hierarchy_xml, size, collapse=c.hierarchy_collapse))
            warnings.extend(tp.warnings)
            tree_elements = label_from_neighbours(list(tp.elements), size.width)
            tree_blocks = list(tp.blocks)
            occluder = tp.occluder
            if not tree_elements and mode == "fusion":
                mode = "vision"

        texts: list[TextSpan] = []
        vision_elements: list[Element] = []
        notes: list[Disagreement] = []
        if mode in ("vision", "fusion") and not tiny:
            incremental = bool(c.incremental_ocr and previous is not None and previous.screen.image.shape == image.shape
                               and any(t.stage.startswith("ocr") for t in previous.parse.timings))
            try:
                if mode == "fusion" and c.ocr_tree_gaps and tree_elements and not incremental:
                    named = worded(tree_elements, image)  # the tree names these: read only the rest
                    masked = mask_tree_text(image, named)
                    texts = timer.run("ocr_tree_gaps", lambda: self.ocr_backend().read(masked)) + tree_spans(named)
                else:
                    texts = timer.run("ocr_incremental" if incremental else "ocr", lambda: self._read_text(screen, previous if incremental else None))
            except BackendUnavailable:
                raise
            except Exception as exc:  # an engine failing on one odd frame must not kill the parse
                log.exception("OCR failed")
                warnings.append(f"OCR failed on this frame: {exc}")
            try:
                dets = timer.run("detect", lambda: self.detector().detect(image, texts))
            except BackendUnavailable:
                raise
            except Exception as exc:
                log.exception("widget detection failed")
                warnings.append(f"widget detection failed on this frame: {exc}")
                dets = []
            icons = self.icon_classifier()
            vision_elements, _ = timer.run("group", lambda: build_elements(image, dets, texts, icons=icons, icon_min_confidence=c.icon_min_confidence))
            if c.evidence:
                vision_elements = with_evidence(vision_elements, size)
            from_pixels = False
            if occluder is None and c.occlusion:
                bar_rects = [e.rect for e in vision_elements if e.kind in (ElementKind.STATUS_BAR, ElementKind.NAVIGATION_BAR)]
                occluder = timer.run("occlusion", lambda: pixel_occluder(image, bar_rects))
                from_pixels = occluder is not None
            if occluder is not None:
                vision_elements = mark_covered(vision_elements, occluder)
                if from_pixels:
                    tree_elements = mark_covered(tree_elements, occluder)
        elif tiny:
            warnings.append(f"image too small to parse ({size})")

        if mode == "tree":
            elements, blocks = tree_elements, tree_blocks
        elif mode == "fusion":
            elements, notes = timer.run("fuse", lambda: fuse(tree_elements, vision_elements, texts, image))
            blocks = []
        else:
            elements, blocks = vision_elements, []

        hidden = [e for e in elements if e.covered]  # under a dialog: kept, but in no block
        elements = [e for e in elements if not e.covered]
        if c.blocks and elements and not tiny and mode != "tree":
            blocks, rows = timer.run("blocks", lambda: blocks_mod.divide(image, elements, rows=mode == "vision"))
            elements = list(elements) + rows
        if c.blocks and blocks:
            blocks, elements = timer.run("captions", lambda: blocks_mod.annotate(image if mode != "tree" else None, blocks, elements))
        elements = list(elements) + hidden
        elements, id_map = _renumber(elements)
        notes = [replace(n, element_id=id_map.get(n.element_id or "", n.element_id)) for n in notes]
        blocks = [replace(b, element_ids=tuple(id_map[i] for i in b.element_ids if i in id_map),
                          active_child=id_map.get(b.active_child or "", None)) for b in blocks]
        text = ""
        if c.describe:
            text = timer.run("describe", lambda: describe(size, [e for e in elements if not e.covered], blocks,
                                                          app=screen.foreground_package, covered=len(hidden)))
        timer.timings.append(StageTiming("total", round((time.perf_counter() - t_start) * 1000, 2)))
        result = ScreenParse(
            screen_size=size, elements=tuple(elements), blocks=tuple(blocks), text_spans=tuple(texts),
            timings=tuple(timer.timings), description=text, disagreements=tuple(notes), warnings=tuple(warnings),
            occluder=occluder,
        )
        if c.remember_previous and mode in ("vision", "fusion") and not tiny:
            self._last = Previous(screen, result)
        return result

    def _read_text(self, screen: Screen, previous: Previous | None) -> list[TextSpan]:
        ocr = self.ocr_backend()
        if previous is not None:
            spans, change = incremental_read(ocr, screen.image, previous.screen.image, previous.parse.text_spans,
                                             max_changed=self.config.incremental_max_changed)
            log.debug("incremental OCR: %.1f%% changed, %d regions", change.fraction * 100, len(change.regions))
            return spans
        return ocr.read(screen.image)


def _renumber(elements: list[Element]) -> tuple[list[Element], dict[str, str]]:
    """Ids ``1..N`` in reading order (status bar first, navigation bar last)."""
    def key(e: Element) -> tuple[int, int, int]:
        top, left = reading_order_key(e.rect)
        rank = 0 if e.kind.value == "status_bar" else 2 if e.kind.value == "navigation_bar" else 1
        return (rank, top, left)

    ordered = sorted(elements, key=key)
    id_map: dict[str, str] = {}
    out = []
    for i, e in enumerate(ordered):
        new = str(i + 1)
        id_map[e.id] = new
        out.append(replace(e, id=new))
    return out, id_map


def parse_image(image: np.ndarray, *, hierarchy_xml: str | None = None, config: PipelineConfig | None = None) -> ScreenParse:
    """One-off convenience: parse a bare RGB array (builds a fresh parser each call)."""
    return ScreenParser(config).parse(Screen(image, hierarchy_xml=hierarchy_xml))


__all__ = ["Previous", "ScreenParser", "parse_image", "Size"]
