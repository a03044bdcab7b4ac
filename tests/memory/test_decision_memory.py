"""What the user decided once is proposed again, with no model call, where it fits.

Runs go through the real runner on the virtual phone with the scripted model server over
HTTP, the planner wrapped the way ``app.compose`` wraps it: a remembered step is proposed
at the same screen for the same (or an equivalent) goal and the model hears nothing; a
rejection retires it; a new app version makes it a hint for the model; a step approved
automatically is not the user's decision and is not kept.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from agent.events import AwaitingDecision, Finished, RunSettings
from agent.memory.memory import DecisionMemory
from agent.memory.store import InMemoryDecisions
from agent.memory.types import MEMORY, How
from agent.planners import make_planner
from agent.runner import drive, run_episode
from agent.types import Action, ActionType, Decision, DecisionKind, EpisodeStatus, Target
from app.compose import with_memory
from phone.virtual.phone import VirtualPhone
from phone.virtual.tasks import load_tasks
from tests.agent.helpers import TREE

TASKS = {t.id: t for t in load_tasks()}
APPROVE = Decision(DecisionKind.APPROVE)


@dataclass
class Versioned:
    """The virtual phone, saying which version each app is (as a real phone's dumpsys does)."""

    phone: VirtualPhone
    version: str = "1.0"

    def __getattr__(self, name: str) -> Any:
        return getattr(self.phone, name)

    def app_version(self, package: str) -> str:
        return self.version


def supervised(goal: str, task: str, client, memory: DecisionMemory, decide=None, *, version: str = "1.0",
               mode: str = "approve") -> tuple[list, Finished]:
    """One run of ``task`` worded as ``goal``, every question answered by ``decide``."""
    phone = VirtualPhone()
    TASKS[task].setup(phone)
    device = Versioned(phone, version)
    judge = lambda final: bool(TASKS[task].is_success(phone, final))  # noqa: E731
    planner = make_planner("zeroshot-", client)

    def episode(p):
        return run_episode(goal, device, TREE, p, None, judge=judge,
                           settings=RunSettings(mode=mode, max_steps=8, max_wait_s=0.0, ask_on_error=True))

    events = list(drive(with_memory(planner, episode, memory, goal, device, client), decide or (lambda ev: APPROVE)))
    phone.close()
    finished = next(e for e in events if isinstance(e, Finished))
    return [e for e in events if isinstance(e, AwaitingDecision)], finished


def choosing(answer: str):
    """A model that chooses the line reading ``answer`` in "Choose one:" lists (and says
    "wait" to anything else)."""
    import json
    import re

    def respond(prompt: str) -> str:
        m = re.search(rf"^(\d+)\. {re.escape(answer)}$", prompt, re.M)
        return json.dumps({"same": int(m.group(1)), "reason": "read it"}) if m else "wait"

    return respond


def forget_script(server) -> None:
    """The server forgets its replies and the prompts it saw (the next run starts clean)."""
    server.rules.clear()
    server.requests.clear()
    server.responder = None


AIRPLANE = ("open Settings", "tap Network & internet", "tap Airplane mode")


@pytest.fixture
def memory() -> DecisionMemory:
    return DecisionMemory(InMemoryDecisions())


def taught(server, client, memory) -> None:
    """A first run of "Turn on airplane mode" the user approved step by step."""
    server.on("Next action:", *AIRPLANE)
    _, done = supervised("Turn on airplane mode", "settings.airplane_on", client, memory)
    assert done.status is EpisodeStatus.SUCCEEDED
    forget_script(server)


def test_a_remembered_screen_gets_the_approved_step_with_no_model_call_and_the_card_says_so(server, ollama, memory):
    taught(server, ollama, memory)
    assert [e.how for e in memory.all()] == [How.APPROVED] * 3
    asked, done = supervised("Turn on airplane mode", "settings.airplane_on", ollama, memory)
    assert done.status is EpisodeStatus.SUCCEEDED
    assert not server.prompts(""), "the model must not be called"
    assert [q.proposal.planner for q in asked] == [MEMORY] * 3
    assert all(q.proposal.rationale.startswith("You approved this on ") for q in asked)
    assert all(not q.proposal.llm_calls for q in asked)


def test_another_goal_misses_and_the_model_is_asked(server, ollama, memory):
    taught(server, ollama, memory)
    server.on("Next action:", "open Settings", "tap Network & internet", "tap Data Saver")
    asked, done = supervised("Turn on Data Saver", "settings.data_saver_on", ollama, memory)
    assert done.status is EpisodeStatus.SUCCEEDED
    assert [q.proposal.planner for q in asked] != [MEMORY] * len(asked)
    assert all(q.proposal.planner != MEMORY for q in asked)
    assert len(server.prompts("Next action:")) == 3


def test_an_equivalent_goal_uses_the_memory_and_a_merely_similar_one_does_not(server, ollama, memory):
    server.on("Next action:", "open Settings", "tap Network & internet", "tap Internet", "tap Wi-Fi")
    _, done = supervised("Turn off Wi-Fi", "settings.wifi_off", ollama, memory)
    assert done.status is EpisodeStatus.SUCCEEDED
    forget_script(server)
    asked, done = supervised("Disable wifi", "settings.wifi_off", ollama, memory)
    assert done.status is EpisodeStatus.SUCCEEDED and not server.prompts("")
    assert "for “Turn off Wi-Fi”" in asked[0].proposal.rationale
    server.on("Next action:", "open Settings", "tap Network & internet", "tap SIMs", "tap Mobile data")
    asked, _ = supervised("Turn off mobile data", "settings.mobile_data_off", ollama, memory)
    assert all(q.proposal.planner != MEMORY for q in asked)


def test_a_rejected_remembered_step_is_retired_and_the_model_plans_that_screen(server, ollama, memory):
    taught(server, ollama, memory)
    server.on("Next action:", "open Clock")
    answers = iter([Decision(DecisionKind.REJECT, feedback="not today"), Decision(DecisionKind.ABORT)])
    asked, _ = supervised("Turn on airplane mode", "settings.airplane_on", ollama, memory, lambda ev: next(answers))
    assert asked[0].proposal.planner == MEMORY and asked[1].proposal.planner != MEMORY
    assert len(server.prompts("Next action:")) == 1  # the model plans the screen whose memory was retired
    retired = [e for e in memory.all() if e.retired]
    assert [e.action.type for e in retired] == [ActionType.OPEN_APP] and "not today" in retired[0].retired
    forget_script(server)
    server.on("Next action:", "open Settings")
    asked, _ = supervised("Turn on airplane mode", "settings.airplane_on", ollama, memory,
                          lambda ev: APPROVE if len(server.prompts("Next action:")) < 2 else Decision(
                              DecisionKind.ABORT))
    assert asked[0].proposal.planner != MEMORY  # retired for good, not only for that run
    assert asked[1].proposal.planner == MEMORY  # the next screen's memory is untouched


def test_a_new_app_version_demotes_the_step_to_a_hint_for_the_model(server, ollama, memory):
    taught(server, ollama, memory)
    server.on("Next action:", "open Settings", "tap Network & internet", "tap Airplane mode")
    asked, done = supervised("Turn on airplane mode", "settings.airplane_on", ollama, memory, version="2.0")
    assert done.status is EpisodeStatus.SUCCEEDED
    assert all(q.proposal.planner != MEMORY for q in asked)
    prompts = server.prompts("Next action:")
    assert len(prompts) == 3
    assert any("remembered for version 1.0 of the app; the phone has 2.0" in p for p in prompts)


def test_an_edit_and_a_demonstration_are_remembered_as_such(server, ollama, memory):
    server.on("Next action:", "open Clock", "tap Network & internet", "tap Data Saver")
    answers = iter([Decision(DecisionKind.EDIT, action=Action.open_app("Settings")),
                    Decision(DecisionKind.DEMONSTRATE, action=Action(ActionType.TAP, target=Target(
                        description="Network & internet"))), APPROVE])
    _, done = supervised("Turn on Data Saver", "settings.data_saver_on", ollama, memory, lambda ev: next(answers))
    assert done.status is EpisodeStatus.SUCCEEDED
    assert [e.how for e in memory.all()] == [How.EDITED, How.DEMONSTRATED, How.APPROVED]
    forget_script(server)
    asked, _ = supervised("Turn on Data Saver", "settings.data_saver_on", ollama, memory)
    assert [q.proposal.rationale.split(" on ")[0] for q in asked] == [
        "You edited this", "You demonstrated this", "You approved this"]
    assert not server.prompts("")


def test_steps_run_on_autonomy_are_not_the_users_decisions(server, ollama, memory):
    server.on("Next action:", *AIRPLANE)
    supervised("Turn on airplane mode", "settings.airplane_on", ollama, memory, mode="auto")
    assert memory.all() == []


def test_a_goal_in_other_words_is_recognised_by_the_model_once_and_the_call_is_counted(server, ollama, memory):
    taught(server, ollama, memory)
    server.responder = choosing("Turn on airplane mode")
    asked, done = supervised("Put the phone in flight mode", "settings.airplane_on", ollama, memory)
    assert done.status is EpisodeStatus.SUCCEEDED
    assert [q.proposal.planner for q in asked] == [MEMORY] * 3
    assert "for “Turn on airplane mode”" in asked[0].proposal.rationale
    # one question, asked twice (the list the other way round), for the whole run; no planning call
    assert len(server.prompts("")) == 2
    assert [c.purpose for c in asked[0].proposal.llm_calls] == ["memory.same_task"] * 2
    # what the user approved in this wording is now remembered for it: next time, no question
    forget_script(server)
    asked, _ = supervised("Put the phone in flight mode", "settings.airplane_on", ollama, memory)
    assert not server.prompts("") and "for “" not in asked[0].proposal.rationale


def test_a_model_that_picks_the_first_line_whatever_it_says_is_not_believed(server, ollama, memory):
    taught(server, ollama, memory)
    server.on("Choose one:", '{"same": 1, "reason": "the first one"}')
    server.on("Next action:", "open Settings", "tap Network & internet", "tap Data Saver")
    asked, done = supervised("Turn on Data Saver", "settings.data_saver_on", ollama, memory)
    assert done.status is EpisodeStatus.SUCCEEDED and all(q.proposal.planner != MEMORY for q in asked)
    assert len(server.prompts("Choose one:")) == 2


def test_when_the_model_says_none_the_run_plans_as_usual(server, ollama, memory):
    taught(server, ollama, memory)
    server.responder = choosing("none of these: a new task")
    server.on("Next action:", "open Settings", "tap Network & internet", "tap Data Saver")
    asked, done = supervised("Turn on Data Saver", "settings.data_saver_on", ollama, memory)
    assert done.status is EpisodeStatus.SUCCEEDED and all(q.proposal.planner != MEMORY for q in asked)
    assert len(server.prompts("Choose one:")) == 1  # "none" the first time: not asked again
