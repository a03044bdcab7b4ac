"""Fusion of the accessibility tree with what the pixels show.

The tree is the backbone (exact boxes, states, ids).  Vision then fills gaps: tree
elements without any words get OCR text found inside them or the icon label of a
detection at the same place; visible widgets and text with no tree counterpart are
added.  A vision element that repeats a tree node (the same words, overlapping boxes;
or the same place with no words) is merged into that node, which keeps its id, so one
control is never listed twice.  Where the two disagree, a ``Disagreement`` records it:
``missing_in_tree`` (seen, not in the dump, not covered by a dialog), ``text_mismatch`` (the
dump's text is not what OCR reads) and ``not_visible`` (a text node over a blank, uniform area: stale or hidden).  Pure
functions over elements; the image is only used to measure blankness.  Neighbourhood
questions go through a spatial index, so large trees fuse in near-linear time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np
from rapidfuzz import fuzz, process

from vision.geometry import Rect
from vision.spatial import GridIndex
from vision.tree_text import FEW_BOXES, uniform_boxes
from vision.types import Disagreement, Element, ElementKind, ElementSource, TextSpan

_SKIP_ADD = {ElementKind.STATUS_BAR, ElementKind.NAVIGATION_BAR, ElementKind.CONTAINER, ElementKind.UNKNOWN}


def _norm(s: str) -> str:
    return " ".join(s.lower().split())


def _overlap(a: Rect, b: Rect) -> float:
    """Intersection over the smaller box (1.0 when one box holds the other)."""
    inter = a.intersection(b)
    return inter.area / max(1, min(a.area, b.area)) if inter else 0.0


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
    return _duplicate(v, tree, _words)


def _duplicate(v: Element, tree: Sequence[Element], words_of: Callable[[Element], list[str]]) -> Element | None:
    """``duplicate_of`` with the tree nodes' names from ``words_of`` (worked out once per node
    when many vision elements ask about the same nodes)."""
    name = _norm(v.text or v.label)
    best: Element | None = None
    best_score = 0.0
    for e in tree:
        inter = e.rect.intersection(v.rect)
        if inter is None:
            continue
        ov = inter.area / max(1, min(e.rect.area, v.rect.area))  # _overlap, from the intersection in hand
        if name and same_words(name, words_of(e)):
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
    """Tree elements improved by vision, plus vision-only elements; and the disagreements.

    Near-linear in the number of elements: every neighbourhood question goes through a
    spatial index (``vision.spatial``)."""
    notes: list[Disagreement] = []
    span_index = GridIndex(list(texts), lambda t: t.rect)
    labelled = GridIndex([v for v in vision if v.label], lambda v: v.rect)
    screen_h = image.shape[0] if image is not None else 10**6
    insides = [span_index.centred_in(e.rect) for e in tree]
    # only a worded node with no text read inside it is asked whether it lies over a blank area
    unread = {e.id for e, inside in zip(tree, insides, strict=True) if not inside and _checks_words(e)}
    blank = _blank_worded(image, tree, unread)
    out = [_improved(e, inside, labelled, e.id in blank, screen_h, notes) for e, inside in zip(tree, insides, strict=True)]
    tree_kinds = {e.kind for e in tree}
    bars = [v for v in vision if v.kind in (ElementKind.STATUS_BAR, ElementKind.NAVIGATION_BAR) and v.kind not in tree_kinds]
    out.extend(bars)  # dumps never include the system bars; the pixels do
    _add_vision(out, tree, [v for v in vision if v.kind not in _SKIP_ADD], bars, notes)
    return out, notes


def _blank_worded(image: np.ndarray | None, tree: Sequence[Element], asked: set[str]) -> set[str]:
    """Ids (of those ``asked``) of the worded tree elements drawn over one flat colour, all
    measured at once, the way measuring every worded element would measure them."""
    if image is None or not asked:
        return set()
    worded = [e for e in tree if e.text and not e.rect.is_empty()]
    wanted = [e for e in worded if e.id in asked]
    many = len(worded) > FEW_BOXES
    flags = uniform_boxes(image, [e.rect for e in wanted], empty=False, summed=many)
    return {e.id for e, flat in zip(wanted, flags, strict=True) if flat}


def _checks_words(e: Element) -> bool:
    """Whether a tree node's words are compared with what the pixels show."""
    return bool(e.text) and e.kind in (ElementKind.TEXT, ElementKind.BUTTON) and not e.password


def _improved(e: Element, inside: Sequence[TextSpan], labelled: GridIndex[Element], blank: bool,
              screen_h: int, notes: list[Disagreement]) -> Element:
    """A tree element with a label read from the pixels when it had none (``inside``: the
    spans centred in its box); a note when its words and the pixels disagree."""
    seen = " ".join(t.text for t in sorted(inside, key=lambda t: (t.rect.top, t.rect.left)))
    if not e.text and not e.label:
        if seen and e.kind is not ElementKind.CONTAINER and e.rect.height < 0.2 * max(1, screen_h):
            return replace(e, label=seen, source=ElementSource.FUSED)
        match = max((v for v in labelled.overlapping(e.rect) if v.rect.iou(e.rect) > 0.5), key=lambda v: v.rect.iou(e.rect), default=None)
        return replace(e, label=match.label, source=ElementSource.FUSED) if match is not None else e
    if _checks_words(e):
        if inside:
            if fuzz.partial_ratio(_norm(e.text), _norm(seen)) < 60:
                notes.append(Disagreement("text_mismatch", e.rect, f"tree says {e.text!r}, screen shows {seen!r}", e.id))
        elif blank:
            notes.append(Disagreement("not_visible", e.rect, f"tree text {e.text!r} over a blank area", e.id))
    return e


def _add_vision(out: list[Element], tree: Sequence[Element], vision: Sequence[Element], bars: Sequence[Element],
                notes: list[Disagreement]) -> None:
    """Append the vision elements the tree lacks (noting each), and lend tree twins their names."""
    near = GridIndex(list(tree), lambda e: e.rect)
    position: dict[str, int] = {}
    for k, o in enumerate(out):
        position.setdefault(o.id, k)
    tree_text = [t for t in (_norm(e.text or e.label) for e in tree if e.text or e.label) if t]
    joined = "\x00".join(tree_text)
    names: dict[int, list[str]] = {}

    def words_of(e: Element) -> list[str]:
        found = names.get(id(e))
        if found is None:
            found = names[id(e)] = _words(e)
        return found

    for v in vision:
        if any(b.rect.contains(v.rect.center) for b in bars):
            continue  # clock, battery and navigation glyphs belong to their bar
        around = near.overlapping(v.rect)
        name = _norm(v.text)
        if name and any(same_words(name, words_of(e)) for e in around):
            continue  # it repeats a worded tree node, which keeps its words: the twin below, found sooner
        twin = _duplicate(v, around, words_of)
        if twin is not None:
            i = position[twin.id]
            if not out[i].text and not out[i].label and (v.text or v.label):
                out[i] = replace(out[i], label=v.text or v.label, source=ElementSource.FUSED)
            continue  # the same control: one element, the tree's id
        if any(_overlap(e.rect, v.rect) >= 0.5 for e in around if e.kind is not ElementKind.CONTAINER):
            continue
        if any(e.clickable and e.rect.contains_rect(v.rect) for e in around):
            continue  # a part of something tappable the tree already has (a row's icon)
        if v.kind is ElementKind.TEXT and _tree_has_text(_norm(v.text), joined, tree_text):
            continue  # the tree has this text, just with a different box
        out.append(replace(v, source=ElementSource.FUSED if v.source is ElementSource.DETECTOR else v.source))
        if v.covered:
            continue  # under a dialog: not a gap in the tree, the dump just holds the top window
        what = f"{v.kind.value} {v.display_name!r}".strip()
        notes.append(Disagreement("missing_in_tree", v.rect, f"{what} is visible but absent from the accessibility tree", v.id))


def _tree_has_text(word: str, joined: str, tree_text: Sequence[str]) -> bool:
    """``word`` is part of some tree text, or close to one (ratio above 85)."""
    if not word:
        return False
    if word in joined:  # the separator is never part of a word, so a hit lies inside one tree text
        return True
    best = process.extractOne(word, tree_text, scorer=fuzz.ratio, score_cutoff=85)
    return best is not None and best[1] > 85
