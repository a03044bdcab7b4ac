"""Effect checks ("tapping X changed nothing"), covered elements, and the latent-state and
grounding calls that ask for structured replies, over real HTTP with the real clients."""

from __future__ import annotations

from dataclasses import replace

import jsonschema
import pytest

from agent.commands import parse_command
from agent.effects import returning_actions, screen_signature, unchanged_note, unchanged_note_from_text
from agent.grounding.base import ElementGrounder, GroundContext, GroundingError
from agent.grounding.llm_grounder import LLMGrounder
from agent.latent import COMPLETION_SCHEMA, ChainedEstimator, FusedEstimator, LatentInput
from agent.screen_text import fenced
from agent.types import Action, LatentState
from tests.agent.screens import SIZE, clock_parse, el, settings_parse
from vision.geometry import Rect
from vision.types import Element, ElementKind, ScreenParse

INP = LatentInput(goal="Set an alarm for 7:15 AM", screen=fenced(clock_parse().description),
                  previous_screen=fenced(settings_parse().description), commanded="open Clock",
                  commanded_history=("open Clock",))


def with_status_bar(parse: ScreenParse, clock: str) -> ScreenParse:
    bar = Element("s0", ElementKind.STATUS_BAR, Rect(0, 0, 1080, 60))
    time = Element("s1", ElementKind.TEXT, Rect(20, 5, 200, 55), text=clock)
    return replace(parse, elements=(bar, time, *parse.elements))


# ---- effects ---------------------------------------------------------------------------------


def test_an_action_that_left_the_screen_as_it_was_gets_a_note():
    before = with_status_bar(settings_parse(), "12:45")
    after = with_status_bar(settings_parse(), "12:46")  # only the clock ticked
    tap = Action(parse_command("tap Display").type, target=parse_command("tap Display").target)
    note = unchanged_note(tap, before, after)
    assert note is not None and note.startswith('"tap Display" changed nothing on the screen')
    assert screen_signature(before) == screen_signature(after)


def test_a_change_of_state_or_a_wait_gets_no_note():
    before = settings_parse()
    toggled = replace(before, elements=tuple(replace(e, selected=e.id == "3") for e in before.elements))
    assert unchanged_note(parse_command("tap Display"), before, toggled) is None
    assert unchanged_note(Action.simple("wait"), before, before) is None
    assert unchanged_note(Action.simple("complete"), before, before) is None
    assert unchanged_note(None, before, before) is None


def test_the_same_check_on_screen_descriptions_ignores_the_status_bar_line():
    a = '<screen>\nScreen 1080x2400\n  [0] status bar "12:45 5G 87%"\n  [3] button "Display"\n</screen>'
    b = '<screen>\nScreen 1080x2400\n  [0] status bar "12:46 5G 86%"\n  [3] button "Display"\n</screen>'
    c = '<screen>\nScreen 1080x2400\n  [3] button "Display" selected\n</screen>'
    assert unchanged_note_from_text(Action.simple("back"), a, b) is not None
    assert unchanged_note_from_text(Action.simple("back"), a, c) is None
    assert unchanged_note_from_text(Action.simple("back"), "", b) is None


# ---- covered elements -------------------------------------------------------------------------


def test_the_way_back_out_of_a_detour_is_found_only_when_back_on_the_screen_it_left():
    home, page, other = "<screen>\n  [1] Home\n</screen>", "<screen>\n  [2] Page\n</screen>", "<screen>\n  [3] X\n</screen>"
    into, out = parse_command("tap Page"), Action.simple("back")
    steps = [(into, home), (out, page)]  # home -> page -> home
    assert returning_actions(steps, home) == []  # the way in may be right: it stays
    assert returning_actions([*steps, (into, home)], page) == [out]  # on the page again: not "back" again
    assert returning_actions([(into, home), (parse_command("tap X"), page)], other) == []  # forward only
    assert returning_actions([(Action.simple("wait"), page)], page) == []


def test_the_grounder_never_aims_at_a_covered_element():
    parse = ScreenParse(SIZE, (el("1", "Display", 300, covered=True), el("2", "Display", 600)))
    g = ElementGrounder().ground(parse_command("tap Display"), GroundContext("g", parse))
    assert g.element is not None and g.element.id == "2"
    with pytest.raises(GroundingError):
        ElementGrounder().ground(parse_command("tap [1]"), GroundContext("g", replace(parse, elements=parse.elements[:1])))


# ---- latent state and grounding calls -------------------------------------------------------


def test_structured_completion_check_reads_a_boolean_verdict(server, ollama):
    server.on("is the goal already fully achieved", '{"completed": true, "reason": "the alarm is on"}')
    est = ChainedEstimator(ollama, structured=True).completion(INP, LatentState(), "task complete")
    assert est.complete is True and est.latent.completion_reason == "the alarm is on"
    assert server.requests[0].body["format"] == COMPLETION_SCHEMA
    free = ChainedEstimator(ollama).completion(INP, LatentState(), "task complete")
    assert server.requests[1].body.get("format") is None and free.calls


def test_structured_fused_estimate_sends_its_schema(server, ollama):
    server.on("Estimate the hidden state", '{"performed_action": "Opened Clock.", "screen_summary": "Clock",'
              ' "progression": "You have opened Clock.", "mistakes": "No mistakes.", "completed": false,'
              ' "completion_reason": "no alarm yet", "confidence": 0.7}')
    est = FusedEstimator(ollama, structured=True).estimate(INP)
    schema = server.requests[0].body["format"]
    assert est.latent.confidence == 0.7 and schema["properties"]["completed"] == {"type": "boolean"}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"performed_action": "x"}, schema)


def test_structured_llm_grounder_can_only_name_an_element_of_the_screen(server, ollama):
    server.on("Find the on-screen element", '{"element": "3", "reason": "dark mode is under Display"}')
    parse = settings_parse()
    g = LLMGrounder(ollama, structured=True).ground(parse_command("tap dark mode", SIZE),
                                                    GroundContext("Turn on dark mode", parse))
    assert g.element is not None and g.element.id == "3"
    schema = server.requests[0].body["format"]
    jsonschema.validate({"element": "3", "reason": ""}, schema)
    jsonschema.validate({"element": None, "reason": "nothing fits"}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"element": "42", "reason": ""}, schema)


def test_structured_assessment_and_ladder_keep_to_known_verdicts_strategies_and_elements(server, ollama):
    from agent.grounding.assessment import Assessor
    from agent.grounding.ladder import LadderGrounder

    server.on("Check an action", '{"verdict": "follow", "confident": true, "confidence": 0.9, "reason": "ok"}')
    server.on("You map a step", '{"strategy": "redirect", "element": "3", "action": "tap [3] Display", "reason": "r"}')
    a = Assessor(ollama, structured=True).assess("g", (), parse_command("tap Display"), "<screen></screen>")
    assert a.verdict == "follow" and a.confident
    verdicts = server.requests[0].body["format"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"verdict": "maybe", "confident": True, "confidence": 1, "reason": ""}, verdicts)
    parse = replace(settings_parse(), elements=tuple(replace(e, covered=e.id == "2") for e in settings_parse().elements))
    g = LadderGrounder(ollama, structured=True).ladder(parse_command("tap dark mode"), GroundContext("g", parse))
    assert g.grounded is not None and g.grounded.element is not None and g.grounded.element.id == "3"
    ladder = server.requests[1].body["format"]
    assert "2" not in ladder["properties"]["element"]["anyOf"][0]["enum"]  # covered: not a candidate
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"strategy": "teleport", "element": None, "action": "", "reason": ""}, ladder)
