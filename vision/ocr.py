"""Text recognition: PP-OCR through rapidocr 3.x (default) or PaddleOCR (extra), plus
incremental re-reading of only the part of the screen that changed.

``RapidOcrBackend`` can remember what it read by pixels (``vision.ocr_cache``), so a frame or a
changed region seen before is not read again.  Backends return ``TextSpan`` objects in the coordinates of the image they were given and
keep only spans at or above the confidence bar (VisionTasker keeps > 0.95).  Engines are
built lazily on first use, once per backend object; nothing is downloaded.
"""

from __future__ import annotations

import copy
import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import cv2
import numpy as np

from vision.errors import BackendUnavailable
from vision.geometry import Rect
from vision.ocr_cache import PixelCache
from vision.text_rows import ink_bands, stack, unstack
from vision.types import TextSpan

log = logging.getLogger(__name__)


class OcrBackend(Protocol):
    """Reads text lines from an RGB image."""

    def read(self, image: np.ndarray) -> list[TextSpan]: ...


def _quad_to_rect(quad: Sequence[Sequence[float]], w: int, h: int) -> Rect:
    xs = [float(p[0]) for p in quad]
    ys = [float(p[1]) for p in quad]
    left, top = max(0, int(min(xs))), max(0, int(min(ys)))
    right, bottom = min(w, int(round(max(xs)))), min(h, int(round(max(ys))))
    return Rect(left, top, max(left, right), max(top, bottom))


class RapidOcrBackend:
    """PP-OCR (det + rec; models bundled in the rapidocr wheel) on onnxruntime."""

    def __init__(self, min_confidence: float = 0.95, det_max_side: int = 1280, use_cls: bool = False, threads: int = 0,
                 *, cache_entries: int = 0, rec_batch: int = 6, skip_flat_rows: bool = False,
                 det_min_scale: float = 0.0, memory_arena: bool = True,
                 models_of: RapidOcrBackend | None = None) -> None:
        self.min_confidence = min_confidence
        self.det_max_side = det_max_side
        #: the detector never shrinks a frame below this share of its size (small text on a
        #: tall 1080x2400 screen stays readable; a 1920-high frame at 0.5 is still ``det_max_side``)
        self.det_min_scale = det_min_scale
        self.skip_flat_rows = skip_flat_rows
        self._call_lock = threading.Lock()  # one engine call at a time (the detector's size is set per call)
        self._cache = PixelCache(cache_entries) if cache_entries > 0 else None
        self._params = {
            "Global.log_level": "error",
            "Global.use_cls": use_cls,
            "Global.max_side_len": 4096,
            "Global.text_score": min(0.5, min_confidence),
            "Det.limit_type": "max",
            "Det.limit_side_len": det_max_side,
            "Rec.rec_batch_num": max(1, rec_batch),
            # keep onnxruntime's memory arena: text lines differ in width, and re-allocating
            # every batch's buffers cost about a tenth of the recognition CPU time here
            # (a reader of small crops that must stay small in memory turns it off)
            "EngineConfig.onnxruntime.enable_cpu_mem_arena": memory_arena,
        }
        if threads > 0:
            self._params["EngineConfig.onnxruntime.intra_op_num_threads"] = threads
        self._engine: Any = None
        self._lock = threading.Lock()
        #: another backend whose loaded models this one runs, with its own settings (its
        #: detector size, batch, confidence): one copy of the weights in the process
        self._models_of = models_of

    def _get(self):
        with self._lock:
            if self._engine is None:
                try:
                    from rapidocr import RapidOCR
                except ImportError as exc:
                    raise BackendUnavailable("rapidocr is not installed", "pip install 'rapidocr>=3,<4' onnxruntime") from exc
                engine = RapidOCR(params=dict(self._params))
                if self._models_of is not None:
                    self._adopt(engine, self._models_of._get())
                self._engine = engine
            return self._engine

    def _adopt(self, engine: Any, other: Any) -> None:
        """Give ``engine`` the detector and recogniser of ``other`` (already loaded, or
        loaded now), each a shallow copy carrying this backend's own per-call settings:
        they run the same onnxruntime sessions, which serve concurrent calls, so neither
        backend waits for the other and the weights are in memory once.  Written against
        rapidocr 3.x's engine attributes (``text_det``/``text_rec``), as ``_engine_read``
        already is: rapidocr's own configuration cannot carry a session object."""
        det = copy.copy(other._load_det_model())
        det.postprocess_op = copy.copy(det.postprocess_op)
        det.limit_side_len = self.det_max_side
        rec = copy.copy(other._load_rec_model())
        rec.rec_batch_num = self._params["Rec.rec_batch_num"]
        engine.text_det, engine.text_rec = det, rec

    def warm_up(self) -> None:
        self._get()

    @property
    def cache(self) -> PixelCache | None:
        """The pixel cache in front of the engine (None when switched off)."""
        return self._cache

    def read(self, image: np.ndarray, *, written_rows_only: bool | None = None) -> list[TextSpan]:
        """Text lines of ``image``.  ``written_rows_only`` (default: ``skip_flat_rows``) lets
        the detector see only the rows that hold strokes (``vision.text_rows``), at the scale
        it would have used for the whole image: much less work on a frame whose known words
        are painted over; on a full frame it can shift a box, so plain reads use the frame."""
        h, w = image.shape[:2]
        if h < 8 or w < 8:
            return []
        rows = self.skip_flat_rows if written_rows_only is None else written_rows_only
        if self._cache is not None:
            return self._cache.read(image, lambda im: self._read(im, rows), variant="rows" if rows else "")
        return self._read(image, rows)

    def _read(self, image: np.ndarray, rows_only: bool) -> list[TextSpan]:
        h, w = image.shape[:2]
        bands = ink_bands(image) if rows_only else []
        side = max(self.det_max_side, round(self.det_min_scale * max(h, w)))
        if not rows_only or sum(b.height for b in bands) > 0.85 * h:
            return self._engine_read(image, side)
        if not bands:
            return []
        stacked = stack(image, bands)
        scale = min(1.0, side / max(h, w))
        limit = max(32, round(scale * max(stacked.shape[0], w)))
        return unstack(self._engine_read(stacked, limit), bands)

    def _engine_read(self, image: np.ndarray, det_limit: int) -> list[TextSpan]:
        h, w = image.shape[:2]
        engine = self._get()
        with self._call_lock:
            detector = getattr(engine, "text_det", None) or engine._load_det_model()
            detector.limit_side_len = det_limit
            result = engine(np.ascontiguousarray(image[:, :, ::-1]))  # rapidocr expects BGR arrays
        boxes = getattr(result, "boxes", None)
        if boxes is None or len(boxes) == 0:
            return []
        spans: list[TextSpan] = []
        for quad, text, score in zip(boxes, result.txts, result.scores, strict=False):
            text = (text or "").strip()
            if not text or float(score) < self.min_confidence:
                continue
            rect = _quad_to_rect(quad, w, h)
            if rect.is_empty():
                continue
            spans.append(TextSpan(text=text, rect=rect, confidence=float(score)))
        return spans


class PaddleOcrBackend:  # pragma: no cover - optional extra, cannot run offline without local models
    """PaddleOCR (extra ``paddle``); needs local model folders (none ship on PyPI)."""

    def __init__(self, min_confidence: float = 0.95, **model_dirs: str) -> None:
        try:
            import paddleocr  # noqa: F401
        except ImportError as exc:
            raise BackendUnavailable("PaddleOCR is not installed", "pip install 'tapwise[paddle]'") from exc
        self.min_confidence = min_confidence
        self._dirs = model_dirs
        self._engine: Any = None

    def read(self, image: np.ndarray) -> list[TextSpan]:
        from paddleocr import PaddleOCR

        if self._engine is None:
            self._engine = PaddleOCR(lang="en", **self._dirs)
        out: list[TextSpan] = []
        h, w = image.shape[:2]
        for res in self._engine.predict(image[:, :, ::-1]):
            for quad, text, score in zip(res["rec_polys"], res["rec_texts"], res["rec_scores"], strict=False):
                if text and score >= self.min_confidence:
                    out.append(TextSpan(text, _quad_to_rect(quad, w, h), float(score)))
        return out


class NoOcr:
    """OCR switched off."""

    def read(self, image: np.ndarray) -> list[TextSpan]:
        return []


# --------------------------------------------------------------------------- incremental


@dataclass(frozen=True, slots=True)
class ChangeMap:
    """Where two consecutive frames differ: boxes (device px) and the changed fraction."""

    regions: tuple[Rect, ...]
    fraction: float
    comparable: bool = True


def changed_regions(prev: np.ndarray, cur: np.ndarray, *, threshold: int = 18, margin: int = 12, scale: int = 4) -> ChangeMap:
    """Boxes around pixels that changed between two frames of the same size."""
    if prev.shape != cur.shape:
        return ChangeMap((), 1.0, comparable=False)
    h, w = cur.shape[:2]
    a = cv2.resize(prev, (max(1, w // scale), max(1, h // scale)), interpolation=cv2.INTER_AREA)
    b = cv2.resize(cur, (max(1, w // scale), max(1, h // scale)), interpolation=cv2.INTER_AREA)
    diff = cv2.absdiff(a, b).max(axis=2)
    mask = (diff > threshold).astype(np.uint8)
    if not mask.any():
        return ChangeMap((), 0.0)
    k = max(1, margin // scale)
    mask = cv2.dilate(mask, np.ones((2 * k + 1, 2 * k + 1), np.uint8))
    n, _, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
    rects = [
        Rect(int(x * scale), int(y * scale), min(w, int((x + cw) * scale)), min(h, int((y + ch) * scale)))
        for x, y, cw, ch, _ in stats[1:n]
    ]
    changed = sum(r.area for r in rects) / max(1, w * h)
    return ChangeMap(tuple(merge_rects(rects)), float(min(1.0, changed)))


def merge_rects(rects: list[Rect], gap: int = 8) -> list[Rect]:
    """Union overlapping (or nearly touching) boxes until none overlap."""
    out = list(rects)
    merged = True
    while merged:
        merged = False
        result: list[Rect] = []
        for r in out:
            for i, q in enumerate(result):
                if q.intersection(Rect(r.left - gap, r.top - gap, r.right + gap, r.bottom + gap)):
                    result[i] = q.union(r)
                    merged = True
                    break
            else:
                result.append(r)
        out = result
    return out


def incremental_read(
    backend: OcrBackend,
    image: np.ndarray,
    prev_image: np.ndarray,
    prev_spans: Sequence[TextSpan],
    *,
    max_changed: float = 0.35,
) -> tuple[list[TextSpan], ChangeMap]:
    """Re-read only changed regions; keep earlier spans elsewhere.

    Falls back to a full read when the frames are not comparable or more than
    ``max_changed`` of the screen changed.  Regions grow to cover any old span they
    touch, so a partly changed line is read again whole.
    """
    change = changed_regions(prev_image, image)
    if not change.comparable or change.fraction > max_changed:
        return backend.read(image), change
    if not change.regions:
        return list(prev_spans), change
    h, w = image.shape[:2]
    regions = list(change.regions)
    # grow regions over the old spans they touch (to a fixed point, bounded)
    for _ in range(4):
        grown = []
        for r in regions:
            g = r
            for s in prev_spans:
                if s.rect.intersection(g):
                    g = g.union(s.rect)
            grown.append(Rect(max(0, g.left - 8), max(0, g.top - 8), min(w, g.right + 8), min(h, g.bottom + 8)))
        grown = merge_rects(grown)
        if grown == regions:
            break
        regions = grown
    kept = [s for s in prev_spans if not any(s.rect.intersection(r) for r in regions)]
    fresh: list[TextSpan] = []
    for r in regions:
        if r.width < 8 or r.height < 8:
            continue
        crop = image[r.top : r.bottom, r.left : r.right]
        for s in backend.read(crop):
            fresh.append(TextSpan(s.text, s.rect.translate(r.left, r.top), s.confidence))
    return kept + fresh, ChangeMap(tuple(regions), change.fraction)
