"""``ScreenParser``: Screen -> ScreenParse, stage by stage, with per-stage timings.

Stages (each a backend chosen by ``PipelineConfig``): accessibility tree, OCR (full,
incremental against a previous frame, or with a tree only where the tree has no words),
widget detection (YOLO ONNX if shipped, else the OpenCV detector), grouping with icon
labels, fusion with the tree, block division with captions and active tabs, occlusion
(what a dialog, sheet or menu covers: from the tree, else from a dimmed screen), the soft
keyboard as one block (``vision.keyboard``), and the
LLM-facing description.  What each mode does with tree and pixels is a strategy in
``vision.parse_modes``; this module builds the backends, picks the strategy and finishes
the parse (blocks, ids, description).  Backends are built lazily on
first use and reused; a parser is safe to share between threads for reading (a lock
guards construction).  Bad input yields a valid, empty parse with a warning.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import fields, replace
from operator import attrgetter

import numpy as np

from vision import blocks as blocks_mod
from vision.config import PipelineConfig
from vision.describe import describe
from vision.detect import CvDetector, HybridDetector, NoDetector, WidgetDetector, YoloOnnxDetector
from vision.errors import BackendUnavailable
from vision.geometry import Size
from vision.hierarchy import reading_order_key
from vision.icons import IconClassifier, OnnxIconClassifier
from vision.keyboard import keyboard_blocks
from vision.naming import name_unnamed
from vision.ocr import NoOcr, OcrBackend, RapidOcrBackend
from vision.parse_modes import Found, ParseJob, Previous, StageTimer, choose_mode
from vision.secret_mask import mask_password_fields
from vision.types import Element, ElementKind, Screen, ScreenParse, StageTiming

log = logging.getLogger(__name__)


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
                    self._ocr = RapidOcrBackend(c.ocr_min_confidence, c.ocr_det_max_side, c.ocr_use_cls, c.ocr_threads,
                                                cache_entries=c.ocr_cache_entries, rec_batch=c.ocr_rec_batch,
                                                det_min_scale=c.ocr_det_min_scale)
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
        """Parse ``screen`` with the strategy its mode names (see ``vision.parse_modes``).

        ``previous`` (or, with ``remember_previous``, this parser's last frame) lets OCR
        re-read only what changed."""
        if isinstance(previous, tuple):
            previous = Previous(*previous)
        c = self.config
        if previous is None and c.remember_previous:
            previous = self._last
        t_start = time.perf_counter()
        size = screen.size
        if size.width * size.height > c.max_image_pixels:
            return ScreenParse(size, warnings=(f"image too large ({size}); raise max_image_pixels to parse it",))
        screen = mask_password_fields(screen)  # OCR never reads a password shown in clear
        job = ParseJob(screen, c, self, StageTimer(), previous)
        strategy, tree = choose_mode(job)
        found = strategy.run(job, tree)
        result = _finish(job, found, t_start)
        if c.remember_previous and found.mode != "tree" and not job.tiny:
            self._last = Previous(screen, result)
        return result


def _finish(job: ParseJob, found: Found, t_start: float) -> ScreenParse:
    """Blocks and captions, ids in reading order, the description, and the timings."""
    c, screen, timer = job.config, job.screen, job.timer
    image, size, mode = screen.image, screen.size, found.mode
    hidden = [e for e in found.elements if e.covered]  # under a dialog: kept, but in no block
    elements = [e for e in found.elements if not e.covered]
    blocks = found.blocks
    if c.blocks and elements and not job.tiny and mode != "tree":
        blocks, rows = timer.run("blocks", lambda: blocks_mod.divide(image, elements, rows=mode == "vision"))
        elements = list(elements) + rows
    if c.blocks and blocks:
        blocks, elements = timer.run("captions", lambda: blocks_mod.annotate(image if mode != "tree" else None, blocks, elements))
    elements = name_unnamed(elements, size)
    elements, id_map = _renumber(list(elements) + hidden)
    notes = [replace(n, element_id=id_map.get(n.element_id or "", n.element_id)) for n in found.notes]
    blocks = [replace(b, element_ids=tuple(id_map[i] for i in b.element_ids if i in id_map),
                      active_child=id_map.get(b.active_child or "", None)) for b in blocks]
    if mode != "tree":  # a soft keyboard is one block, its keys no gap in the tree
        kept, kept_notes = keyboard_blocks(elements, tuple(blocks), tuple(notes), size.width, size.height,
                                             found.texts)
        blocks, notes = list(kept), list(kept_notes)
    text = ""
    if c.describe:
        text = timer.run("describe", lambda: describe(size, [e for e in elements if not e.covered], blocks,
                                                      app=screen.foreground_package, covered=len(hidden)))
    timer.timings.append(StageTiming("total", round((time.perf_counter() - t_start) * 1000, 2)))
    return ScreenParse(
        screen_size=size, elements=tuple(elements), blocks=tuple(blocks), text_spans=tuple(found.texts),
        timings=tuple(timer.timings), description=text, disagreements=tuple(notes), warnings=tuple(job.warnings),
        occluder=found.occluder,
    )


def _renumber(elements: list[Element]) -> tuple[list[Element], dict[str, str]]:
    """Ids ``1..N`` in reading order (status bar first, navigation bar last)."""
    def key(e: Element) -> tuple[int, int, int]:
        top, left = reading_order_key(e.rect)
        rank = 0 if e.kind is ElementKind.STATUS_BAR else 2 if e.kind is ElementKind.NAVIGATION_BAR else 1
        return (rank, top, left)

    ordered = sorted(elements, key=key)
    id_map: dict[str, str] = {}
    out = []
    for i, e in enumerate(ordered):
        new = str(i + 1)
        id_map[e.id] = new
        out.append(_renamed(e, new))
    return out, id_map


_FIELDS = fields(Element)
_REST_OF_ELEMENT = attrgetter(*(f.name for f in _FIELDS[1:]))


def _renamed(e: Element, new_id: str) -> Element:
    """``replace(e, id=new_id)`` at a third of its cost (thousands of elements on a long list):
    every field but the id, read at once, passed in declaration order."""
    return Element(new_id, *_REST_OF_ELEMENT(e))


def parse_image(image: np.ndarray, *, hierarchy_xml: str | None = None, config: PipelineConfig | None = None) -> ScreenParse:
    """One-off convenience: parse a bare RGB array (builds a fresh parser each call)."""
    return ScreenParser(config).parse(Screen(image, hierarchy_xml=hierarchy_xml))


__all__ = ["PipelineConfig", "Previous", "ScreenParser", "parse_image", "Size"]
