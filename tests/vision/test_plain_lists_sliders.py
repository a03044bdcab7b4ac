"""Plain lists and sliders from pixels (``vision.plain_lists``, ``vision.sliders``), on
screens the tests draw at 1080x2400: a menu's one-line entries are rows a reply may name,
a paragraph is not; a stepped slider offers each stop, a divider with a badge on it is no
slider."""

from __future__ import annotations

import pytest

from agent.structured import choosable, element_name
from tests.vision.drawn_pages import menu_page, slider_page
from vision.config import PipelineConfig
from vision.geometry import Rect
from vision.pipeline import ScreenParser
from vision.sliders import find_sliders
from vision.types import Element, ElementKind, ElementSource, Screen


@pytest.fixture(scope="module")
def parser() -> ScreenParser:
    return ScreenParser(PipelineConfig(mode="vision", remember_previous=False))


def test_a_menus_one_line_entries_are_rows_and_a_paragraph_is_not(parser):
    image, entries = menu_page()
    parse = parser.parse(Screen(image))
    rows = [e for e in choosable(parse) if e.class_name == "list_item"]
    assert sorted(element_name(r) for r in rows) == sorted(entries)
    for r in rows:
        box = entries[element_name(r)]
        assert box.contains(r.rect.center) and r.rect.height >= 100  # the whole entry, not the words' line
    assert not any(r.rect.top > 1400 for r in rows)  # the paragraph's lines stay text


def _knob(rect: Rect) -> Element:
    return Element("k", ElementKind.BUTTON, rect, source=ElementSource.DETECTOR)


def test_a_stepped_slider_offers_each_stop_and_marks_where_the_knob_is():
    image, stops, _ = slider_page()
    c = stops[3].center
    found = find_sliders(image, [_knob(Rect(c.x - 42, c.y - 42, c.x + 42, c.y + 42))])
    bars = [e for e in found if e.kind is ElementKind.SEEK_BAR]
    marks = [e for e in found if e.class_name == "slider_stop"]
    assert len(bars) == 1 and bars[0].rect.left <= stops[0].left + 30 and bars[0].rect.right >= stops[-1].right - 30
    assert len(marks) == 5
    for mark, stop in zip(sorted(marks, key=lambda e: e.rect.left), stops, strict=True):
        assert stop.contains(mark.rect.center)
    assert [m.selected for m in sorted(marks, key=lambda e: e.rect.left)] == [False, False, False, True, False]
    assert max(marks, key=lambda e: e.rect.left).label == "slider stop 5 of 5, right end"


def test_a_line_from_edge_to_edge_with_a_badge_on_it_is_no_slider():
    image, _, divider = slider_page()
    c = divider.center
    assert find_sliders(image, [_knob(Rect(c.x - 40, c.y - 40, c.x + 40, c.y + 40))]) == []
