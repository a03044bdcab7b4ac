"""Reading model replies as actions: free text, JSON forms, reasoning extraction, action keys."""

from __future__ import annotations

import pytest

from agent.commands import (
    CommandError,
    action_key,
    extract_answer,
    extract_thought_action,
    parse_command,
    parse_json_action,
)
from agent.types import ActionType, Direction
from vision.geometry import Point, Size

S = Size(1080, 2400)


@pytest.mark.parametrize(("text", "kind", "description"), [
    ("tap the alarm tab", ActionType.TAP, "alarm tab"),
    ("Click on the search box.", ActionType.TAP, "search box"),
    ("You should tap the Save button.", ActionType.TAP, "Save button"),
    ("Answer: select 'Argon'", ActionType.TAP, "Argon"),
    ("long press the photo", ActionType.LONG_PRESS, "photo"),
])
def test_taps_keep_an_ungrounded_target_description(text, kind, description):
    a = parse_command(text, S)
    assert a.type is kind and a.touch is None
    assert a.target is not None and a.target.description == description


def test_type_into_named_field_keeps_text_and_field():
    a = parse_command("type 'Run for 30 minutes' in the Description box", S)
    assert a.type is ActionType.TYPE and a.text == "Run for 30 minutes"
    assert a.target.description == "Description box"


def test_type_without_quotes_into_a_bar():
    a = parse_command("enter pizza hut in the search bar", S)
    assert (a.text, a.target.description) == ("pizza hut", "search bar")


def test_scroll_down_is_a_finger_moving_up_with_canonical_points():
    a = parse_command("scroll down", S)
    assert a.type is ActionType.SWIPE and a.finger_direction() is Direction.UP
    assert a.touch.y > a.lift.y


@pytest.mark.parametrize(("text", "kind"), [
    ("go back", ActionType.BACK), ("Navigate back.", ActionType.BACK), ("go home", ActionType.HOME),
    ("press enter", ActionType.ENTER), ("done", ActionType.COMPLETE), ("You should be done.", ActionType.COMPLETE),
    ("impossible", ActionType.IMPOSSIBLE), ("This task is not possible here", ActionType.IMPOSSIBLE),
    ("wait", ActionType.WAIT),
])
def test_simple_commands(text, kind):
    assert parse_command(text, S).type is kind


def test_open_app_strips_article_and_app_word():
    assert parse_command("open the Clock app", S).app == "Clock"
    assert parse_command("open Clock", S).app == "Clock"


def test_element_ids_and_coordinates():
    assert parse_command("tap [5] Save", S).target.element_id == "5"
    assert parse_command("click on element 7", S).target.element_id == "7"
    assert parse_command("tap (540, 1200)", S).touch == Point(540, 1200)


@pytest.mark.parametrize("text", ["", "   ", "I like turtles", "unknown", "tap <element>, long press <element>"])
def test_unreadable_commands_raise_with_the_accepted_forms(text):
    with pytest.raises(CommandError, match="expected one of"):
        parse_command(text, S)


def test_json_forms_project_app_d_and_aitw():
    assert parse_json_action({"action": "tap", "element": 5}, S).target.element_id == "5"
    click = parse_json_action({"action_type": "click", "x": 162, "y": 1970}, S)
    assert click.touch == Point(162, 1970)
    typed = parse_json_action({"action_type": "input_text", "text": "hi", "x": 10, "y": 20}, S)
    assert typed.text == "hi" and typed.target.point == Point(10, 20)
    assert parse_json_action({"action_type": "open_app", "app_name": "Clock"}, S).app == "Clock"
    assert parse_json_action({"action_type": "status", "goal_status": "infeasible"}, S).type is ActionType.IMPOSSIBLE
    aitw = parse_json_action({"action_type": 4, "touch_point": [0.5, 0.5], "lift_point": [0.5, 0.5]}, S)
    assert aitw.type is ActionType.TAP and aitw.touch == Point(540, 1200)


def test_json_with_unknown_action_is_a_clear_error():
    with pytest.raises(CommandError, match="unknown action 'fly'"):
        parse_json_action({"action": "fly"}, S)


def test_json_embedded_in_free_text_is_used():
    assert parse_command('Sure! {"action": "back"}', S).type is ActionType.BACK


def test_cot_answer_is_taken_after_the_last_answer_marker_else_last_sentence():
    assert extract_answer("Alarms live in the Alarm tab. Answer: tap the alarm tab.") == "tap the alarm tab."
    assert extract_answer("I think so. Tap Display.") == "Tap Display."


def test_react_reply_splits_thought_and_action():
    assert extract_thought_action("Thought: wrong tab.\nAction: tap Alarm") == ("wrong tab.", "tap Alarm")
    assert extract_thought_action("no structure here")[1] == "unknown"


def test_action_key_ignores_articles_case_and_widget_words():
    assert action_key(parse_command("tap the Alarm tab", S)) == action_key(parse_command("Tap alarm tab.", S))
    assert action_key(parse_command("tap Save button", S)) == action_key(parse_command("click on the save", S))
    assert action_key(parse_command("tap Display", S)) != action_key(parse_command("tap Sound", S))


def test_lenient_parsing_finds_a_command_inside_chatty_replies():
    from agent.commands import parse_lenient

    a = parse_lenient("Sure thing. Your response is to tap the Settings icon. Good luck!", S)
    assert a.type is ActionType.TAP and a.target.description == "Settings icon"
    assert parse_lenient("I would open the Clock app now.", S).app == "Clock"
    with pytest.raises(CommandError):
        parse_lenient("I am a helpful assistant.", S)


@pytest.mark.parametrize(
    ("text", "element_id", "description"),
    [
        ("tap [t7] SIMs", "t7", "SIMs"),
        ("tap #t12", "t12", ""),
        ("tap element t3: Wi-Fi", "t3", "Wi-Fi"),
        ("tap [7] SIMs", "7", "SIMs"),
    ],
)
def test_element_ids_with_a_letter_prefix_are_read_as_ids(text, element_id, description):
    action = parse_command(text)
    assert action.target.element_id == element_id
    assert action.target.description == description
