"""Which parts a list row or tile found in the pixels stands for, and where it is tapped:
specified on elements laid out by hand (``vision.row_parts``)."""

from __future__ import annotations

from dataclasses import replace

from vision.geometry import Point, Rect
from vision.row_parts import folded, tap_point
from vision.types import Element, ElementKind, ElementSource

PIX = ElementSource.DETECTOR


def _row(eid: str, rect: Rect, label: str, *, cls: str = "list_item", source: ElementSource = PIX) -> Element:
    return Element(eid, ElementKind.CONTAINER, rect, label=label, class_name=cls, clickable=True, source=source)


def _text(eid: str, rect: Rect, text: str, source: ElementSource = ElementSource.OCR) -> Element:
    return Element(eid, ElementKind.TEXT, rect, text=text, source=source)


def _glyph(eid: str, rect: Rect, label: str, kind: ElementKind = ElementKind.BUTTON) -> Element:
    return Element(eid, kind, rect, label=label, source=PIX)


def test_a_rows_title_lines_the_icon_named_after_it_and_its_chevron_are_the_row():
    row = _row("r", Rect(40, 1000, 1040, 1200), "Wallpaper & personal- ization")
    parts = [
        _glyph("lead", Rect(70, 1050, 170, 1150), "Wallpaper & personal-", ElementKind.IMAGE),  # named by the words beside it
        _text("t1", Rect(190, 1020, 840, 1090), "Wallpaper & personal-"),
        _text("t2", Rect(190, 1100, 400, 1170), "ization"),  # the title wrapped onto a second line
        _glyph("chev", Rect(925, 1040, 1050, 1160), "next"),
    ]
    assert folded([row, *parts]) == {"lead", "t1", "t2", "chev"}


def test_what_a_row_holds_besides_its_title_stays_a_choice_of_its_own():
    row = _row("r", Rect(0, 600, 1080, 730), "Turn On Mic · Enter ID")
    kept = [
        _glyph("switch", Rect(916, 628, 1042, 704), "Turn On Mic", ElementKind.SWITCH),  # set, not opened
        _text("sub", Rect(190, 690, 600, 720), "Mic for meetings"),  # a line of its own words
        _text("value", Rect(600, 640, 900, 690), "Enter ID"),  # a value may be a field, or the next card
        _glyph("info", Rect(800, 620, 880, 700), "info"),  # an icon with a name of its own
        _glyph("near", Rect(40, 620, 120, 700), "icon left of 'Turn On Mic'"),  # a description, not a name
    ]
    title = _text("t", Rect(190, 640, 500, 690), "Turn On Mic")
    assert folded([row, title, *kept]) == {"t"}


def test_an_app_bar_taken_for_a_row_keeps_its_back_and_search_buttons():
    bar = _row("bar", Rect(0, 82, 1080, 260), "Offline games")
    back, search = _glyph("back", Rect(14, 108, 140, 234), "back"), _glyph("search", Rect(950, 107, 1076, 233), "search")
    assert folded([bar, back, _text("t", Rect(186, 132, 588, 212), "Offline games"), search]) == {"t"}


def test_a_tile_stands_for_its_title_only():
    tile = _row("k", Rect(40, 900, 1040, 1400), "Plan your day · Set reminder · Done", cls="tile")
    done = _text("done", Rect(817, 1253, 989, 1329), "Done")
    remind = Element("btn", ElementKind.BUTTON, Rect(98, 1238, 528, 1340), text="Set reminder", source=PIX)
    title = _text("title", Rect(100, 950, 600, 1020), "Plan your day")
    assert folded([tile, done, remind, title]) == {"title"}


def test_the_trees_own_list_items_and_covered_rows_fold_nothing():
    tree_row = _row("r", Rect(0, 0, 1080, 200), "Display", source=ElementSource.HIERARCHY)
    words = _text("t", Rect(60, 60, 300, 120), "Display", source=ElementSource.HIERARCHY)
    assert folded([tree_row, words]) == frozenset()
    hidden = replace(_row("p", Rect(0, 0, 1080, 200), "Display"), covered=True)
    assert folded([hidden, _text("t", Rect(60, 60, 300, 120), "Display")]) == frozenset()


def test_a_row_is_tapped_on_its_title_a_tile_and_anything_else_in_the_middle():
    row = _row("r", Rect(30, 700, 1040, 900), "Refresh rate · Default")
    title = _text("t", Rect(60, 760, 360, 820), "Refresh rate")
    value = _text("v", Rect(800, 760, 1000, 820), "Default")
    assert tap_point(row, [row, value, title]) == title.rect.center
    tile = _row("k", Rect(450, 1285, 995, 1455), "Small", cls="tile")
    assert tap_point(tile, [tile, _text("s", Rect(480, 1300, 600, 1350), "Small")]) == tile.rect.center
    assert tap_point(title, [row, title]) == title.rect.center
    lost = _row("r2", Rect(30, 1000, 1040, 1200), "Screen timeout")  # its title's text not in the parse
    assert tap_point(lost, [lost]) == Point(535, 1100)
