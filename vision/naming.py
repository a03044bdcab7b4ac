"""A name for every element a goal might point at: what it is, where, and what is beside it.

The parse names most elements by their own words, by the words beside them
(``vision.grouping``), by the icon classifier or by the tree's description.  What is
left — a glyph the classifier did not know, a picture, a switch with no words near —
would reach a model as a bare "button", and nothing in a goal can point at that.
``name_unnamed`` gives each such element a description a person would use:

* its kind in plain words ("icon", "picture", "switch", "text field" …);
* in the top or bottom band of the screen (app bars, bottom bars), its place there
  ("icon at top right");
* elsewhere, its nearest worded neighbour on its line or just under or over it
  ("icon right of 'Focus mode'", "picture above 'PopCap'");
* else its place on the screen ("picture at middle left").

Descriptions are put in ``Element.label`` and always read ``<kind> <relation> …``, so
``is_description`` tells them from a real name (a matcher scoring a goal's words should
not take the neighbour's words in "icon right of 'Wi-Fi'" for the icon's own).  Pure
function over elements; never renames an element that has words of its own.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from vision.geometry import Rect, Size
from vision.types import Element, ElementKind, ElementSource

EDGE_BAND = 0.13  # the top and bottom bands of the screen (app bars, bottom bars), as a share of its height
WORDS = 18  # a neighbour's words are cut to this many characters

_KIND = {
    ElementKind.SWITCH: "switch", ElementKind.CHECK_BOX: "checkbox", ElementKind.RADIO_GROUP: "radio button",
    ElementKind.EDIT_TEXT: "text field", ElementKind.SEEK_BAR: "slider", ElementKind.RATING_BAR: "rating",
    ElementKind.SPINNER: "dropdown", ElementKind.PAGE_INDICATOR: "page dots", ElementKind.CONTAINER: "area",
    ElementKind.UNKNOWN: "element",
}
_SKIP = (ElementKind.STATUS_BAR, ElementKind.NAVIGATION_BAR, ElementKind.TEXT)
_DESCRIPTION = re.compile(r"^(?:icon|picture|switch|checkbox|radio button|text field|slider|rating|dropdown|page dots|"
                          r"area|element) (?:at|left of|right of|above|below) ")


def is_description(label: str) -> bool:
    """True when ``label`` is a description made here, not a name the element carries."""
    return bool(_DESCRIPTION.match(label or ""))


def kind_word(e: Element, size: Size) -> str:
    if e.kind in _KIND:
        return _KIND[e.kind]
    unit = size.width / 411.0
    small = max(e.rect.width, e.rect.height) <= 72 * unit
    return "icon" if small or e.kind is ElementKind.BUTTON else "picture"


def place(r: Rect, size: Size) -> str:
    """"top left" … "bottom right", by thirds of the screen (the middle third is "middle")."""
    c = r.center
    v = "top" if c.y < size.height / 3 else "bottom" if c.y > 2 * size.height / 3 else "middle"
    h = "left" if c.x < size.width / 3 else "right" if c.x > 2 * size.width / 3 else ""
    return f"{v} {h}".strip() if h or v != "middle" else "middle"


def _clip(words: str) -> str:
    words = " ".join(words.replace("'", "’").split())
    return words if len(words) <= WORDS else words[: WORDS - 1].rstrip() + "…"


def _overlap(a: int, b: int, c: int, d: int) -> float:
    return max(0, min(b, d) - max(a, c)) / max(1, min(b - a, d - c))


def neighbour(e: Element, worded: Sequence[Element], size: Size) -> tuple[str, str] | None:
    """``(relation, words)`` of the nearest worded element on ``e``'s line (left or right),
    else just under or over it; None when none is near."""
    unit = size.width / 411.0
    r = e.rect
    best: tuple[float, str, str] | None = None
    for o in worded:
        q = o.rect
        if o is e or q.contains_rect(r) or r.contains_rect(q):
            continue
        words = o.text or o.label
        if _overlap(r.top, r.bottom, q.top, q.bottom) >= 0.4:
            gap, rel = (q.left - r.right, "left of") if q.left >= r.right - 4 else (r.left - q.right, "right of")
            limit = 0.5 * size.width
        elif _overlap(r.left, r.right, q.left, q.right) >= 0.3 or abs(q.center.x - r.center.x) < 0.6 * max(r.width, q.width):
            gap, rel = (q.top - r.bottom, "above") if q.top >= r.bottom - 4 else (r.top - q.bottom, "below")
            limit = 48 * unit
        else:
            continue
        if gap < -4 or gap > limit:
            continue
        if best is None or gap < best[0]:
            best = (gap, rel, words)
    return (best[1], _clip(best[2])) if best is not None else None


def describe_element(e: Element, worded: Sequence[Element], size: Size) -> str:
    kind = kind_word(e, size)
    c = e.rect.center
    if c.y < EDGE_BAND * size.height or c.y > (1 - EDGE_BAND) * size.height:
        return f"{kind} at {place(e.rect, size)}"
    near = neighbour(e, worded, size)
    if near is not None:
        return f"{kind} {near[0]} '{near[1]}'"
    return f"{kind} at {place(e.rect, size)}"


def _may_be_tapped(e: Element) -> bool:
    """Pixels cannot say what takes a tap, so every element found in them may; the tree can."""
    if e.source not in (ElementSource.HIERARCHY, ElementSource.FUSED):
        return True
    return e.clickable or e.checkable or e.kind is ElementKind.EDIT_TEXT


def name_unnamed(elements: Sequence[Element], size: Size) -> list[Element]:
    """``elements`` with a described ``label`` for each one that has no name of its own."""
    worded = [e for e in elements if (e.text or (e.label and not is_description(e.label))) and not e.covered
              and e.kind not in (ElementKind.STATUS_BAR, ElementKind.NAVIGATION_BAR, ElementKind.CONTAINER)]
    out = []
    for e in elements:
        if e.kind not in _SKIP and not e.display_name and not e.covered and _may_be_tapped(e):
            e = replace(e, label=describe_element(e, worded, size))
        out.append(e)
    return out
