"""A toolbar's back arrow is named by its glyph, not by the page title printed beside it
(issue 27: on Settings sub-screens the arrow read "Network & internet")."""

from __future__ import annotations

import pytest

from phone.virtual.phone import VirtualPhone
from vision.config import PipelineConfig
from vision.geometry import Point
from vision.hierarchy import parse_hierarchy
from vision.pipeline import ScreenParser
from vision.types import Screen


@pytest.mark.slow
def test_the_back_arrow_on_a_settings_sub_screen_is_not_named_after_the_title(shared_parser):
    phone = VirtualPhone()
    phone.open_app("Settings")
    shot = phone.screenshot(with_hierarchy=True)
    row = next(e for e in parse_hierarchy(shot.hierarchy_xml, shot.size).elements if e.text == "Network & internet")
    phone.tap(row.rect.center.x, row.rect.center.y)
    sub = phone.screenshot(with_hierarchy=True)
    arrow_node = next(e for e in parse_hierarchy(sub.hierarchy_xml, sub.size).elements if e.label == "Navigate up")
    # the pixels alone (a screenshot without its tree, or a tree that failed to come)
    parser = ScreenParser(PipelineConfig(mode="vision", remember_previous=False), ocr=shared_parser.ocr_backend())
    parse = parser.parse(Screen(image=sub.image))
    at = Point(arrow_node.rect.center.x, arrow_node.rect.center.y)
    arrow = [e for e in parse.elements if e.rect.contains(at) and e.kind.value in ("button", "image")]
    assert arrow, [(e.kind.value, e.label, e.rect) for e in parse.elements[:6]]
    assert all(e.label != "Network & internet" for e in arrow)
    assert any("Network & internet" == e.text for e in parse.elements)  # the title is still read, as text
