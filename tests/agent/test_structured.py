"""Structured replies: the per-screen schema, what servers get, and how replies are read back.

The schema is checked with two readers written by others: ``jsonschema`` (does a reply
that names an off-screen element fail validation?) and llama-cpp-python's own JSON-schema
to grammar converter (the server silently falls back to "any JSON" when it cannot
convert a schema, so conversion must succeed without that fallback).
"""

from __future__ import annotations

import importlib.util
import json
from dataclasses import replace

import jsonschema
import pytest

from agent.commands import CommandError
from agent.structured import (
    action_form,
    asks_to_hold,
    element_key,
    read_action,
    refuse_placeholder,
    reply_problem,
    reply_schema,
)
from agent.types import Action, ActionType, Direction, Target
from tests.agent.screens import SIZE, el, settings_parse
from vision.geometry import Rect
from vision.types import Element, ElementKind, ElementSource, ScreenParse

APPS = ("Settings", "Clock", "Notes")


def list_parse() -> ScreenParse:
    """A settings-like screen with a scrollable list, a text field and a plain label."""
    elements = (
        el("1", "Settings", 100, ElementKind.TEXT),
        Element("2", ElementKind.CONTAINER, Rect(0, 300, 1080, 2000), class_name="recycler view", scrollable=True),
        el("3", "Search settings", 320, ElementKind.EDIT_TEXT),
        el("4", "Display", 500),
        el("5", "", 700, label="Sound & vibration · Volume, haptics"),
    )
    return ScreenParse(SIZE, elements)


def validate(schema: dict, reply: dict) -> bool:
    try:
        jsonschema.validate(reply, schema)
    except jsonschema.ValidationError:
        return False
    return True


def test_element_ids_are_an_enum_of_this_screen_with_kinds_per_action():
    form = action_form(list_parse(), apps=APPS)
    schema = reply_schema(form, thought="thought")
    assert [c.key for c in form.editable] == ["Search settings [3]"]
    assert [c.key for c in form.scrollable] == ["list [2]"]
    assert "Sound & vibration [5]" in [c.key for c in form.tappable]  # label's first part names an unnamed button
    ok = {"thought": "Display holds the theme", "action": {"type": "tap", "element": "Display [4]"}}
    assert validate(schema, ok)
    assert not validate(schema, {"thought": "", "action": {"type": "tap", "element": "Alarm tab [9]"}})
    assert not validate(schema, {"thought": "", "action": {"type": "type", "element": "Display [4]", "text": "x"}})
    assert validate(schema, {"thought": "", "action": {"type": "type", "element": "Search settings [3]",
                                                       "text": "dark"}})
    assert not validate(schema, {"thought": "", "action": {"type": "open_app", "app": "Weather"}})
    assert validate(schema, {"thought": "", "action": {"type": "open_app", "app": "Clock"}})
    assert not validate(schema, {"thought": "", "action": {"type": "scroll", "direction": "down"}})  # must name the list


def test_without_fields_or_lists_the_form_offers_no_typing_and_a_plain_scroll():
    parse = ScreenParse(SIZE, (el("1", "OK", 300),))
    form = action_form(parse, allow_done=False)
    assert "type" not in form.kinds and "complete" not in form.kinds and "impossible" not in form.kinds
    schema = reply_schema(form)
    assert validate(schema, {"action": {"type": "scroll", "direction": "down"}})
    assert validate(schema, {"action": {"type": "open_app", "app": "Anything"}})  # apps unknown: any name
    assert not validate(schema, {"action": {"type": "complete"}})


def test_covered_elements_are_not_offered():
    base = settings_parse()
    parse = replace(base, elements=tuple(replace(e, covered=e.id == "3") for e in base.elements))
    form = action_form(parse)
    assert "Display [3]" not in [c.key for c in form.tappable]
    assert reply_problem(Action(ActionType.TAP, target=Target(element_id="3")), parse) is not None


@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="llama-cpp-python is not installed")
def test_llama_cpp_converts_the_schema_to_a_grammar_without_falling_back():
    from llama_cpp.llama_grammar import LlamaGrammar, json_schema_to_gbnf

    schema = reply_schema(action_form(list_parse(), apps=APPS), thought="thought")
    gbnf = json_schema_to_gbnf(json.dumps(schema))
    assert '\\"Display [4]\\"' in gbnf and '\\"Search settings [3]\\"' in gbnf
    assert "Alarm" not in gbnf
    LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)  # raises when llama.cpp rejects it


def test_read_action_resolves_keys_to_ids_and_refuses_the_rest():
    parse = list_parse()
    form = action_form(parse, apps=APPS)
    tap = read_action({"action": {"type": "tap", "element": "Display [4]"}}, form, parse)
    assert tap.type is ActionType.TAP and tap.target == Target(element_id="4", description="Display")
    typed = read_action({"type": "type", "element": "Search settings [3]", "text": "dark"}, form, parse)
    assert typed.text == "dark" and typed.target.element_id == "3"
    scroll = read_action({"type": "scroll", "element": element_key(parse.element("2")), "direction": "down"},
                         form, parse)
    assert scroll.finger_direction() is Direction.UP  # content down = finger up
    assert 300 <= scroll.lift.y < scroll.touch.y <= 2000  # inside the list
    assert read_action({"type": "open_app", "app": "Notes"}, form, parse) == Action.open_app("Notes")
    for bad in ({"type": "tap", "element": "Alarm tab [9]"}, {"type": "type", "element": "Display [4]", "text": "x"},
                {"type": "open_app", "app": "Weather"}, {"type": "fly"},
                {"type": "type", "element": "Search settings [3]", "text": "<text>"}):
        with pytest.raises(CommandError):
            read_action(bad, form, parse)


def test_placeholders_from_the_instructions_are_refused():
    for text in ("tap [id] Clock", "tap <element>", "type '<text>' in [<id>] <element name>", "open {app}"):
        with pytest.raises(CommandError, match="placeholder"):
            refuse_placeholder(text)
    refuse_placeholder("tap [7] Settings")  # a real id is fine


def test_reply_problem_flags_words_and_ids_that_are_not_on_the_screen():
    parse = settings_parse()
    assert reply_problem(Action(ActionType.TAP, target=Target(description="Alarm tab")), parse)
    assert reply_problem(Action(ActionType.TAP, target=Target(element_id="9")), parse)
    assert reply_problem(Action(ActionType.TAP, target=Target(description="Display")), parse) is None
    assert reply_problem(Action.open_app("Clock"), parse) is None


def test_an_action_that_changed_nothing_is_not_offered_again():
    parse = list_parse()
    tap = Action(ActionType.TAP, target=Target(element_id="4", description="Display"))
    form = action_form(parse, apps=APPS, exclude=(tap,))
    keys = [c.key for c in form.tappable]
    assert "Display [4]" not in keys and "Sound & vibration [5]" in keys and "Settings [1]" not in keys  # a title
    scroll = Action.scroll(Direction.DOWN, SIZE)
    form = action_form(parse, apps=APPS, exclude=(scroll,))
    assert "down" not in form.directions and "up" in form.directions
    with pytest.raises(CommandError):
        read_action({"type": "scroll", "element": "list [2]", "direction": "down"}, form, parse)
    form = action_form(parse, apps=APPS, exclude=(Action.open_app("clock"),))
    assert form.apps == ("Settings", "Notes")
    form = action_form(parse, exclude=(Action.simple("back"),))
    assert "back" not in form.kinds and "home" in form.kinds
    assert not validate(reply_schema(form), {"action": {"type": "back"}})


def test_long_press_is_offered_only_when_the_task_asks_to_hold():
    parse = settings_parse()
    assert "long_press" not in action_form(parse).kinds
    assert "long_press" in action_form(parse, hold=True).kinds
    assert asks_to_hold("Long-press the Clock icon") and asks_to_hold("press and hold Ember")
    assert not asks_to_hold("Turn on airplane mode") and not asks_to_hold("Start the stopwatch")


def test_every_action_object_names_its_target_before_its_type():
    form = action_form(settings_parse(), apps=("Clock",), hold=True)
    for variant in form.schema["oneOf"]:
        props = list(variant["properties"])
        assert props[-1] == "type", props


def test_a_title_the_tree_calls_unclickable_is_not_offered_but_pixel_elements_are():
    title = el("1", "Settings", 100, ElementKind.TEXT)  # the tree says: not clickable
    row = el("2", "Display", 300)
    seen = replace(el("3", "Sale", 500, ElementKind.TEXT), source=ElementSource.OCR)
    parse = ScreenParse(SIZE, (title, row, seen))
    keys = [c.key for c in action_form(parse).tappable]
    assert keys == ["Display [2]", "Sale [3]"]
