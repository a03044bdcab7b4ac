"""What a person would tap on a modern list is one element, and what the first reading
missed is found by a closer look.  Screens are drawn here at 1080x2400 (a tall phone),
parsed from pixels with the real OCR and detector."""

from __future__ import annotations

import pytest

from agent.grounding.base import ElementGrounder, GroundContext
from agent.look_again import SecondLook, goal_words, named_on_screen, region_for
from agent.structured import choosable, element_name, takes_a_tap
from agent.types import Action, ActionType, Target
from tests.vision.drawn_pages import faint_target, settings_page
from vision.config import PipelineConfig
from vision.geometry import Point, Rect, Size
from vision.look_again import strips
from vision.pipeline import ScreenParser
from vision.row_parts import FORWARD
from vision.types import Screen

W, H = 1080, 2400

@pytest.fixture(scope="module")
def parser() -> ScreenParser:
    return ScreenParser(PipelineConfig(mode="vision", remember_previous=False))


@pytest.fixture(scope="module")
def page(parser):
    image, boxes = settings_page()
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


def test_the_choice_list_reads_like_the_screen_one_entry_a_row_named_by_its_title(page):
    _, _, parse = page
    offered = choosable(parse)
    names = [element_name(e) for e in offered]
    for title in ("Colour scheme", "Font settings", "Refresh rate", "Screen timeout", "Always-on display & Lock screen"):
        assert names.count(title) == 1, names
        assert next(e for e in offered if element_name(e) == title).class_name == "list_item"
    assert not {"Lock screen", "Always-on display &"} & set(names)  # a wrapped title's lines are its row's
    assert any(e.label in FORWARD for e in parse.elements)  # chevrons were found and read as such ...
    assert not any(e.label in FORWARD for e in offered)  # ... and the rows they end stand for them
    assert {"Fonts and text size", "Default >", "Upgrade Now"} <= set(names)  # words of their own stay
    assert "(Font settings)" in parse.description and '"Font settings"' not in parse.description


def test_a_row_is_tapped_on_its_title_line(page):
    _, _, parse = page
    row = next(e for e in choosable(parse) if element_name(e) == "Refresh rate")
    tap = Action(ActionType.TAP, target=Target(element_id=row.id))
    point = ElementGrounder().ground(tap, GroundContext("open the refresh rate", parse)).action.touch
    title = next(e for e in parse.elements if e.text == "Refresh rate")
    assert point is not None and row.rect.contains(point) and title.rect.contains(point)
    assert not title.rect.contains(row.rect.center)  # the row's middle lies right of its words


def test_every_element_a_reply_may_name_has_a_name_not_a_bare_kind(page):
    _, _, parse = page
    bare = {"button", "image", "text", "list", "unknown", "container", "icon"}
    assert all(element_name(e).casefold() not in bare for e in choosable(parse))


def test_the_second_look_finds_a_target_the_first_pass_missed_and_says_so(parser):
    image, target = faint_target()
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
    german = region_for("Tippe unten links auf Jetzt upgraden", size)
    assert german == (Rect(0, 2 * H // 3, W // 2, H), "the bottom left of the screen")
    assert region_for("Show the links in the footer", size)[1] == "the bottom of the screen"  # English "links"
    cuts = strips(Rect(0, 0, W, H), H)
    assert cuts[0].top == 0 and cuts[-1].bottom == H
    assert all(a.bottom > b.top for a, b in zip(cuts, cuts[1:], strict=False))  # strips overlap: no line is cut


def test_the_words_a_goal_looks_for_leave_out_the_act_and_the_place_in_either_language():
    assert goal_words("Tap Upgrade Now at the top right") == {"upgrade", "now"}
    assert goal_words("Tippe oben rechts auf Jetzt upgraden") >= {"jetzt", "upgraden"}
    assert not goal_words("Tippe oben rechts auf Jetzt upgraden") & {"tippe", "oben", "recht", "rechts"}
    assert goal_words("Öffne die Einstellungen") & {"ffne", "öffne"} == set()
    assert goal_words("Press the button") == set()  # "press" is a word of the act, also stemmed
