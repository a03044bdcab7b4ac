"""Elements without words of their own are described by kind, place and neighbour."""

from __future__ import annotations

from vision.geometry import Rect, Size
from vision.naming import is_description, name_unnamed
from vision.types import Element, ElementKind, ElementSource

SIZE = Size(1080, 2400)


def _el(eid: str, kind: ElementKind, rect: Rect, *, text: str = "", label: str = "",
        source: ElementSource = ElementSource.DETECTOR, clickable: bool = False) -> Element:
    return Element(eid, kind, rect, text=text, label=label, source=source, clickable=clickable)


def _named(*elements: Element) -> dict[str, str]:
    return {e.id: e.label for e in name_unnamed(list(elements), SIZE)}


def test_an_unnamed_icon_is_named_by_the_words_on_its_line_and_the_side_it_is_on():
    words = _el("t", ElementKind.TEXT, Rect(100, 1000, 400, 1060), text="Focus mode", source=ElementSource.OCR)
    right = _el("b", ElementKind.BUTTON, Rect(460, 990, 540, 1070))
    left = _el("c", ElementKind.BUTTON, Rect(10, 990, 80, 1070))
    names = _named(words, right, left)
    assert names["b"] == "icon right of 'Focus mode'"
    assert names["c"] == "icon left of 'Focus mode'"
    assert is_description(names["b"]) and not is_description("Focus mode")


def test_an_icon_over_a_caption_is_named_by_the_caption():
    icon = _el("i", ElementKind.BUTTON, Rect(100, 1200, 200, 1300))
    caption = _el("t", ElementKind.TEXT, Rect(90, 1310, 210, 1350), text="Top-up", source=ElementSource.OCR)
    assert _named(icon, caption)["i"] == "icon above 'Top-up'"


def test_icons_in_the_app_bar_are_named_by_their_place_and_pictures_by_kind():
    gear = _el("g", ElementKind.BUTTON, Rect(950, 120, 1050, 220))
    photo = _el("p", ElementKind.IMAGE, Rect(100, 1000, 900, 1600))
    names = _named(gear, photo)
    assert names["g"] == "icon at top right"
    assert names["p"] == "picture at middle"


def test_named_elements_and_inert_tree_nodes_keep_what_they_have():
    named = _el("n", ElementKind.BUTTON, Rect(10, 10, 90, 90), label="search")
    worded = _el("w", ElementKind.BUTTON, Rect(10, 500, 300, 590), text="Sign out")
    inert = _el("x", ElementKind.IMAGE, Rect(10, 900, 90, 990), source=ElementSource.HIERARCHY)
    clickable = _el("y", ElementKind.IMAGE, Rect(10, 1000, 90, 1090), source=ElementSource.HIERARCHY, clickable=True)
    names = _named(named, worded, inert, clickable)
    assert names["n"] == "search" and names["w"] == "" and names["x"] == ""
    assert names["y"].startswith("icon at ")
