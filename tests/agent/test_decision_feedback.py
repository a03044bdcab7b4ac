"""Every decision shapes what comes next, and the run ends with one honest verdict.

The loop runs on the virtual phone with the scripted model server over real HTTP: a
rejected action is never proposed again on its screen (whatever ticks on it), the reason
reaches the next prompt, an edit is told to the planner as a correction, two rejections
bring other candidates to pick, the repeat rule counts only the agent's own actions that
changed nothing, and the phone's oracle (or the user) has the last word on success.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from agent.effects import screen_identity
from agent.events import AwaitingDecision, Executed, Finished, Proposed, Working
from agent.feedback import Feedback, choice_of
from agent.planners.base import PlanContext, Structured
from agent.runner import CHECKED_ON_PHONE
from agent.types import Action, ActionType, Decision, DecisionKind, EpisodeStatus, Target
from phone.virtual.phone import VirtualPhone
from phone.virtual.tasks import load_tasks
from tests.agent.helpers import run
from tests.agent.screens import SIZE, el, settings_parse
from vision.geometry import Rect
from vision.types import ElementKind, ScreenParse

TASKS = {t.id: t for t in load_tasks()}
APPROVE = Decision(DecisionKind.APPROVE)


@pytest.fixture
def phone():
    p = VirtualPhone()
    TASKS["settings.wifi_off"].setup(p)
    yield p
    p.close()


def proposals(events) -> list[str]:
    return [e.proposal.action.describe() for e in events if isinstance(e, AwaitingDecision)]


def test_a_rejected_action_is_not_proposed_again_on_that_screen_and_its_reason_is_in_the_next_prompt(
        server, ollama, phone):
    # the model keeps naming "Navigate up"; once rejected it is asked again, never shown again
    server.on("Next action:", "open Settings", "tap Network & internet", "tap Navigate up", "tap Navigate up",
              "tap Internet")
    answers = iter([APPROVE, APPROVE, Decision(DecisionKind.REJECT, feedback="wrong way, Wi-Fi is under Internet"),
                    Decision(DecisionKind.ABORT)])
    events = run("Turn off Wi-Fi", phone, ollama, mode="approve", decide=lambda ev: next(answers))
    shown = proposals(events)
    assert shown[2].startswith("tap Navigate up")
    assert shown[3].startswith("tap Internet"), shown
    after_reject = server.prompts("Next action:")[3]
    assert "wrong way, Wi-Fi is under Internet" in after_reject
    step = [e for e in events if isinstance(e, Proposed)][-1]
    assert any("was rejected on this screen" in line for line in step.proposal.evidence)


def test_without_feedback_the_rejected_action_comes_back(server, ollama, phone):
    server.on("Next action:", "open Settings", "tap Network & internet", "tap Navigate up")
    answers = iter([APPROVE, APPROVE, Decision(DecisionKind.REJECT, feedback="no"), Decision(DecisionKind.ABORT)])
    events = run("Turn off Wi-Fi", phone, ollama, mode="approve", feedback=False, decide=lambda ev: next(answers))
    assert proposals(events)[3].startswith("tap Navigate up")


def test_an_edit_is_told_to_the_planner_as_a_correction(server, ollama, phone):
    server.on("Next action:", "open Settings", "tap Network & internet", "tap Navigate up", "tap Wi-Fi")
    answers = iter([APPROVE, APPROVE, Decision(DecisionKind.EDIT, action=Action(
        ActionType.TAP, target=Target(description="Internet"))), Decision(DecisionKind.ABORT)])
    run("Turn off Wi-Fi", phone, ollama, mode="approve", decide=lambda ev: next(answers))
    prompt = server.prompts("Next action:")[3]
    assert "instead of \"tap Navigate up\"" in prompt and "tap Internet" in prompt


def test_two_rejections_on_one_screen_offer_other_candidates(server, ollama, phone):
    server.on("Next action:", "open Settings", "tap Display", "tap Sound & vibration", "tap Battery")
    seen: list[AwaitingDecision] = []

    def decide(ev: AwaitingDecision) -> Decision:
        seen.append(ev)
        if len(seen) == 1:
            return APPROVE
        if len(seen) in (2, 3):
            return Decision(DecisionKind.REJECT, feedback="not that one")
        return Decision(DecisionKind.ABORT)

    run("Turn off Wi-Fi", phone, ollama, mode="approve", decide=decide)
    assert not seen[1].alternatives and not seen[2].alternatives
    offered = [a.target.description for a in seen[3].alternatives]
    assert offered and "Display" not in offered and "Sound & vibration" not in offered
    assert offered[0] == "Network & internet"  # the goal's words rank it first


def test_screen_identity_ignores_the_clock_and_status_icons_but_not_other_words():
    base = settings_parse()
    bar = el("s", "12:05  wifi  82%", 0, ElementKind.STATUS_BAR)
    later = el("s", "12:07  82%", 0, ElementKind.STATUS_BAR)
    ticking = replace(base, elements=(bar, *base.elements))
    ticked = replace(base, elements=(later, *base.elements))
    other = replace(base, elements=(bar, *base.elements[:-1]))
    assert screen_identity(ticking, "s") == screen_identity(ticked, "s")
    assert screen_identity(ticking, "s") != screen_identity(other, "s")


def test_the_structured_form_leaves_out_what_was_rejected_even_after_a_new_parse():
    parse = settings_parse()
    fb = Feedback()
    fb.reject("screen", Action(ActionType.TAP, target=Target(element_id="3")), parse, "not Display")
    renumbered = replace(parse, elements=tuple(replace(e, id=f"x{e.id}") for e in parse.elements))
    ctx = PlanContext(goal="Turn off Wi-Fi", parse=renumbered, screen="",
                      rejected=fb.excluded("screen", renumbered))
    form = Structured(enabled=True).form(ctx)
    keys = [c.key for c in form.tappable]
    assert not any(k.startswith("Display") for k in keys) and any(k.startswith("Network") for k in keys)
    tap = Action(ActionType.TAP, target=Target(element_id="x3"))
    assert fb.matching("screen", tap, renumbered) is not None
    assert choice_of(tap, renumbered) == choice_of(Action(ActionType.TAP, target=Target(element_id="3")), parse)


def test_a_user_edit_that_changes_nothing_does_not_count_towards_the_repeat_rule(server, ollama, phone):
    server.on("Next action:", "go back")  # on the home screen Back changes nothing
    events = run("Find something", phone, ollama, mode="approve", max_steps=5,
                 decide=lambda ev: Decision(DecisionKind.EDIT, action=Action.simple(ActionType.BACK)))
    fin = events[-1]
    assert isinstance(fin, Finished) and "step budget" in fin.note, fin.note
    assert sum(isinstance(e, Executed) for e in events) == 5


def test_the_phones_oracle_decides_success(server, ollama, phone):
    task = TASKS["settings.wifi_off"]
    server.on("Next action:", "open Settings", "tap Network & internet", "tap Internet", "tap the Wi-Fi switch",
              "tap the Wi-Fi switch")
    events = run(task.goal, phone, ollama, _extra={"judge": lambda final: task.is_success(phone, final)})
    fin = events[-1]
    assert fin.status is EpisodeStatus.SUCCEEDED and fin.note == CHECKED_ON_PHONE
    assert sum(isinstance(e, Executed) for e in events) == 4  # it stopped as soon as Wi-Fi was off


def test_a_done_the_phone_does_not_confirm_is_a_failure(server, ollama, phone):
    task = TASKS["settings.wifi_off"]
    server.on("Next action:", "open Settings", "done")
    events = run(task.goal, phone, ollama, _extra={"judge": lambda final: task.is_success(phone, final)})
    assert events[-1].status is EpisodeStatus.FAILED and "phone shows it is not" in events[-1].note


def test_on_a_real_phone_the_user_is_asked_whether_the_task_is_done(server, ollama, phone):
    server.on("Next action:", "open Settings", "done")
    asked: list[AwaitingDecision] = []

    def decide(ev: AwaitingDecision) -> Decision:
        asked.append(ev)
        return APPROVE

    events = run("Open Settings", phone, ollama, confirm_done=True, decide=decide)
    assert len(asked) == 1 and asked[0].confirm_done and "is the task done" in asked[0].reason
    assert events[-1].status is EpisodeStatus.SUCCEEDED and "confirmed by the user" in events[-1].note


def test_a_user_saying_not_done_keeps_the_run_going(server, ollama, phone):
    server.on("Next action:", "open Settings", "done", "tap Network & internet", "done")
    answers = iter([Decision(DecisionKind.REJECT, feedback="Wi-Fi is still on"), APPROVE])
    events = run("Turn off Wi-Fi", phone, ollama, confirm_done=True, decide=lambda ev: next(answers))
    assert "the task is not done yet: Wi-Fi is still on" in server.prompts("Next action:")[2]
    assert events[-1].status is EpisodeStatus.SUCCEEDED


def test_working_events_say_which_stage_and_call_of_the_step(server, ollama, phone):
    server.on("Next action:", "open Settings", "done")
    events = run("Open Settings", phone, ollama)
    stages = [(e.stage, e.call, e.calls) for e in events if isinstance(e, Working)]
    assert ("reading the screen", 0, 0) in stages and ("planning the next action", 1, 1) in stages


def test_an_empty_parse_has_an_identity_too():
    empty = ScreenParse(SIZE, ())
    assert screen_identity(empty) == screen_identity(ScreenParse(SIZE, (el("s", "9:41", 0, ElementKind.STATUS_BAR),)))
    assert Rect(0, 0, 1, 1).area == 1


def test_a_pause_interrupts_the_call_in_progress_and_the_step_starts_again(server, ollama, phone):
    import threading

    from agent.llm.base import CancelToken
    from tests.agent.fake_ollama import Reply

    server.on("Next action:", Reply("open Settings", delay_s=3.0), "open Settings", "done")
    token = CancelToken()
    threading.Timer(0.5, token.interrupt).start()  # the user presses Pause during the slow call
    events = run("Open Settings", phone, ollama, _extra={"cancel": token})
    paused = [e for e in events if isinstance(e, Working) and e.stage.startswith("paused")]
    assert len(paused) == 1 and paused[0].step == 0
    executed = [e for e in events if isinstance(e, Executed)]
    assert [e.step for e in executed] == [0, 1]  # the interrupted step 0 ran again, no gap
    assert events[-1].status is EpisodeStatus.SUCCEEDED


def test_a_rejected_typing_is_left_out_of_the_form_too():
    parse = settings_parse()
    fb = Feedback()
    fb.reject("screen", Action.type_text("wifi", Target(element_id="5")), parse, "search is not needed")
    excluded = fb.excluded("screen", parse)
    assert [(a.type, a.target.element_id) for a in excluded] == [(ActionType.TYPE, "5")]
    form = Structured(enabled=True).form(PlanContext(goal="Turn off Wi-Fi", parse=parse, screen="", rejected=excluded))
    assert not form.editable
