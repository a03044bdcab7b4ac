"""Each planner driven by the scripted fake server over real HTTP with the real clients."""

from __future__ import annotations

import pytest

from agent.llm.base import RetryPolicy
from agent.llm.ollama_client import OllamaClient
from agent.planners import PLANNER_NAMES, PlanContext, PlanError, Turn, make_planner
from agent.screen_text import fenced
from agent.types import Action, ActionType, LatentState
from tests.agent.fake_ollama import Reply
from tests.agent.screens import clock_parse, settings_parse


def ctx_for(parse, goal="Turn on dark theme", **kw) -> PlanContext:
    return PlanContext(goal=goal, parse=parse, screen=fenced(parse.description), **kw)


def test_registry_builds_all_eight_planners(ollama):
    # "adapter" needs a GUI-agent model; "auto" and "prompt2task" build zero-shot+
    names = {make_planner(n, ollama).name for n in PLANNER_NAMES if n != "adapter"}
    assert names == {"zeroshot+", "zeroshot-", "cotsc+", "cotsc-", "react+", "react-", "visiontasker", "chain"}
    with pytest.raises(ValueError, match="choose one of"):
        make_planner("magic", ollama)


def test_auto_keeps_to_one_call_per_step_for_a_slow_model():
    from agent.planners.registry import auto_planner

    assert auto_planner(None) == "zeroshot+" and auto_planner(1.0) == "zeroshot+"
    assert auto_planner(15.0) == "visiontasker"


def test_zeroshot_minus_sees_history_and_can_say_done(server, ollama):
    server.on("Next action:", "tap Display")
    hist = (Turn("open Settings", Action.open_app("Settings")),)
    p = make_planner("zeroshot-", ollama).propose(ctx_for(settings_parse(), history=hist))
    assert p.action.type is ActionType.TAP and p.action.target.description == "Display"
    prompt = server.requests[0].prompt
    assert "1) open Settings" in prompt and 'reply "done"' in prompt
    assert p.llm_calls[0].prompt_tokens == 11


def test_zeroshot_plus_sees_progress_and_mistakes_not_done(server, ollama):
    server.on("Next action:", "done")
    lat = LatentState(progression="You have opened Settings.", mistakes="No mistakes.")
    p = make_planner("zeroshot+", ollama).propose(ctx_for(settings_parse(), latent=lat))
    prompt = server.requests[0].prompt
    assert "You have opened Settings." in prompt and 'reply "done"' not in prompt
    assert p.action.type is ActionType.WAIT  # "+" agents stop on the completion estimate only


def test_unreadable_reply_is_asked_again_then_parsed(server, ollama):
    server.on("could not be read as a phone action", "tap Display")
    server.on("Next action:", "Hmm, interesting screen!")
    p = make_planner("zeroshot-", ollama).propose(ctx_for(settings_parse()))
    assert p.action.target.description == "Display"
    assert [c.purpose for c in p.llm_calls] == ["plan.zeroshot-", "plan.zeroshot-.reask"]


def test_unreadable_twice_is_a_plan_error_keeping_the_calls(server, ollama):
    server.on("", "no idea")
    with pytest.raises(PlanError, match="unreadable reply") as info:
        make_planner("zeroshot-", ollama).propose(ctx_for(settings_parse()))
    assert len(info.value.calls) == 2


def test_timeout_becomes_a_plan_error(server):
    server.on("", Reply("tap Display", delay_s=0.6))
    slow = OllamaClient(model="m", host=server.url, policy=RetryPolicy(attempts=2, backoff_s=0.01, timeout_s=0.2))
    with pytest.raises(PlanError, match="timed out"):
        make_planner("zeroshot-", slow).propose(ctx_for(settings_parse()))


def test_cotsc_takes_the_majority_of_normalised_samples(server, ollama):
    server.on('starts with "Answer:"', "Dark mode is a display thing. Answer: tap Display",
              "Answer: Tap the Display option.", "Answer: tap Sound & vibration", "I am confused", "Answer: tap display")
    planner = make_planner("cotsc-", ollama, samples=5, temperature=0.7)
    p = planner.propose(ctx_for(settings_parse()))
    assert p.action.target.description.lower().startswith("display")
    assert p.confidence == pytest.approx(3 / 5)
    assert len(p.llm_calls) == 5
    assert all(r.body["options"]["temperature"] == 0.7 for r in server.requests)
    assert "Answer: tap Ember" in server.requests[0].prompt  # worked examples, from a made-up app


def test_cotsc_with_no_readable_sample_is_a_plan_error(server, ollama):
    server.on("", "I really cannot say")
    with pytest.raises(PlanError, match="none of 3 samples"):
        make_planner("cotsc+", ollama, samples=3).propose(ctx_for(settings_parse()))


def test_react_keeps_only_the_last_two_observations(server, ollama):
    server.on("Thought: <what you notice", "The Alarm tab is what I need.\nAction: tap the Alarm tab")
    hist = tuple(Turn(f"cmd{i}", Action.simple("wait"), screen=f"<screen>\nSCREEN-{i}\n</screen>", thought=f"t{i}")
                 for i in range(1, 5))
    p = make_planner("react-", ollama).propose(ctx_for(clock_parse(), history=hist))
    prompt = server.requests[0].prompt
    assert "SCREEN-3" in prompt and "SCREEN-4" in prompt
    assert "SCREEN-1" not in prompt and "SCREEN-2" not in prompt
    assert "Action 1: cmd1" in prompt and "Thought 1: t1" in prompt
    assert p.action.target.description == "Alarm tab" and p.rationale == "The Alarm tab is what I need."


def test_visiontasker_replans_when_the_element_is_missing(server, ollama):
    server.on("does not name an element that exists", "tap [3] Display")
    server.on("Pick exactly one element", "tap [9] Bluetooth")
    p = make_planner("visiontasker", ollama).propose(ctx_for(settings_parse()))
    assert p.action.touch is not None and p.action.target.element_id == "3"
    replan = server.requests[1].prompt
    assert "there is no element [9]" in replan and '[3] button "Display"' in replan
    assert p.evidence[:2] == ("reply: there is no element [9] on this screen",
                              "re-plan 1: there is no element [9] on this screen")


def test_visiontasker_matches_by_words_and_uses_history_and_examples(server, ollama):
    server.on("Pick exactly one element", "tap Network & internet")
    hist = (Turn("open Settings", Action.open_app("Settings")),)
    p = make_planner("visiontasker", ollama).propose(
        ctx_for(settings_parse(), history=hist, examples=("Turn off Wi-Fi: open Settings -> tap Network & internet",)))
    assert p.action.target.element_id == "2"
    prompt = server.requests[0].prompt
    assert "Actions taken so far: open Settings" in prompt and "Turn off Wi-Fi: open Settings" in prompt


def test_visiontasker_takes_the_newest_step_of_a_reply_that_repeats_the_history(server, ollama):
    server.on("Pick exactly one element", "open Settings -> tap Display")
    hist = (Turn("open Settings", Action.open_app("Settings")),)
    p = make_planner("visiontasker", ollama).propose(ctx_for(settings_parse(), history=hist))
    assert p.action.type is ActionType.TAP and p.action.target.element_id == "3" and len(server.requests) == 1


def test_visiontasker_replans_when_a_reply_types_into_something_that_is_no_field(server, ollama):
    server.on("does not name an element that exists", "tap [3] Display")
    server.on("Pick exactly one element", "type 'dark' in [3] Display")
    p = make_planner("visiontasker", ollama).propose(ctx_for(settings_parse()))
    assert p.action.type is ActionType.TAP and p.action.target.element_id == "3"
    assert "not a text field" in server.requests[1].prompt


def test_visiontasker_gives_up_after_its_replans(server, ollama):
    server.on("", "tap Bluetooth")
    with pytest.raises(PlanError, match="no valid element after 2 re-plans"):
        make_planner("visiontasker", ollama).propose(ctx_for(settings_parse()))
    assert len(server.requests) == 3


def test_chain_of_action_returns_the_plan_for_the_user(server, ollama):
    server.on("Plan ahead, then act.", '{"plan": ["tap", "complete"], "action": {"action": "tap", "element": "2"},'
              ' "reason": "alarms live in the Alarm tab"}')
    hist = (Turn("open Clock", Action.open_app("Clock")), Turn("tap", Action.tap(540, 1200)))
    p = make_planner("chain", ollama).propose(ctx_for(clock_parse(), goal="Set an alarm", history=hist))
    assert p.plan == ("tap", "complete") and p.action.target.element_id == "2"
    prompt = server.requests[0].prompt
    assert "action_type: dual_point, touch_point: [0.5, 0.5]" in prompt
    assert server.requests[0].body["format"] == "json"


def test_chain_of_action_malformed_json_is_a_plan_error(server, ollama):
    server.on("", "plan: tap then done")
    with pytest.raises(PlanError, match="malformed JSON"):
        make_planner("chain", ollama).propose(ctx_for(clock_parse()))
