"""Fusion of the accessibility tree with what the pixels show.

The tree is the backbone (exact boxes, states, ids).  Vision then fills gaps: tree
elements without any words get OCR text found inside them or the icon label of a
detection at the same place; visible widgets and text with no tree counterpart are
added.  A vision element that repeats a tree node (the same words, overlapping boxes;
or the same place with no words) is merged into that node, which keeps its id, so one
control is never listed twice.  Where the two disagree, a ``Disagreement`` records it:
``missing_in_tree`` (seen, not in the dump, not covered by a dialog), ``text_mismatch`` (the dump's text is not what OCR reads) and
``not_visible`` (a text node over a blank, uniform area: stale or hidden).  Pure
functions over elements; the image is only used to measure blankness.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np
from rapidfuzz import fuzz

from vision.geometry import Rect
from vision.types import Disagreement, Element, ElementKind, ElementSource, TextSpan

_SKIP_ADD = {ElementKind.STATUS_BAR, ElementKind.NAVIGATION_BAR, ElementKind.CONTAINER, ElementKind.UNKNOWN}


def _norm(s: str) -> str:
    return " ".join(s.lower().split())


def _overlap(a: Rect, b: Rect) -> float:
    """Intersection over the smaller box (1.0 when one box holds the other)."""
    inter = a.intersection(b)
    return inter.area / max(1, min(a.area, b.area)) if inter else 0.0


def _blank(image: np.ndarray | None, r: Rect) -> bool:
    if image is None or r.is_empty():
        return False
    crop = image[r.top : r.bottom, r.left : r.right]
    return crop.size > 0 and float(crop.reshape(-1, 3).std(axis=0).max()) < 2.0


def _words(e: Element) -> list[str]:
    """The normalised names a tree node goes by: its text, its label and the label's parts."""
    out = [_norm(e.text), _norm(e.label)] + [_norm(p) for p in e.label.split(" · ")]
    return [w for w in out if w]


def same_words(a: str, names: Sequence[str]) -> bool:
    """Whether the words ``a`` (normalised) name the same thing as one of ``names``."""
    if not a:
        return False
    for n in names:
        if a == n or fuzz.ratio(a, n) >= 85:
            return True
        short, long_ = (a, n) if len(a) <= len(n) else (n, a)
        if len(short) >= 4 and short in long_ and len(short) >= 0.5 * len(long_):
            return True
    return False


def duplicate_of(v: Element, tree: Sequence[Element]) -> Element | None:
    """The tree node a vision element repeats: the same words over overlapping boxes, or (for
    a wordless element) a non-container node covering most of it."""
    name = _norm(v.text or v.label)
    best: Element | None = None
    best_score = 0.0
    for e in tree:
        inter = e.rect.intersection(v.rect)
        if inter is None:
            continue
        ov = _overlap(e.rect, v.rect)
        if name and same_words(name, _words(e)):
            score = 1.0 + ov
        elif not v.text and e.kind is not ElementKind.CONTAINER and ov >= 0.5:
            score = ov
        else:
            continue
        if score > best_score:
            best, best_score = e, score
    return best


def fuse(
    tree: Sequence[Element],
    vision: Sequence[Element],
    texts: Sequence[TextSpan],
    image: np.ndarray | None = None,
    *,
    add_iou: float = 0.3,
) -> tuple[list[Element], list[Disagreement]]:
    """Tree elements improved by vision, plus vision-only elements; and the disagreements."""
    out: list[Element] = []
    notes: list[Disagreement] = []
    for e in tree:
        inside = [t for t in texts if e.rect.contains(t.rect.center)]
        seen = " ".join(t.text for t in sorted(inside, key=lambda t: (t.rect.top, t.rect.left)))
        if not e.text and not e.label:
            filled = None
            if seen and e.kind not in (ElementKind.CONTAINER,) and e.rect.height < 0.2 * max(1, (image.shape[0] if image is not None else 10**6)):
                filled = replace(e, label=seen, source=ElementSource.FUSED)
            else:
                match = max((v for v in vision if v.label and v.rect.iou(e.rect) > 0.5), key=lambda v: v.rect.iou(e.rect), default=None)
                if match is not None:
                    filled = replace(e, label=match.label, source=ElementSource.FUSED)
            if filled is not None:
                e = filled
        elif e.text and e.kind in (ElementKind.TEXT, ElementKind.BUTTON) and not e.password:
            if inside:
                if fuzz.partial_ratio(_norm(e.text), _norm(seen)) < 60:
                    notes.append(Disagreement("text_mismatch", e.rect, f"tree says {e.text!r}, screen shows {seen!r}", e.id))
            elif _blank(image, e.rect):
                notes.append(Disagreement("not_visible", e.rect, f"tree text {e.text!r} over a blank area", e.id))
        out.append(e)
    tree_text = [_norm(e.text or e.label) for e in tree if e.text or e.label]
    tree_kinds = {e.kind for e in tree}
    bars = [v for v in vision if v.kind in (ElementKind.STATUS_BAR, ElementKind.NAVIGATION_BAR) and v.kind not in tree_kinds]
    out.extend(bars)  # dumps never include the system bars; the pixels do
    for v in vision:
        if v.kind in _SKIP_ADD:
            continue
        if any(b.rect.contains(v.rect.center) for b in bars):
            continue  # clock, battery and navigation glyphs belong to their bar
        twin = duplicate_of(v, tree)
        if twin is not None:
            i = next(k for k, o in enumerate(out) if o.id == twin.id)
            if not out[i].text and not out[i].label and (v.text or v.label):
                out[i] = replace(out[i], label=v.text or v.label, source=ElementSource.FUSED)
            continue  # the same control: one element, the tree's id
        if any(_overlap(e.rect, v.rect) >= 0.5 for e in tree if e.kind is not ElementKind.CONTAINER):
            continue
        if any(e.clickable and e.rect.contains_rect(v.rect) for e in tree):
            continue  # a part of something tappable the tree already has (a row's icon)
        if v.kind is ElementKind.TEXT and any(_norm(v.text) and (_norm(v.text) in t or fuzz.ratio(_norm(v.text), t) > 85) for t in tree_text):
            continue  # the tree has this text, just with a different box
        out.append(replace(v, source=ElementSource.FUSED if v.source is ElementSource.DETECTOR else v.source))
        if v.covered:
            continue  # under a dialog: not a gap in the tree, the dump just holds the top window
        what = f"{v.kind.value} {v.display_name!r}".strip()
        notes.append(Disagreement("missing_in_tree", v.rect, f"{what} is visible but absent from the accessibility tree", v.id))
    return out, notes
