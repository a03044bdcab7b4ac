"""Widget detection backends: the classic OpenCV detector (no model) and the YOLO ONNX model.

Both implement ``WidgetDetector.detect(image, texts) -> list[Detection]`` in device
pixels.  The CV detector finds boundaries with a colour morphological gradient, masks
out OCR text, takes connected components (leaving out faint patches of a textured
backdrop) and names them with shape rules (pill-shaped -> switch, small hollow square ->
check box, hollow circle -> radio, thin long bar -> seek bar, rows of equal stars ->
rating bar, rows of dots -> page indicator, top/bottom strips -> status/navigation bar).
The YOLO backend runs the project's trained model on onnxruntime.  Neither matches
text to widgets; that is ``vision.grouping``'s job.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import cv2
import numpy as np

from vision.assets import model_path
from vision.errors import BackendUnavailable
from vision.geometry import Rect
from vision.types import DETECTOR_CLASSES, ElementKind, TextSpan

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Detection:
    kind: ElementKind
    rect: Rect
    confidence: float = 0.5


class WidgetDetector(Protocol):
    def detect(self, image: np.ndarray, texts: Sequence[TextSpan] = ()) -> list[Detection]: ...


class NoDetector:
    def detect(self, image: np.ndarray, texts: Sequence[TextSpan] = ()) -> list[Detection]:
        return []


# --------------------------------------------------------------------------- classic CV

_EDGE = 14  # colour step (of 255, morphological gradient at the work width) that counts as an edge


class CvDetector:
    """Edges + connected components + shape rules; merges with OCR boxes by masking text."""

    def __init__(self, work_width: int = 540) -> None:
        self.work_width = work_width

    def detect(self, image: np.ndarray, texts: Sequence[TextSpan] = ()) -> list[Detection]:
        H, W = image.shape[:2]
        if H < 16 or W < 16:
            return []
        s = min(1.0, self.work_width / W)
        small = cv2.resize(image, (max(1, round(W * s)), max(1, round(H * s))), interpolation=cv2.INTER_AREA) if s < 1 else image
        blobs, frames = _blobs(small, texts, s, W, H)
        status_h = _status_band(blobs, texts, W, H)
        nav_top = _nav_band(blobs + [(t.rect, 1.0, 0.0) for t in texts if len(t.text) <= 2], W, H)
        out: list[Detection] = []
        if status_h:
            out.append(Detection(ElementKind.STATUS_BAR, Rect(0, 0, W, status_h), 0.6))
        if nav_top is not None:
            out.append(Detection(ElementKind.NAVIGATION_BAR, Rect(0, nav_top, W, H), 0.6))
        small_icons: list[Rect] = []
        out.extend(_judge_blobs(blobs, frames, texts, image, small, s, status_h, nav_top, small_icons))
        out = _rows_of_equals(out, small_icons, image, W, H)
        return _drop_nested(_dedupe(out))


Blob = tuple[Rect, float, float]  # (rect, fill ratio, hollowness)


def _blobs(small: np.ndarray, texts: Sequence[TextSpan], s: float, W: int, H: int) -> tuple[list[Blob], dict[int, tuple[int, int, np.ndarray]]]:
    """Connected shapes of strong edges (text strokes masked out), in full-size pixels, and
    for the big ones where they lie on ``small`` and their pixels."""
    kernel = np.ones((3, 3), np.uint8)
    grad = cv2.morphologyEx(small, cv2.MORPH_GRADIENT, kernel).max(axis=2)
    edges = (grad > _EDGE).astype(np.uint8)
    for t in texts:  # text strokes are not widgets
        r = t.rect.scale(s, s)
        edges[max(0, r.top + 1) : max(0, r.bottom - 1), max(0, r.left + 1) : max(0, r.right - 1)] = 0
    joined = cv2.dilate(edges, np.ones((3, 3), np.uint8), iterations=1)
    n, labels, stats, _ = cv2.connectedComponentsWithStats(joined, connectivity=8)
    inv = 1.0 / s
    blobs: list[Blob] = []
    frames: dict[int, tuple[int, int, np.ndarray]] = {}  # big blobs: where they lie and their pixels
    for i in range(1, n):
        x, y, cw, ch, area = (int(v) for v in stats[i])
        if cw < 5 or ch < 5:
            continue
        rect = Rect(round(x * inv), round(y * inv), min(W, round((x + cw) * inv)), min(H, round((y + ch) * inv)))
        if rect.width > 0.97 * W and rect.height > 0.4 * H:
            continue  # the whole screen / a full-screen panel
        comp = (labels[y : y + ch, x : x + cw] == i).astype(np.uint8)
        if _texture(grad, x, y, comp):
            continue
        blobs.append((rect, *_shape(comp)))
        if cw >= 40 or ch >= 40:
            frames[len(blobs) - 1] = (x, y, comp)
    return blobs, frames


def _texture(grad: np.ndarray, x: int, y: int, comp: np.ndarray, *, busy: float = 0.5) -> bool:
    """A blob that is a patch of the background's texture (a striped, grained or noisy
    backdrop), not a drawn widget: its strongest edges barely pass the edge threshold, and
    most of the ring around it carries edges of the same texture just under the threshold.
    A widget is drawn to be seen: its outline or glyph stands well clear of its backdrop."""
    ch, cw = comp.shape
    strongest = float(np.percentile(grad[y : y + ch, x : x + cw][comp > 0], 98))
    if strongest >= 1.5 * _EDGE:
        return False
    h, w = grad.shape
    m = max(3, (cw + ch) // 4)
    top, left, bottom, right = max(0, y - m), max(0, x - m), min(h, y + ch + m), min(w, x + cw + m)
    ring = np.ones((bottom - top, right - left), bool)
    ring[y - top : y - top + ch, x - left : x - left + cw] = False
    around = grad[top:bottom, left:right][ring]
    return around.size > 0 and float(((around >= 4) & (around <= _EDGE)).mean()) >= busy


def _judge_blobs(blobs: list[Blob], frames: dict[int, tuple[int, int, np.ndarray]], texts: Sequence[TextSpan],
                 image: np.ndarray, small: np.ndarray, s: float, status_h: int, nav_top: int | None,
                 small_icons: list[Rect]) -> list[Detection]:
    """The widget each blob is (outlined cards and bars are opened to judge their parts);
    dots and small glyphs are collected into ``small_icons`` for the page-indicator rule."""
    H, W = image.shape[:2]
    inv = 1.0 / s
    unit = W / 411.0
    out: list[Detection] = []
    queue = list(enumerate(blobs))
    while queue:
        index, (rect, fill, hollow) = queue.pop(0)
        if status_h and rect.bottom <= status_h + 2:
            continue
        if nav_top is not None and rect.top >= nav_top - 2:
            continue
        if 3 * unit <= rect.width <= 12 * unit and 0.7 <= rect.width / max(1, rect.height) <= 1.4 and not _has_text(rect, texts):
            if index >= 0:  # (a dot inside a card is part of its drawing)
                small_icons.append(rect)  # a dot: maybe part of a page indicator
            continue
        aspect = rect.width / max(1, rect.height)
        if 3.5 <= aspect <= 7 and 8 * unit <= rect.height <= 30 * unit and not _has_text(rect, texts) and _yellowish(image, rect):
            out.append(Detection(ElementKind.RATING_BAR, rect, 0.5))  # touching stars merge into one blob
            continue
        kind = _classify(rect, fill, hollow, texts, W, H, small, s)
        if kind in (ElementKind.CHECK_BOX, ElementKind.RADIO_GROUP) and not _label_right(rect, texts, unit, left_ok=kind is ElementKind.CHECK_BOX):
            kind = ElementKind.BUTTON  # a ring or box with no label beside it is an icon
        if kind is ElementKind.RADIO_GROUP and _filled_inside(image, rect):
            kind = ElementKind.IMAGE  # a coloured disc (avatar), not an empty ring
        if kind is ElementKind.SEEK_BAR and not (index in frames and _has_thumb(frames[index][2])):
            kind = None  # a long thin shape with no knob: a divider, an underline or a line of print
        bar = kind is ElementKind.BUTTON and rect.width > 0.9 * W  # a full-width bar, not one button
        if (kind is None or bar) and index in frames and min(frames[index][2].shape) >= 40 and hollow >= 0.3:
            queue.extend((-1, part) for part in _parts_inside(*frames[index], inv, W, H))  # an outlined card or bar
            continue
        if kind is None:
            continue
        if kind is ElementKind.BUTTON and rect.width < 0.09 * W and rect.height < 0.05 * H and not _has_text(rect, texts):
            small_icons.append(rect)
        out.append(Detection(kind, rect, 0.5))
    return out


def _shape(comp: np.ndarray) -> tuple[float, float]:
    """(fill ratio of the box once holes are filled, share of the filled shape that is hole)."""
    filled = _fill_holes(comp)
    return float(filled.mean()), 1.0 - float(comp.sum()) / max(1.0, float(filled.sum()))


def _has_thumb(comp: np.ndarray) -> bool:
    """A slider's knob: somewhere the shape stands well taller than the thin track it rides on."""
    heights = comp.sum(axis=0)
    heights = heights[heights > 0]
    if heights.size < 8:
        return False
    track = float(np.median(heights))
    return bool(heights.max() >= 2.5 * track and track <= 0.4 * comp.shape[0])


def _parts_inside(x: int, y: int, comp: np.ndarray, inv: float, W: int, H: int) -> list[tuple[Rect, float, float]]:
    """The pieces of a card or panel once its outline and the lines across it are taken away.

    Icons and glyphs drawn against a card's border or its inner dividers join them into one
    component; without the outline (a band at the box's edge) and without rows or columns
    the component fills across most of its extent (dividers), they stand apart again.
    """
    inner = comp.copy()
    band = 3
    inner[:band], inner[-band:], inner[:, :band], inner[:, -band:] = 0, 0, 0, 0
    inner[inner.mean(axis=1) > 0.6] = 0
    inner[:, inner.mean(axis=0) > 0.6] = 0
    n, labels, stats, _ = cv2.connectedComponentsWithStats(inner, connectivity=8)
    out = []
    for i in range(1, n):
        px, py, cw, ch, _area = (int(v) for v in stats[i])
        if cw < 5 or ch < 5:
            continue
        gx, gy = x + px, y + py
        rect = Rect(round(gx * inv), round(gy * inv), min(W, round((gx + cw) * inv)), min(H, round((gy + ch) * inv)))
        out.append((rect, *_shape((labels[py : py + ch, px : px + cw] == i).astype(np.uint8))))
    return out


def _fill_holes(comp: np.ndarray) -> np.ndarray:
    h, w = comp.shape
    pad = np.zeros((h + 2, w + 2), np.uint8)
    pad[1:-1, 1:-1] = comp
    flood = pad.copy()
    mask = np.zeros((h + 4, w + 4), np.uint8)
    cv2.floodFill(flood, mask, (0, 0), 1)
    holes = 1 - flood[1:-1, 1:-1]
    return np.clip(comp + holes, 0, 1)


def _filled_inside(image: np.ndarray, r: Rect) -> bool:
    """The shape's middle differs in colour from just outside it (a disc, not a ring)."""
    H, W = image.shape[:2]
    cw, ch = max(1, r.width // 4), max(1, r.height // 4)
    inner = image[r.top + ch : r.bottom - ch, r.left + cw : r.right - cw].reshape(-1, 3)
    m = max(2, r.height // 8)
    outer = image[max(0, r.top - m) : r.top, r.left : r.right].reshape(-1, 3)
    if inner.size == 0 or outer.size == 0:
        return False
    d = np.abs(np.median(inner, axis=0).astype(int) - np.median(outer, axis=0).astype(int)).sum()
    return bool(d > 60)


def _label_right(rect: Rect, texts: Sequence[TextSpan], unit: float, *, left_ok: bool = True) -> bool:
    """Check boxes and radio buttons carry a label just to their right (check boxes in settings rows: left)."""
    for t in texts:
        overlap = min(rect.bottom, t.rect.bottom) - max(rect.top, t.rect.top)
        if overlap < 0.4 * min(rect.height, t.rect.height):
            continue
        if 0 <= t.rect.left - rect.right <= 32 * unit or (left_ok and 0 <= rect.left - t.rect.right <= 200 * unit):
            return True
    return False


def _has_text(rect: Rect, texts: Sequence[TextSpan]) -> bool:
    return any(rect.contains(t.rect.center) for t in texts)


def _classify(rect: Rect, fill: float, hollow: float, texts: Sequence[TextSpan], W: int, H: int,
              small: np.ndarray, s: float) -> ElementKind | None:
    w, h = rect.width, rect.height
    unit = W / 411.0  # ~1 dp for a phone-width screen
    if w < 10 * unit and h < 10 * unit:
        return None
    if h < 4 * unit or w < 4 * unit:
        return None  # dividers and hairlines
    inside = [t for t in texts if rect.contains(t.rect.center)]
    aspect = w / max(1, h)
    if inside:
        if len(inside) > 3 or h > 0.2 * H:
            return None  # a card or panel holding several texts: a block, not a widget
        if aspect > 4 and w > 0.45 * W and 36 * unit <= h <= 72 * unit and fill > 0.85:
            t0 = min(inside, key=lambda t: t.rect.left)
            if t0.rect.left - rect.left < 0.3 * w:
                return ElementKind.EDIT_TEXT
        if h > 72 * unit:
            return None
        return ElementKind.BUTTON
    if 1.35 <= aspect <= 2.3 and 20 * unit <= h <= 40 * unit and rect.right > 0.7 * W:
        return ElementKind.SWITCH
    if 0.8 <= aspect <= 1.25 and 12 * unit <= w <= 28 * unit and hollow > 0.3:
        return ElementKind.CHECK_BOX if fill > 0.88 else ElementKind.RADIO_GROUP
    if aspect > 6 and h <= 48 * unit and w > 0.3 * W:
        return ElementKind.SEEK_BAR if h >= 8 * unit else None
    if aspect > 4 and w > 0.45 * W and 36 * unit <= h <= 72 * unit:
        return ElementKind.EDIT_TEXT  # an empty field
    if w > 0.97 * W or h > 0.35 * H:
        return None
    if w >= 72 * unit and h >= 56 * unit:
        return ElementKind.IMAGE
    if w <= 72 * unit and h <= 72 * unit:
        return ElementKind.BUTTON
    return ElementKind.IMAGE


def _status_band(blobs, texts: Sequence[TextSpan], W: int, H: int) -> int:
    limit = int(0.045 * H)
    bottoms = [r.bottom for r, _, _ in blobs if r.bottom <= limit and r.height < limit and r.width < 0.5 * W]
    bottoms += [t.rect.bottom for t in texts if t.rect.bottom <= limit]
    if not bottoms:
        return 0
    return min(limit, max(bottoms) + int(0.004 * H))


def _nav_band(blobs, W: int, H: int) -> int | None:
    top = int(0.94 * H)
    inside = [r for r, _, _ in blobs if r.top >= top and r.width < 0.5 * W]
    if not inside:
        return None
    xs = sorted(r.center.x / W for r in inside)
    pill = any(0.08 * W < r.width < 0.45 * W and r.height < 0.012 * H and abs(r.center.x - W / 2) < 0.05 * W for r in inside)
    three = len(inside) >= 3 and xs[0] < 0.4 and xs[-1] > 0.6
    if not (pill or three):
        return None
    return max(0, min(r.top for r in inside) - int(0.012 * H))


def _rows_of_equals(dets: list[Detection], icons: list[Rect], image: np.ndarray, W: int, H: int) -> list[Detection]:
    """Merge >= 4 equal, evenly spaced icons in a row into a rating bar; >= 3 dots into a page indicator."""
    used: set[Rect] = set()
    extra: list[Detection] = []
    unit = W / 411.0
    rows: dict[int, list[Rect]] = {}
    for r in sorted(icons, key=lambda r: (r.center.y, r.left)):
        for key in rows:
            if abs(key - r.center.y) <= 3 * unit:
                rows[key].append(r)
                break
        else:
            rows[r.center.y] = [r]
    for members in rows.values():
        members.sort(key=lambda r: r.left)
        run: list[Rect] = []
        seq: list[Rect | None] = [*members, None]
        for cand in seq:
            if cand is not None and run and abs(cand.width - run[-1].width) <= 0.3 * max(cand.width, 1) and cand.left - run[-1].right <= 2 * run[-1].width + 6 * unit:
                run.append(cand)
                continue
            if len(run) >= 2:
                box = run[0].union(run[-1])
                for q in run[1:-1]:
                    box = box.union(q)
                side = max(q.width for q in run)
                centred = abs(box.center.x - W / 2) < 0.06 * W
                if side <= 12 * unit and (len(run) >= 3 or centred):
                    half = box.height  # indicator views are about twice as tall as their dots
                    cy = box.center.y
                    box = Rect(box.left, max(0, cy - half), box.right, min(H, cy + half))
                    extra.append(Detection(ElementKind.PAGE_INDICATOR, box, 0.5))
                    used.update(run)
                elif len(run) >= 4 and 6 * unit < side <= 28 * unit and _yellowish(image, box):
                    extra.append(Detection(ElementKind.RATING_BAR, box, 0.5))
                    used.update(run)
            run = [cand] if cand is not None else []
    return [d for d in dets if d.rect not in used] + extra


def _yellowish(image: np.ndarray, r: Rect) -> bool:
    crop = image[r.top : r.bottom, r.left : r.right]
    if crop.size == 0:
        return False
    hsv = cv2.cvtColor(np.ascontiguousarray(crop), cv2.COLOR_RGB2HSV)
    sat = hsv[:, :, 1] > 80
    if sat.mean() < 0.1:
        return False
    hue = hsv[:, :, 0][sat]
    return bool(((hue >= 8) & (hue <= 35)).mean() > 0.6)


_HOSTS = (ElementKind.BUTTON, ElementKind.IMAGE, ElementKind.SWITCH, ElementKind.CHECK_BOX, ElementKind.RADIO_GROUP)


def _drop_nested(dets: list[Detection]) -> list[Detection]:
    """A glyph or letter inside a small button/image is part of it, not a widget of its own."""
    keep = []
    for d in dets:
        inside = any(o is not d and o.kind in _HOSTS and o.rect.contains_rect(d.rect) and o.rect.area <= 30 * max(1, d.rect.area)
                     and o.rect.area > d.rect.area for o in dets)
        if not inside:
            keep.append(d)
    return keep


def _dedupe(dets: list[Detection], iou: float = 0.7) -> list[Detection]:
    dets = sorted(dets, key=lambda d: -d.confidence)
    keep: list[Detection] = []
    for d in dets:
        if all(d.rect.iou(k.rect) < iou for k in keep):
            keep.append(d)
    return keep


# --------------------------------------------------------------------------- hybrid


class HybridDetector:
    """The YOLO model for the classes it detects well, the CV detector for the rest.

    CV detections of a YOLO class are kept only where YOLO found nothing overlapping,
    so a widget YOLO misses can still come from the CV rules.
    """

    def __init__(self, model: WidgetDetector, classic: WidgetDetector,
                 model_kinds: tuple[ElementKind, ...] = (ElementKind.BUTTON,)) -> None:
        self.model, self.classic, self.model_kinds = model, classic, model_kinds

    def detect(self, image: np.ndarray, texts: Sequence[TextSpan] = ()) -> list[Detection]:
        learned = [d for d in self.model.detect(image, texts) if d.kind in self.model_kinds]
        out = list(learned)
        for d in self.classic.detect(image, texts):
            if d.kind in self.model_kinds and any(d.rect.iou(m.rect) > 0.2 for m in learned):
                continue
            out.append(d)
        return _dedupe(out)


# --------------------------------------------------------------------------- YOLO (ONNX)


class YoloOnnxDetector:
    """The project's YOLOv8n model exported to ONNX (``resources/models/ui_detector.onnx``)."""

    def __init__(self, path: Path | None = None, min_confidence: float = 0.35, iou: float = 0.5, threads: int = 0) -> None:
        self._path = Path(path) if path else model_path("ui_detector.onnx")
        if self._path is None or not self._path.is_file():
            raise BackendUnavailable("YOLO detector model not found", "train it with scripts/train_detector.py; the CV detector is used meanwhile")
        self.min_confidence, self.iou, self._threads = min_confidence, iou, threads
        self._session: Any = None
        self._lock = threading.Lock()

    def _sess(self):
        with self._lock:
            if self._session is None:
                import onnxruntime as ort

                opts = ort.SessionOptions()
                if self._threads:
                    opts.intra_op_num_threads = self._threads
                opts.log_severity_level = 3
                self._session = ort.InferenceSession(str(self._path), opts, providers=["CPUExecutionProvider"])
            return self._session

    def detect(self, image: np.ndarray, texts: Sequence[TextSpan] = ()) -> list[Detection]:
        H, W = image.shape[:2]
        if H < 16 or W < 16:
            return []
        sess = self._sess()
        inp = sess.get_inputs()[0]
        size = inp.shape[2] if isinstance(inp.shape[2], int) else 640
        r = min(size / H, size / W)
        nh, nw = max(1, round(H * r)), max(1, round(W * r))
        canvas = np.full((size, size, 3), 114, np.uint8)
        top, left = (size - nh) // 2, (size - nw) // 2
        canvas[top : top + nh, left : left + nw] = cv2.resize(image, (nw, nh), interpolation=cv2.INTER_AREA)
        blob = canvas.transpose(2, 0, 1)[None].astype(np.float32) / 255.0
        pred = sess.run(None, {inp.name: blob})[0][0]  # (4 + classes, anchors)
        pred = pred.T
        scores = pred[:, 4:]
        cls = scores.argmax(axis=1)
        conf = scores[np.arange(len(scores)), cls]
        keep = conf >= self.min_confidence
        pred, cls, conf = pred[keep], cls[keep], conf[keep]
        if len(pred) == 0:
            return []
        cx, cy, bw, bh = pred[:, 0], pred[:, 1], pred[:, 2], pred[:, 3]
        x0 = (cx - bw / 2 - left) / r
        y0 = (cy - bh / 2 - top) / r
        boxes = np.stack([x0, y0, bw / r, bh / r], axis=1)
        out: list[Detection] = []
        for c in np.unique(cls):
            idx = np.where(cls == c)[0]
            sel = cv2.dnn.NMSBoxes(boxes[idx].tolist(), conf[idx].tolist(), self.min_confidence, self.iou)
            for j in np.array(sel).reshape(-1):
                k = idx[int(j)]
                x, y, bw_, bh_ = boxes[k]
                rect = Rect(int(max(0, x)), int(max(0, y)), int(min(W, x + bw_)), int(min(H, y + bh_)))
                if rect.is_empty() or int(c) >= len(DETECTOR_CLASSES):
                    continue
                out.append(Detection(DETECTOR_CLASSES[int(c)], rect, float(conf[k])))
        return out
