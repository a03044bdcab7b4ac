"""Actions validate themselves and convert to and from the AITW / Auto-UI form."""

import pytest

from agent.types import (
    CANONICAL_SWIPES,
    Action,
    ActionType,
    AitwActionType,
    Direction,
    NotRepresentable,
    Target,
)
from vision.geometry import Point, Size

SCREEN = Size(1080, 2400)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"type": ActionType.TAP}, "touch point or a target"),
        ({"type": ActionType.SWIPE, "touch": Point(1, 1)}, "touch and lift"),
        ({"type": ActionType.SWIPE, "touch": Point(1, 1), "lift": Point(1, 1)}, "distinct"),
        ({"type": ActionType.TYPE}, "non-empty text"),
        ({"type": ActionType.TYPE, "text": ""}, "non-empty text"),
        ({"type": ActionType.BACK, "touch": Point(1, 1)}, "no touch"),
        ({"type": ActionType.HOME, "text": "x"}, "no text"),
        ({"type": ActionType.OPEN_APP}, "app name"),
        ({"type": ActionType.LONG_PRESS, "touch": Point(1, 1), "duration_ms": -5}, "non-negative"),
    ],
)
def test_invalid_actions_are_rejected_at_construction(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Action(**kwargs)


def test_tap_becomes_a_dual_point_gesture_with_equal_points_and_four_decimals():
    d = Action.tap(540, 1200).to_aitw(SCREEN)
    assert d == {"action_type": 4, "touch_point": [0.5, 0.5], "lift_point": [0.5, 0.5], "typed_text": ""}
    d = Action.tap(123, 457).to_aitw(SCREEN)
    assert d["touch_point"] == [round(457 / 2400, 4), round(123 / 1080, 4)]


def test_long_press_is_a_dual_point_gesture_too():
    assert Action.long_press(100, 200).to_aitw(SCREEN)["action_type"] == 4


@pytest.mark.parametrize(
    ("kind", "aitw_id"),
    [
        (ActionType.BACK, 5),
        (ActionType.HOME, 6),
        (ActionType.ENTER, 7),
        (ActionType.COMPLETE, 10),
        (ActionType.IMPOSSIBLE, 11),
    ],
)
def test_non_gesture_actions_use_minus_one_points(kind, aitw_id):
    d = Action.simple(kind).to_aitw(SCREEN)
    assert d == {"action_type": aitw_id, "touch_point": [-1.0, -1.0], "lift_point": [-1.0, -1.0], "typed_text": ""}
    assert Action.from_aitw(d, SCREEN) == Action.simple(kind)


def test_type_carries_its_text():
    d = Action.type_text("what's the news in chile?").to_aitw(SCREEN)
    assert d == {
        "action_type": 3,
        "touch_point": [-1.0, -1.0],
        "lift_point": [-1.0, -1.0],
        "typed_text": "what's the news in chile?",
    }
    assert Action.from_aitw(d, SCREEN).text == "what's the news in chile?"


@pytest.mark.parametrize(
    ("touch", "lift", "finger"),
    [
        ((540, 2000), (560, 300), Direction.UP),
        ((500, 300), (520, 2100), Direction.DOWN),
        ((1000, 1200), (80, 1150), Direction.LEFT),
        ((80, 1200), (1000, 1250), Direction.RIGHT),
    ],
)
def test_swipes_are_canonicalised_to_auto_ui_points(touch, lift, finger):
    a = Action.swipe(*touch, *lift)
    assert a.finger_direction() is finger
    d = a.to_aitw(SCREEN)
    assert (tuple(d["touch_point"]), tuple(d["lift_point"])) == CANONICAL_SWIPES[finger]


def test_auto_ui_names_swipes_by_finger_direction():
    # Auto-UI: "up" is touch [0.8, 0.5] -> lift [0.2, 0.5]
    assert CANONICAL_SWIPES[Direction.UP] == ((0.8, 0.5), (0.2, 0.5))
    assert CANONICAL_SWIPES[Direction.RIGHT] == ((0.5, 0.2), (0.5, 0.8))


def test_scroll_down_moves_the_finger_up():
    a = Action.scroll("down", SCREEN)
    assert a.finger_direction() is Direction.UP
    assert a.touch.y > a.lift.y
    assert a.to_aitw(SCREEN)["touch_point"] == [0.8, 0.5]


def test_raw_swipe_points_are_kept_when_not_canonicalised():
    d = Action.swipe(540, 2000, 540, 400).to_aitw(SCREEN, canonical_scroll=False)
    assert d["touch_point"] == [round(2000 / 2400, 4), 0.5]


def test_from_aitw_tells_taps_from_swipes():
    tap = Action.from_aitw({"action_type": 4, "touch_point": [0.7761, 0.7089], "lift_point": [0.7761, 0.7089]}, SCREEN)
    assert tap.type is ActionType.TAP
    assert tap.touch == Point(round(0.7089 * 1080), round(0.7761 * 2400))
    swipe = Action.from_aitw({"action_type": 4, "touch_point": [0.1898, 0.4477], "lift_point": [0.8242, 0.4077]}, SCREEN)
    assert swipe.type is ActionType.SWIPE and swipe.finger_direction() is Direction.DOWN


def test_from_aitw_accepts_names_and_string_points():
    a = Action.from_aitw({"action_type": "DUAL_POINT", "touch_point": "[0.5, 0.5]", "lift_point": "[0.5, 0.5]"}, SCREEN)
    assert a.type is ActionType.TAP


def test_every_aitw_type_round_trips():
    for kind in AitwActionType:
        if kind is AitwActionType.DUAL_POINT:
            d = {"action_type": 4, "touch_point": [0.3, 0.6], "lift_point": [0.3, 0.6], "typed_text": ""}
        elif kind is AitwActionType.TYPE:
            d = {"action_type": 3, "touch_point": [-1.0, -1.0], "lift_point": [-1.0, -1.0], "typed_text": "hi"}
        else:
            d = {"action_type": int(kind), "touch_point": [-1.0, -1.0], "lift_point": [-1.0, -1.0], "typed_text": ""}
        assert Action.from_aitw(d, SCREEN).to_aitw(SCREEN) == d


def test_unknown_aitw_type_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown AITW action_type"):
        Action.from_aitw({"action_type": 9}, SCREEN)


def test_open_app_and_wait_have_no_aitw_form():
    with pytest.raises(NotRepresentable):
        Action.open_app("Clock").to_aitw(SCREEN)
    with pytest.raises(NotRepresentable):
        Action.simple("wait").to_aitw(SCREEN)


def test_ungrounded_tap_cannot_be_exported_yet():
    a = Action(ActionType.TAP, target=Target(description="the Alarm tab"))
    assert not a.is_grounded
    with pytest.raises(NotRepresentable, match="ground it first"):
        a.to_aitw(SCREEN)


def test_describe_reads_like_words():
    assert Action.scroll("down").describe() == "scroll down (swipe up)"
    assert Action.tap(1, 2, Target(description="the Wi-Fi switch")).describe() == "tap the Wi-Fi switch"
    assert Action.type_text("hi").describe() == "type 'hi'"
