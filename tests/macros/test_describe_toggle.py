"""A switch whose own text is its state ("OFF") is named by the label on its row."""

from agent.macros.describe import describe_step
from agent.types import Action
from vision.geometry import Rect, Size
from vision.types import Element, ElementKind, ScreenParse


def _row(switch_text: str) -> ScreenParse:
    return ScreenParse(
        screen_size=Size(1080, 2400),
        elements=(
            Element("t1", ElementKind.TEXT, Rect(150, 650, 500, 720), text="Airplane mode"),
            Element("t2", ElementKind.TEXT, Rect(150, 800, 500, 860), text="Data Saver"),
            Element("s1", ElementKind.SWITCH, Rect(940, 660, 1020, 720), text=switch_text, checked=False,
                    clickable=True),
        ),
    )


def test_a_switch_showing_its_state_is_named_by_its_row_label():
    parse = _row("OFF")
    step = describe_step(Action.tap(980, 690), parse.element("s1"), parse)
    assert step == "turn on the 'Airplane mode' switch"


def test_german_state_words_are_not_names_either():
    parse = _row("AUS")
    assert "'Airplane mode'" in describe_step(Action.tap(980, 690), parse.element("s1"), parse)
