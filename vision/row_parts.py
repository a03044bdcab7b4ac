"""Which elements a whole list row or tile found in the pixels already stands for.

``vision.rows`` and ``vision.tiles`` add one tappable element per list row and per tile,
named by its title (and, for a row, the value at its right end: "Bluetooth · Off").  The
parts they were made from stay in the parse — the title's text, the wrapped second line
of a long title, the value, the leading icon that the words beside it named after the
title, the chevron at the row's end — so a list of choices built from every element would
offer each row three or four times under the same words.  ``folded`` says which parts
add nothing a person would see as another target:

* a part whose own words (its text, or a name it was given, never a made-up description
  such as "icon right of 'Wi-Fi'") are a run of the row's or tile's title — the row is
  named by them and a tap on it lands on them (``tap_point``);
* on a list row, a wordless glyph at its right end that the icon classifier reads as an
  arrow pointing on ("next", "forward"): the chevron that says the row opens a page.

Switches, check boxes, radio buttons, sliders and fields inside a row are never folded
(they are set, not opened), nor a part with words of its own (a line under the title, a
"Done" button on a card), nor the value at a row's end (what looked like a row's value may
be a field, or the next card of two side by side), nor an icon with a name of its own (an
app bar's back button before a title is a separate action).  Only rows and tiles from the pixels are looked at:
a tree's own list items leave their children to the tree's clickable flags.

``tap_point`` says where to tap such a row: on its title's line.  Anywhere in a row opens
it, but a point on its words also lands on them when only the words are what a person
meant, and on the right card when what looked like one row was two cards side by side.
A tile is tapped in its middle (a plate is compact; its words may be one of several).  Pure functions over elements; nothing is removed, callers leave the folded ids out.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from vision.geometry import Point
from vision.naming import is_description
from vision.types import Element, ElementKind, ElementSource

#: Icon classifier labels of a glyph pointing onwards: a row's chevron.
FORWARD = frozenset({"next", "forward"})
#: A chevron sits in this right share of its row.
END_SHARE = 0.25

_CONTAINERS = ("list_item", "tile")
_SET_NOT_OPENED = (ElementKind.SWITCH, ElementKind.CHECK_BOX, ElementKind.RADIO_GROUP, ElementKind.EDIT_TEXT,
                   ElementKind.SEEK_BAR, ElementKind.RATING_BAR, ElementKind.SPINNER)
_WORD = re.compile(r"\w+")


def _words(s: str) -> list[str]:
    return _WORD.findall(s.casefold())


def _run_of(part: list[str], whole: list[str]) -> bool:
    """True when ``part`` is a non-empty contiguous run of ``whole``."""
    n = len(part)
    return n > 0 and any(whole[i : i + n] == part for i in range(len(whole) - n + 1))


def own_words(e: Element) -> str:
    """The element's words: its text, else a name it carries (not a made-up description)."""
    if e.text:
        return e.text
    return "" if is_description(e.label) else e.label


def is_pixel_group(e: Element) -> bool:
    """A list row or tile found in the pixels (``vision.rows``, ``vision.tiles``, ``vision.blocks``)."""
    return e.kind is ElementKind.CONTAINER and e.class_name in _CONTAINERS and e.source is ElementSource.DETECTOR


def folded(elements: Sequence[Element]) -> frozenset[str]:
    """Ids of the elements a pixel row or tile among ``elements`` already stands for."""
    groups = [g for g in elements if is_pixel_group(g) and not g.covered and g.label]
    if not groups:
        return frozenset()
    out: set[str] = set()
    for g in groups:
        title = _words(g.label.partition(" · ")[0])
        end = g.rect.right - END_SHARE * g.rect.width
        for e in elements:
            if e is g or e.id in out or e.covered or e.kind is ElementKind.CONTAINER or e.kind in _SET_NOT_OPENED:
                continue
            if e.checkable or not g.rect.contains(e.rect.center) or e.rect.area >= 0.8 * g.rect.area:
                continue
            words = _words(own_words(e))
            if words and _run_of(words, title):
                out.add(e.id)
            elif g.class_name == "list_item" and not e.text and e.label in FORWARD and e.rect.left >= end:
                out.add(e.id)
    return frozenset(out)


def tap_point(element: Element, elements: Sequence[Element]) -> Point:
    """Where a tap on ``element`` goes: for a list row found in the pixels, the middle of
    the line of its title inside it (the longest run of the title's words); else its centre."""
    if not is_pixel_group(element) or element.class_name != "list_item" or not element.label:
        return element.rect.center
    title = _words(element.label.partition(" · ")[0])
    best: Element | None = None
    best_len = 0
    for e in elements:
        if e is element or not e.text or e.covered or not element.rect.contains(e.rect.center):
            continue
        words = _words(e.text)
        if len(words) > best_len and _run_of(words, title):
            best, best_len = e, len(words)
    return best.rect.center if best is not None else element.rect.center
