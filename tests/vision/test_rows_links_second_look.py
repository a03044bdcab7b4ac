"""What a person would tap on a modern list is one element, and what the first reading
missed is found by a closer look.  Screens are drawn here at 1080x2400 (a tall phone),
parsed from pixels with the real OCR and detector."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw

from agent.look_again import SecondLook, named_on_screen, region_for
from agent.structured import choosable, element_name, takes_a_tap
from tests.vision.conftest import font
from vision.config import PipelineConfig
from vision.geometry import Point, Rect, Size
from vision.look_again import strips
from vision.pipeline import ScreenParser
from vision.types import Screen

W, H = 1080, 2400


def _chevron(d: ImageDraw.ImageDraw, x: int, y: int, colour=(150, 150, 150)) -> None:
    d.line([(x, y - 18), (x + 16, y), (x, y + 18)], fill=colour, width=5)


def _settings_page() -> tuple[np.ndarray, dict[str, Rect]]:
    """A list without divider lines: rows of a title (one with a line under it) and a value
    and/or a chevron at the right end; a small blue link under a grey panel."""
    im = Image.new("RGB", (W, H), (255, 255, 255))
    d = ImageDraw.Draw(im)
    d.text((60, 150), "Display", font=font(64), fill=(0, 0, 0))
    rows: dict[str, Rect] = {}
    y = 400
    for title, sub, value in [("Colour scheme", "", ""), ("Font settings", "Fonts and text size", ""),
                              ("Refresh rate", "", "Default"), ("Screen timeout", "", "30 seconds"),
                              ("Always-on display &\nLock screen", "", "")]:
        top = y
        first, _, wrapped = title.partition("\n")
        d.text((60, y), first, font=font(46), fill=(20, 20, 20))
        bottom = y + 56
        if wrapped:
            d.text((60, y + 58), wrapped, font=font(46), fill=(20, 20, 20))
            bottom = y + 114
        if sub:
            d.text((60, y + 66), sub, font=font(34), fill=(120, 120, 120))
            bottom = y + 110
        mid = (top + bottom) // 2
        if value:
            d.text((1000 - 40, mid), value, font=font(40), fill=(140, 140, 140), anchor="rm")
        _chevron(d, 1000, mid)
        rows[first] = Rect(30, top - 40, 1050, bottom + 40)
        y = bottom + 110
    d.rounded_rectangle([40, 1700, 1040, 1980], radius=40, fill=(243, 243, 243))
    d.text((90, 1740), "Need other settings?", font=font(40), fill=(140, 140, 140))
    d.text((90, 1850), "Upgrade Now", font=font(40), fill=(40, 110, 220))
    rows["link"] = Rect(85, 1845, 340, 1900)
    return np.asarray(im, dtype=np.uint8).copy(), rows


@pytest.fixture(scope="module")
def parser() -> ScreenParser:
    return ScreenParser(PipelineConfig(mode="vision", remember_previous=False))


@pytest.fixture(scope="module")
def page(parser):
    image, boxes = _settings_page()
    return image, boxes, parser.parse(Screen(image))


def _offered_at(parse, point: Point):
    return [e for e in choosable(parse) if takes_a_tap(e) and e.rect.contains(point)]


def test_a_settings_row_with_a_chevron_is_one_tappable_element_holding_the_middle_of_the_row(page):
    image, boxes, parse = page
    for title in ("Font settings", "Refresh rate", "Colour scheme"):
        box = boxes[title]
        rows = [e for e in _offered_at(parse, box.center) if e.class_name == "list_item"]
        assert len(rows) == 1, (title, [(e.label, e.rect) for e in _offered_at(parse, box.center)])
        row = rows[0]
        assert element_name(row) == title
        assert box.contains(row.rect.center)  # a tap on the row's middle lands in the row
    font_row = next(e for e in parse.elements if e.class_name == "list_item" and e.label.startswith("Font settings"))
    assert font_row.rect.bottom > boxes["Font settings"].bottom - 60  # its second line belongs to it
    refresh = next(e for e in parse.elements if e.class_name == "list_item" and e.label.startswith("Refresh rate"))
    assert "Default" in refresh.label  # the value on the right is part of the row
    wrapped = [e for e in _offered_at(parse, boxes["Always-on display &"].center) if e.class_name == "list_item"]
    assert [element_name(e) for e in wrapped] == ["Always-on display & Lock screen"]  # a title on two lines


def test_a_small_text_link_is_an_element_a_reply_may_name(page):
    _, boxes, parse = page
    link = boxes["link"]
    hits = [e for e in _offered_at(parse, link.center) if "Upgrade" in element_name(e)]
    assert hits, [element_name(e) for e in choosable(parse)]
    assert link.contains(hits[0].rect.center)


def test_every_element_a_reply_may_name_has_a_name_not_a_bare_kind(page):
    _, _, parse = page
    bare = {"button", "image", "text", "list", "unknown", "container", "icon"}
    assert all(element_name(e).casefold() not in bare for e in choosable(parse))


def _faint_target() -> tuple[np.ndarray, Rect]:
    """A tall screen whose only action is a line of tiny grey words low on the page (too small
    for the first reading of the whole frame)."""
    im = Image.new("RGB", (W, H), (255, 255, 255))
    d = ImageDraw.Draw(im)
    d.text((60, 150), "Storage", font=font(64), fill=(0, 0, 0))
    d.text((60, 500), "Used space", font=font(46), fill=(20, 20, 20))
    d.text((700, 2050), "Clear cache", font=font(7), fill=(100, 100, 100))
    return np.asarray(im, dtype=np.uint8).copy(), Rect(695, 2043, 750, 2065)


def test_the_second_look_finds_a_target_the_first_pass_missed_and_says_so(parser):
    image, target = _faint_target()
    first = parser.parse(Screen(image))
    goal = "tap clear cache at the bottom"
    assert not named_on_screen(goal, first)  # the first reading did not see the words
    looked, notes = SecondLook(parser.ocr_backend())(goal, Screen(image), first)
    found = [e for e in choosable(looked) if "cache" in element_name(e).casefold()]
    assert found and target.contains(found[0].rect.center)
    assert notes and "looked again at the bottom of the screen" in notes[0] and "Clear cache" in notes[0]
    assert {e.id for e in first.elements} < {e.id for e in looked.elements}  # added, nothing renamed


def test_no_second_look_when_the_goal_words_are_on_the_screen(page, parser):
    image, _, parse = page
    looked, notes = SecondLook(parser.ocr_backend())("open font settings", Screen(image), parse)
    assert looked is parse and notes == ()


def test_the_region_a_goal_points_at():
    size = Size(W, H)
    assert region_for("the menu at the top right", size) == (Rect(W // 2, 0, W, H // 3), "the top right of the screen")
    assert region_for("open the chat", size)[1] == "the whole screen"
    cuts = strips(Rect(0, 0, W, H), H)
    assert cuts[0].top == 0 and cuts[-1].bottom == H
    assert all(a.bottom > b.top for a, b in zip(cuts, cuts[1:], strict=False))  # strips overlap: no line is cut
