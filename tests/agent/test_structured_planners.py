"""Planners asking for structured replies, through the real clients over real HTTP.

The scripted server records what each client sent, so these tests pin the wire form of
a constrained request (Ollama's ``format``, the OpenAI-style ``response_format``), the
fallback to free text when a server ignores the schema, the "changed nothing" note, and
the prompts' worked examples (a made-up app, never this phone's words).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

import jsonschema
import pytest

from agent import prompts
from agent.commands import CommandError, parse_command
from agent.llm.base import CancelToken, ChatRequest, LLMReply
from agent.planners import PlanContext, Turn, make_planner
from agent.screen_text import fenced
from agent.types import Action, ActionType, LLMCall, Target
from tests.agent.screens import clock_parse, settings_parse

APPS = ("Settings", "Clock", "Notes")


def ctx_for(parse, goal="Turn on dark theme", **kw) -> PlanContext:
    return PlanContext(goal=goal, parse=parse, screen=fenced(parse.description), **kw)


def reply(action: dict, **fields) -> str:
    return json.dumps({**fields, "action": action})


def test_ollama_gets_the_screen_schema_as_format_and_the_reply_names_an_element(server, ollama):
    server.on("", reply({"type": "tap", "element": "Display [3]"}))
    p = make_planner("zeroshot-", ollama, constrained=True, apps=APPS).propose(ctx_for(settings_parse()))
    assert p.action.type is ActionType.TAP and p.action.target.element_id == "3"
    assert "reply: structured" in p.evidence
    schema = server.requests[0].body["format"]
    jsonschema.validate({"action": {"type": "tap", "element": "Display [3]"}, "why": "it leads there"}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"action": {"type": "tap", "element": "Alarm tab [2]"}, "why": "it leads there"}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"action": {"type": "open_app", "app": "Weather"}, "why": "it leads there"}, schema)
    assert '"type": "tap"' in server.requests[0].prompt and "Apps you can open: Settings, Clock, Notes" in \
        server.requests[0].prompt


def test_openai_style_servers_get_the_schema_in_response_format(server, openai_client):
    server.on("", reply({"type": "type", "element": "Search settings [5]", "text": "dark"}))
    p = make_planner("zeroshot-", openai_client, constrained=True).propose(ctx_for(settings_parse()))
    assert p.action.type is ActionType.TYPE and p.action.text == "dark" and p.action.target.element_id == "5"
    fmt = server.requests[0].body["response_format"]
    assert fmt["type"] == "json_object" and "oneOf" in fmt["schema"]["properties"]["action"]
    openai_client.schema_style = "json_schema"
    make_planner("zeroshot-", openai_client, constrained=True).propose(ctx_for(settings_parse()))
    fmt = server.requests[1].body["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["schema"]["required"] == ["action", "why"]


def test_a_server_that_ignores_the_schema_still_gets_read_as_free_text(server, ollama):
    server.on("", '{"answer": "tap Display"}', "tap Display")
    p = make_planner("zeroshot-", ollama, constrained=True).propose(ctx_for(settings_parse()))
    assert p.action.target.description == "Display"
    assert any(e.startswith("reply: outside the form") for e in p.evidence)


@dataclass
class PlainClient:
    """An LLM client that is not one of the project's backends (e.g. an adapter)."""

    inner: object
    model: str = "fake-model:latest"

    def chat(self, request: ChatRequest, cancel: CancelToken | None = None) -> LLMReply:
        return self.inner.chat(request, cancel)  # type: ignore[attr-defined]

    def list_models(self) -> list[str]:
        return [self.model]


def test_clients_that_cannot_enforce_a_schema_keep_the_free_text_prompt(server, ollama):
    server.on("", "tap Display")
    ollama.schemas = False
    p = make_planner("zeroshot-", ollama, constrained=True).propose(ctx_for(settings_parse()))
    assert p.action.target.description == "Display" and server.requests[0].body.get("format") is None
    make_planner("zeroshot-", PlainClient(ollama), constrained=True).propose(ctx_for(settings_parse()))
    assert "Next action:" in server.requests[1].prompt


def test_visiontasker_structured_needs_no_replan(server, ollama):
    server.on("", reply({"element": "Display [3]", "type": "tap"}, needed="Display"))
    p = make_planner("visiontasker", ollama, constrained=True).propose(ctx_for(settings_parse()))
    assert p.action.touch is not None and p.action.target.element_id == "3"
    assert len(server.requests) == 1 and server.requests[0].body["format"]["required"] == ["needed", "action", "why"]


def test_react_reasons_first_then_acts(server, ollama):
    server.on("", reply({"type": "tap", "element": "Alarm [2]"}, thought="alarms live in the Alarm tab"))
    p = make_planner("react-", ollama, constrained=True).propose(ctx_for(clock_parse(), goal="Set an alarm"))
    assert p.rationale == "alarms live in the Alarm tab" and p.action.target.element_id == "2"
    assert list(server.requests[0].body["format"]["properties"]) == ["thought", "action", "why"]


def test_cotsc_votes_over_structured_samples(server, ollama):
    server.on("", reply({"type": "tap", "element": "Alarm [2]"}, reasoning="a"),
              reply({"type": "tap", "element": "Clock [3]"}, reasoning="b"),
              reply({"type": "tap", "element": "Alarm [2]"}, reasoning="c"))
    p = make_planner("cotsc-", ollama, constrained=True, samples=3).propose(ctx_for(clock_parse(), goal="Set an alarm"))
    assert p.action.target.element_id == "2" and p.confidence == pytest.approx(2 / 3, abs=1e-3)


def test_plus_planners_are_not_offered_done(server, ollama):
    server.on("", reply({"type": "back"}))
    make_planner("zeroshot+", ollama, constrained=True).propose(ctx_for(settings_parse()))
    kinds = [v["properties"]["type"]["const"] for v in server.requests[0].body["format"]["properties"]["action"]["oneOf"]]
    assert "complete" not in kinds and "back" in kinds


def test_chain_of_action_plans_with_action_types_and_acts_on_the_screen(server, ollama):
    server.on("", json.dumps({"plan": ["tap", "complete"], "action": {"type": "tap", "element": "Alarm [2]"},
                              "reason": "alarms are made there"}))
    p = make_planner("chain", ollama, constrained=True).propose(ctx_for(clock_parse(), goal="Set an alarm"))
    assert p.plan == ("tap", "complete") and p.action.target.element_id == "2"
    schema = server.requests[0].body["format"]
    assert list(schema["properties"]) == ["plan", "action", "reason"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"plan": ["teleport"], "action": {"type": "back"}, "reason": ""}, schema)


def test_a_free_reply_naming_nothing_on_screen_is_recorded_as_evidence(server, ollama):
    server.on("", "tap the Alarm tab")
    p = make_planner("zeroshot-", ollama).propose(ctx_for(settings_parse()))
    assert "reply: names no element on this screen ('Alarm tab')" in p.evidence


def test_an_action_that_changed_nothing_comes_back_as_a_note(server, ollama):
    server.on("", "tap Display")
    parse = settings_parse()
    same = (Turn("tap Sound & vibration", Action.simple("back"), screen=fenced(parse.description)),)
    make_planner("zeroshot-", ollama).propose(ctx_for(parse, history=same))
    assert '"go back" changed nothing on the screen' in server.requests[0].prompt
    other = (Turn("go back", Action.simple("back"), screen=fenced(clock_parse().description)),)
    make_planner("visiontasker", ollama, constrained=True).propose(ctx_for(parse, history=other))
    assert "changed nothing" not in server.requests[1].prompt
    waited = (Turn("wait", Action.simple("wait"), screen=fenced(parse.description)),)
    make_planner("zeroshot-", ollama).propose(ctx_for(parse, history=waited))
    assert "changed nothing" not in server.requests[2].prompt


def _phone_words() -> set[str]:
    """Words on the virtual phone's screens: every app's first screen and the launcher."""
    from phone.virtual.phone import VirtualPhone

    phone = VirtualPhone(seed=0)
    words: set[str] = set()
    try:
        for name, _pkg in [("", "")] + phone.installed_apps():
            if name:
                phone.open_app(name)
            for e in phone.ground_truth().elements:
                words |= {w.lower() for w in re.findall(r"[A-Za-z]{4,}", f"{e.text} {e.label}")}
    finally:
        phone.close()
    return words


#: Plain English words the examples may share with the phone's screens.
_GENERIC = {"from", "list", "more", "page", "still", "with", "text", "next", "name", "that", "this", "what", "only"}


def test_worked_examples_use_a_made_up_app_not_this_phones_words():
    phone = _phone_words()
    assert {"settings", "alarm", "display", "clock"} <= phone  # the phone's words were collected
    for name in ("examples_cotsc", "examples_react", "examples_cotsc_json", "examples_react_json", "style_zeroshot"):
        used = {w.lower() for w in re.findall(r"[A-Za-z]{4,}", prompts.render(name))}
        assert not (used & phone) - _GENERIC, name


def test_every_placeholder_in_the_prompts_is_refused_by_the_parser():
    forms = re.compile(r"^(?:tap|long press|type|open) .*<[^>]+>.*$", re.M)
    found = 0
    for name in prompts.names():
        for line in forms.findall(prompts.render(name, **{k: "" for k in _keys(name)})):
            found += 1
            with pytest.raises(CommandError):
                parse_command(line.split("   ")[0])
    assert found >= 3


def _keys(name: str) -> list[str]:
    return re.findall(r"\$(\w+)", prompts.template(name).template)


def test_structured_calls_are_recorded_like_any_other(server, ollama):
    server.on("", reply({"type": "home"}))
    p = make_planner("zeroshot-", ollama, constrained=True).propose(ctx_for(settings_parse()))
    assert p.action.type is ActionType.HOME
    assert all(isinstance(c, LLMCall) and c.purpose == "plan.zeroshot-" for c in p.llm_calls)


def test_a_structured_reply_cannot_repeat_an_action_that_changed_nothing(server, ollama):
    server.on("", reply({"type": "tap", "element": "Sound & vibration [4]"}))
    parse = settings_parse()
    display = Action(ActionType.TAP, target=Target(element_id="3", description="Display"))
    same = (Turn("tap Display", display, screen=fenced(parse.description)),)
    make_planner("zeroshot-", ollama, constrained=True).propose(ctx_for(parse, history=same))
    schema = server.requests[0].body["format"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"action": {"type": "tap", "element": "Display [3]"}, "why": "it leads there"}, schema)
    jsonschema.validate({"action": {"type": "tap", "element": "Sound & vibration [4]"}, "why": "it leads there"}, schema)
    assert '"tap Display" changed nothing on the screen' in server.requests[0].prompt


def test_back_on_a_page_left_before_the_way_back_out_is_not_offered_again(server, ollama):
    """Settings -> Display -> back -> Display again: on Display the second time, "back" (the
    way out of the detour) is not offered, while "Display" was offered on Settings again."""
    server.on("", reply({"type": "tap", "element": "Sound & vibration [4]"}))
    settings, display_page = fenced(settings_parse().description), fenced(clock_parse().description)
    into = Action(ActionType.TAP, target=Target(element_id="3", description="Display"))
    out = Action.simple("back")
    history = (Turn("tap Display", into, screen=settings), Turn("back", out, screen=display_page))
    planner = make_planner("zeroshot-", ollama, constrained=True)
    planner.propose(ctx_for(settings_parse(), history=history))  # on Settings again: Display still offered
    jsonschema.validate({"action": {"type": "tap", "element": "Display [3]"}, "why": "it leads there"}, server.requests[0].body["format"])
    jsonschema.validate({"action": {"type": "back"}, "why": "it leads there"}, server.requests[0].body["format"])
    again = (*history, Turn("tap Display", into, screen=settings))
    planner.propose(ctx_for(clock_parse(), history=again))  # on the Display page again: no "back"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"action": {"type": "back"}, "why": "it leads there"}, server.requests[1].body["format"])
    jsonschema.validate({"action": {"type": "home"}, "why": "it leads there"}, server.requests[1].body["format"])
