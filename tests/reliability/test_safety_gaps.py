"""Item 11: "trash" and "bin" are deleting words; swipes that act on something and
opening a payment or banking app are judged like taps, in auto mode too."""

from __future__ import annotations

import pytest

from agent.safety import sensitivity
from agent.types import Action, ActionType, Direction, Target
from tests.reliability.support import alternating, run_args, scripted, tapwise
from vision.geometry import Point, Rect, Size
from vision.types import Element, ElementKind, ElementSource, ScreenParse

SCREEN = Size(1080, 2400)


def _screen(*elements: Element) -> ScreenParse:
    return ScreenParse(SCREEN, elements)


def _button(eid: str, text: str, rect: Rect, kind: ElementKind = ElementKind.BUTTON) -> Element:
    return Element(id=eid, kind=kind, rect=rect, text=text, clickable=True, source=ElementSource.HIERARCHY)


@pytest.mark.parametrize("word", ["Trash", "Move to trash", "Bin", "Move to the bin", "Empty bin", "Recycle bin"])
def test_trash_and_bin_are_deleting(word):
    parse = _screen(_button("1", word, Rect(100, 100, 500, 200)))
    reason = sensitivity(Action(ActionType.TAP, target=Target(element_id="1")), parse)
    assert reason is not None and reason.startswith("deleting")


def test_a_sideways_swipe_on_a_row_is_judged_by_the_row():
    row = _button("1", "Delete conversation", Rect(0, 600, 1080, 800))
    assert sensitivity(Action.swipe(1000, 700, 80, 700), _screen(row)).startswith("deleting")


def test_a_slide_to_pay_bar_is_paying():
    bar = _button("1", "Slide to pay", Rect(40, 2000, 1040, 2150))
    assert sensitivity(Action.swipe(80, 2075, 1000, 2075), _screen(bar)).startswith("paying")


def test_a_swipe_aimed_at_an_element_is_judged_by_it():
    row = _button("7", "Remove account", Rect(0, 600, 1080, 800))
    action = Action(ActionType.SWIPE, touch=Point(540, 700), lift=Point(540, 300), target=Target(element_id="7"))
    assert sensitivity(action, _screen(row)).startswith("deleting")


def test_a_plain_scroll_is_not_sensitive_whatever_lies_under_it():
    under = _button("1", "Delete all", Rect(0, 0, 1080, 2400))
    assert sensitivity(Action.scroll(Direction.DOWN, SCREEN), _screen(under)) is None


@pytest.mark.parametrize("app", ["PayPal", "Chase Bank", "Google Pay", "Wallet", "com.revolut.revolut", "Venmo"])
def test_opening_a_payment_or_banking_app_is_paying(app):
    reason = sensitivity(Action.open_app(app))
    assert reason is not None and reason.startswith("paying")


@pytest.mark.parametrize("app", ["Clock", "Settings", "Contacts", "Display", "Play Store", "Notes"])
def test_opening_an_ordinary_app_is_not(app):
    assert sensitivity(Action.open_app(app)) is None


def test_auto_mode_stops_to_ask_before_opening_a_banking_app(tmp_path):
    with scripted(alternating("open Bank")) as llm:
        out = tapwise(*run_args(llm.url, "check my balance", steps=2, db=tmp_path / "t.sqlite"), input="")
    assert "sensitive action (paying" in out.stdout, out.stdout[-2000:]
    assert "done: open" not in out.stdout, "nothing was opened without the user"
    assert out.returncode == 130  # the input ended at the question
