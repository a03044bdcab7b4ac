"""Semantic grouping of detections and text (VisionTasker §4.3.1-4.3.2).

* Text inside a widget becomes that widget's text.
* Text-less widgets (switches, check boxes, fields, icons) are matched to the nearest
  text on the same row, or to a caption directly below an icon (home-screen apps), by
  proximity; the matched text becomes the widget's label.
* Buttons still unnamed go to the icon classifier ("search", "settings", ...).
* Text not inside any widget becomes a ``text`` element.

Pure functions over plain data; the only model touched is the injected icon classifier.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from vision.detect import Detection
from vision.geometry import Rect
from vision.icons import IconClassifier
from vision.spatial import GridIndex
from vision.types import Element, ElementKind, ElementSource, TextSpan

log = logging.getLogger(__name__)

_NEEDS_LABEL = {
    ElementKind.SWITCH, ElementKind.CHECK_BOX, ElementKind.RADIO_GROUP, ElementKind.SEEK_BAR,
    ElementKind.EDIT_TEXT, ElementKind.SPINNER, ElementKind.BUTTON, ElementKind.IMAGE, ElementKind.RATING_BAR,
}
_CLICKABLE = {
    ElementKind.BUTTON, ElementKind.EDIT_TEXT, ElementKind.SWITCH, ElementKind.CHECK_BOX, ElementKind.RADIO_GROUP,
    ElementKind.SPINNER, ElementKind.SEEK_BAR,
}


def _join(spans: Sequence[TextSpan]) -> str:
    ordered = sorted(spans, key=lambda t: (t.rect.top // max(1, t.rect.height // 2 or 1), t.rect.left))
    return " ".join(t.text for t in ordered)


def _v_overlap(a: Rect, b: Rect) -> float:
    inter = min(a.bottom, b.bottom) - max(a.top, b.top)
    return max(0, inter) / max(1, min(a.height, b.height))


def _leads_text(r: Rect, texts: Sequence[TextSpan], unit: float) -> bool:
    """True when text starts just right of ``r`` on the same row (list item's leading icon)."""
    return any(_v_overlap(r, t.rect) >= 0.3 and 0 <= t.rect.left - r.right <= 32 * unit and t.rect.width > r.width
               and t.rect.height < r.height for t in texts)  # a title as tall as the icon: app bar, not a row


def _touch_target(r: Rect, side: int, W: int, H: int) -> Rect:
    c = r.center
    half = side // 2
    return Rect(max(0, c.x - half), max(0, c.y - half), min(W, c.x - half + side), min(H, c.y - half + side))


def _checked_state(kind: ElementKind, crop: np.ndarray | None) -> bool | None:
    """On/off from pixels: a saturated (accent-coloured) switch or box is on."""
    if crop is None or crop.size == 0 or kind not in (ElementKind.SWITCH, ElementKind.CHECK_BOX, ElementKind.RADIO_GROUP):
        return None
    c = crop.reshape(-1, 3).astype(np.int16)
    sat = c.max(axis=1) - c.min(axis=1)
    return bool((sat > 60).mean() > 0.12)


def build_elements(
    image: np.ndarray,
    detections: Sequence[Detection],
    texts: Sequence[TextSpan],
    *,
    icons: IconClassifier | None = None,
    icon_min_confidence: float = 0.45,
) -> tuple[list[Element], dict[str, int]]:
    """Detections + OCR spans -> elements (provisional ids ``v1..``) and counters for logs."""
    H, W = image.shape[:2]
    unit = W / 411.0
    widgets = [d for d in detections if d.kind not in (ElementKind.STATUS_BAR, ElementKind.NAVIGATION_BAR)]
    bars = [d for d in detections if d.kind in (ElementKind.STATUS_BAR, ElementKind.NAVIGATION_BAR)]
    owner = _text_owners(widgets, texts)  # 1. text inside widgets
    inner: dict[int, list[TextSpan]] = {}
    for ti, wi in owner.items():
        inner.setdefault(wi, []).append(texts[ti])
    free = [t for ti, t in enumerate(texts) if ti not in owner]
    labels, beside = _proximity_labels(widgets, inner, free, W, unit)  # 2. text-less widgets: the words near them
    # 3. icon labels for buttons still unnamed, and for icons only named by the words beside
    # them: a recognised glyph says what it does (the back arrow left of a page title is
    # "back", not the title)
    unnamed = [wi for wi, d in enumerate(widgets) if d.kind in (ElementKind.BUTTON, ElementKind.IMAGE) and wi not in inner
               and (wi not in labels or wi in beside) and d.rect.width <= 96 * unit and d.rect.height <= 96 * unit]
    icon_labels = _icon_labels(image, widgets, unnamed, icons, icon_min_confidence)
    elements: list[Element] = []
    for wi, d in enumerate(widgets):
        label = icon_labels[wi] if wi in beside and wi in icon_labels else labels.get(wi) or icon_labels.get(wi, "")
        elements.append(_widget_element(f"v{len(elements) + 1}", image, d, _join(inner.get(wi, [])), label,
                                        wi in icon_labels, free, unit))
    for d in bars:
        covered = [t for t in free if d.rect.contains(t.rect.center)]
        elements.append(Element(id=f"v{len(elements) + 1}", kind=d.kind, rect=d.rect, text=_join(covered) if d.kind is ElementKind.STATUS_BAR else "",
                                source=ElementSource.DETECTOR, confidence=d.confidence))
    for t in free:
        if any(d.kind is ElementKind.NAVIGATION_BAR and d.rect.contains(t.rect.center) for d in bars):
            continue  # OCR reading the home button's circle as "O"
        elements.append(Element(id=f"v{len(elements) + 1}", kind=ElementKind.TEXT, rect=t.rect, text=t.text,
                                source=ElementSource.OCR, confidence=t.confidence))
    stats = {"widgets": len(widgets), "texts_inside": len(owner), "proximity_labels": len(labels), "icon_labels": len(icon_labels)}
    return elements, stats


def _text_owners(widgets: Sequence[Detection], texts: Sequence[TextSpan]) -> dict[int, int]:
    """Span index -> the widget it lies in (the smallest containing one; an image does not
    own text that fills most of it)."""
    owner: dict[int, int] = {}
    for ti, t in enumerate(texts):
        c = t.rect.center
        best, best_area = -1, None
        for wi, d in enumerate(widgets):
            if d.rect.contains(c) and (best_area is None or d.rect.area < best_area):
                if d.kind in (ElementKind.IMAGE,) and t.rect.area > 0.5 * d.rect.area:
                    continue
                best, best_area = wi, d.rect.area
        if best >= 0:
            owner[ti] = best
    return owner


def _proximity_labels(widgets: Sequence[Detection], inner: dict[int, list[TextSpan]], free: Sequence[TextSpan],
                      W: int, unit: float) -> tuple[dict[int, str], set[int]]:
    """Labels for text-less widgets from the free text near them, and which of those labels
    came from beside the widget (a bar's title, a row's text) rather than under or above it."""
    labels: dict[int, str] = {}
    beside: set[int] = set()
    for wi, d in enumerate(widgets):
        if wi in inner or d.kind not in _NEEDS_LABEL:
            continue
        r = d.rect
        best_t, best_dist, best_beside = None, None, False
        for t in free:
            same_row = _v_overlap(r, t.rect) >= 0.4
            if same_row:  # same row: left or right neighbour
                gap = t.rect.left - r.right if t.rect.left >= r.right else r.left - t.rect.right
                limit = 0.75 * W if d.kind in (ElementKind.SWITCH, ElementKind.CHECK_BOX, ElementKind.RADIO_GROUP, ElementKind.SEEK_BAR) else 24 * unit
            elif 0 <= t.rect.top - r.bottom <= 16 * unit and abs(t.rect.center.x - r.center.x) < max(r.width, t.rect.width) * 0.6:
                gap = t.rect.top - r.bottom  # caption under an icon (launcher, bottom tabs)
                limit = 16 * unit
            elif d.kind in (ElementKind.SEEK_BAR, ElementKind.EDIT_TEXT, ElementKind.SPINNER) and 0 <= r.top - t.rect.bottom <= 24 * unit and abs(t.rect.left - r.left) < 32 * unit:
                gap = r.top - t.rect.bottom  # a field's title above it
                limit = 24 * unit
            else:
                continue
            if gap < -4 or gap > limit:
                continue
            score = (int(gap // (48 * unit)), t.rect.top)  # near first, then the row's title line
            if best_dist is None or score < best_dist:
                best_t, best_dist, best_beside = t, score, same_row
        if best_t is not None:
            labels[wi] = best_t.text
            if best_beside and d.kind in (ElementKind.BUTTON, ElementKind.IMAGE):
                beside.add(wi)
    return labels, beside


def _icon_labels(image: np.ndarray, widgets: Sequence[Detection], unnamed: Sequence[int], icons: IconClassifier | None,
                 min_confidence: float) -> dict[int, str]:
    """Widget index -> the icon classifier's label, where it is confident enough."""
    out: dict[int, str] = {}
    if icons is None or not unnamed:
        return out
    crops = [np.ascontiguousarray(image[widgets[wi].rect.top : widgets[wi].rect.bottom, widgets[wi].rect.left : widgets[wi].rect.right]) for wi in unnamed]
    try:
        guesses = icons.classify(crops)
    except Exception as exc:  # a broken optional model must not break the parse
        log.warning("icon classifier failed: %s", exc)
        guesses = []
    for wi, g in zip(unnamed, guesses, strict=False):
        if g.label and g.confidence >= min_confidence:
            out[wi] = g.label
    return out


def _widget_element(eid: str, image: np.ndarray, d: Detection, text: str, label: str, has_icon_label: bool,
                    free: Sequence[TextSpan], unit: float) -> Element:
    """One detected widget as an element: its kind settled (a row's leading icon is an image,
    a small recognised glyph a button), its on/off state, and a glyph grown to its touch target."""
    H, W = image.shape[:2]
    r = d.rect
    kind = d.kind
    leading = kind is ElementKind.BUTTON and not text and _leads_text(r, free, unit)
    if leading:
        kind = ElementKind.IMAGE  # a row's leading icon or avatar: decoration, the row is the target
    elif kind is ElementKind.IMAGE and has_icon_label and r.width <= 56 * unit:
        kind = ElementKind.BUTTON  # a small icon with a recognisable function acts as a button
    crop = image[r.top : r.bottom, r.left : r.right]
    checked = _checked_state(kind, crop)
    if kind is ElementKind.BUTTON and not text and max(r.width, r.height) < 44 * unit and not leading:
        r = _touch_target(r, round(48 * unit), W, H)  # icon glyph -> its 48 dp touch target
    return Element(id=eid, kind=kind, rect=r, text=text, label=label, clickable=kind in _CLICKABLE,
                   checkable=checked is not None, checked=checked, source=ElementSource.DETECTOR, confidence=d.confidence)


def label_from_neighbours(elements: Sequence[Element], width: int) -> list[Element]:
    """Tree path helper: give text-less toggles and fields the text on their row."""
    unit = width / 411.0 if width else 1.0
    reach = int(300 * unit) + 5
    texts: GridIndex[Element] | None = None  # built when the first toggle asks (most screens have none)
    out = []
    for e in elements:
        if e.kind in (ElementKind.SWITCH, ElementKind.CHECK_BOX, ElementKind.RADIO_GROUP, ElementKind.SEEK_BAR) and not e.label and not (e.text and e.text not in ("ON", "OFF")):
            if texts is None:
                texts = GridIndex([t for t in elements if t.kind is ElementKind.TEXT and t.text], lambda t: t.rect)
            best, best_gap = None, None
            row = Rect(e.rect.left - reach, e.rect.top, e.rect.right + reach, max(e.rect.bottom, e.rect.top + 1))
            for t in texts.overlapping(row):
                if _v_overlap(e.rect, t.rect) < 0.4:
                    continue
                gap = e.rect.left - t.rect.right if t.rect.right <= e.rect.left else t.rect.left - e.rect.right
                if -4 <= gap <= 300 * unit and (best_gap is None or gap < best_gap):
                    best, best_gap = t, gap
            if best is not None:
                e = replace(e, label=best.text)
        out.append(e)
    return out
