"""Escalation one step at a time: the run's model proposes; the bigger model takes the
step when the small one is unsure or stuck, when the user rejected proposals on the
screen, or when the user asks ("Ask the bigger model").  The proposal names its model,
the user's consent is asked per task and remembered per model, and a "no" keeps the
small model's step.  Both models are scripted servers over real HTTP."""

from __future__ import annotations

import pytest

from agent.events import AwaitingDecision, Finished, Proposed
from agent.privacy import Consent, ConsentAnswer, ConsentKind, ConsentQuestion, InMemoryConsents
from agent.runner import drive
from agent.types import Decision, DecisionKind, EpisodeStatus
from app.compose import RunRequest, build_run, make_client, make_parser
from app.settings import AgentSettings, EscalationSettings, Settings
from evaluation.scripted_model import ScriptedLLMServer
from phone.virtual.phone import VirtualPhone

SETTINGS = Settings(agent=AgentSettings(screen_evidence=False), escalation=EscalationSettings(model="big"))


class Gate:
    def __init__(self, answer: ConsentAnswer = ConsentAnswer.ONCE) -> None:
        self.answer = answer
        self.questions: list[ConsentQuestion] = []

    def ask(self, question: ConsentQuestion) -> ConsentAnswer:
        self.questions.append(question)
        return self.answer


def _run(small_reply, big_reply, decide, *, gate: Gate, memory=None, goal="Open the Clock app", steps=4):
    phone = VirtualPhone(seed=0)
    proposals = []
    with ScriptedLLMServer(responder=small_reply, models=("small",)) as s, \
            ScriptedLLMServer(responder=big_reply, models=("big",)) as b:
        client = make_client(SETTINGS, model="small", backend="openai", base_url=s.url)
        big = make_client(SETTINGS, model="big", backend="openai", base_url=b.url)
        built = build_run(RunRequest(goal, planner="zeroshot-", autonomy="approve", learn=False, model="small",
                                     max_steps=steps),
                          SETTINGS, device=phone, parser=make_parser(SETTINGS, mode="tree"), client=client,
                          bigger=big, consent=Consent(gate, memory), max_wait_s=0.0)
        events = []
        for ev in drive(built.events, decide):
            events.append(ev)
            if isinstance(ev, Proposed):
                proposals.append(ev.proposal)
        counts = (s.chat_requests, b.chat_requests)
    return events, proposals, counts, phone


def test_the_user_asks_the_bigger_model_and_the_card_names_it() -> None:
    asked: list[str] = []

    def decide(q: AwaitingDecision) -> Decision:
        asked.append(q.proposal.model)
        if q.proposal.model == "small":
            return Decision(DecisionKind.ESCALATE)
        return Decision(DecisionKind.APPROVE) if q.proposal.action.describe() == "open Clock" else \
            Decision(DecisionKind.ABORT)

    gate = Gate()
    events, proposals, (small_calls, big_calls), phone = _run(
        lambda p: "open Contacts", lambda p: "open Clock", decide, gate=gate, steps=1)
    assert asked == ["small", "big"]
    small, big = proposals
    assert small.model == "small" and not small.escalated
    assert big.model == "big" and big.escalated == "you asked for the bigger model"
    assert big.action.describe() == "open Clock" and phone.foreground()[0] == "com.google.android.deskclock"
    assert {c.model for c in big.llm_calls} == {"small", "big"}  # the stored step keeps both models' calls
    assert (small_calls, big_calls) == (1, 1)
    assert [q.kind for q in gate.questions] == [ConsentKind.ESCALATE] and gate.questions[0].model == "big"


def test_two_rejections_on_a_screen_send_the_step_to_the_bigger_model() -> None:
    def decide(q: AwaitingDecision) -> Decision:
        if q.proposal.model == "big":
            return Decision(DecisionKind.ABORT)
        return Decision(DecisionKind.REJECT, feedback="not that")

    replies = iter(["open Contacts", "open Notes", "open Shop", "open Files"])
    events, proposals, _, _ = _run(lambda p: next(replies), lambda p: "open Clock", decide, gate=Gate(), steps=6)
    models = [p.model for p in proposals]
    assert models == ["small", "small", "big"]
    assert proposals[-1].escalated == "you rejected 2 proposals on this screen"


def test_an_unusable_small_reply_is_escalated_a_no_keeps_the_small_model() -> None:
    def decide(q: AwaitingDecision) -> Decision:
        return Decision(DecisionKind.ABORT)

    # the small model names an app the phone does not have: its step cannot be used
    events, proposals, (_, big_calls), _ = _run(lambda p: "tap the Frobnicator", lambda p: "open Clock", decide,
                                                gate=Gate(), steps=1)
    assert proposals[0].model == "big" and "could not be used" in proposals[0].escalated
    answers = iter([Decision(DecisionKind.ESCALATE), Decision(DecisionKind.ABORT)])
    events, proposals, (_, big_calls), _ = _run(lambda p: "open Contacts", lambda p: "open Clock",
                                                lambda q: next(answers), gate=Gate(ConsentAnswer.NO), steps=1)
    assert big_calls == 0 and proposals[-1].model == "small"
    assert any("you did not allow it" in e for e in proposals[-1].evidence)


def test_consent_for_a_task_is_remembered_per_model() -> None:
    memory = InMemoryConsents()
    gate = Gate(ConsentAnswer.TASK)
    consent = Consent(gate, memory)
    q = ConsentQuestion(ConsentKind.ESCALATE, "big", goal="Open the Clock app", reason="r")
    assert consent.permit(q) and consent.permit(q) and len(gate.questions) == 1  # asked once for the task
    assert consent.permit(ConsentQuestion(ConsentKind.ESCALATE, "big", goal="open the  clock APP", reason="r"))
    assert len(gate.questions) == 1
    consent.permit(ConsentQuestion(ConsentKind.ESCALATE, "other", goal="Open the Clock app", reason="r"))
    consent.permit(ConsentQuestion(ConsentKind.ESCALATE, "big", goal="Open Contacts", reason="r"))
    assert len(gate.questions) == 3  # another model, another task: asked again
    # sending to a remote server is asked every run, never remembered
    send = ConsentQuestion(ConsentKind.SEND, "big", goal="Open the Clock app")
    consent.permit(send)
    consent.permit(send)
    assert len(gate.questions) == 5


def test_remembered_consents_survive_a_restart(tmp_path) -> None:
    from app.consents import FileConsents

    FileConsents(tmp_path / "c.json").remember(ConsentKind.ESCALATE, "qwen", "Turn off Wi-Fi")
    again = FileConsents(tmp_path / "c.json")
    assert again.allowed(ConsentKind.ESCALATE, "qwen", "turn off wi-fi")
    assert not again.allowed(ConsentKind.ESCALATE, "llama", "turn off wi-fi")
    assert again.models() == {"qwen": 1}
    again.forget("qwen")
    assert not FileConsents(tmp_path / "c.json").allowed(ConsentKind.ESCALATE, "qwen", "turn off wi-fi")


def test_a_disk_that_fills_up_while_consents_are_forgotten_loses_none_of_them(tmp_path, monkeypatch) -> None:
    from pathlib import Path

    from app.consents import FileConsents

    consents = FileConsents(tmp_path / "c.json")
    consents.remember(ConsentKind.ESCALATE, "qwen", "Turn off Wi-Fi")
    consents.remember(ConsentKind.ESCALATE, "llama", "Turn off Wi-Fi")

    def disk_full(self, text, encoding=None):  # the file is opened (emptied), then nothing fits
        with open(self, "w", encoding=encoding):
            raise OSError(28, "No space left on device")

    monkeypatch.setattr(Path, "write_text", disk_full)
    with pytest.raises(OSError):
        consents.forget("qwen")
    monkeypatch.undo()
    again = FileConsents(tmp_path / "c.json")
    assert again.models() == {"qwen": 1, "llama": 1}


def test_without_a_bigger_model_nothing_changes() -> None:
    phone = VirtualPhone(seed=0)
    settings = Settings(agent=AgentSettings(screen_evidence=False))
    with ScriptedLLMServer(default="open Clock", models=("small",)) as s:
        client = make_client(settings, model="small", backend="openai", base_url=s.url)
        built = build_run(RunRequest("Open the Clock app", planner="zeroshot-", autonomy="auto", learn=False,
                                     max_steps=2), settings, device=phone, parser=make_parser(settings, mode="tree"),
                          client=client, max_wait_s=0.0)
        events = list(drive(built.events))
    proposed = [e.proposal for e in events if isinstance(e, Proposed)]
    assert proposed and all(p.model == "" and not p.escalated for p in proposed)
    assert isinstance(events[-1], Finished) and events[-1].status in (EpisodeStatus.SUCCEEDED, EpisodeStatus.FAILED)


def test_an_unsure_grounding_sends_the_step_to_the_bigger_model() -> None:
    """"Show password" names both the check box and its label: the grounding margin is 0,
    so the small model's step is not sure enough and the bigger model plans it."""
    (p,), _counts = show_password_step(Gate())
    assert p.model == "big" and p.escalated.startswith("small was unsure (grounding margin 0%")
    assert p.action.describe() == "tap Username"
    assert [c.model for c in p.llm_calls] == ["small", "big"]


def test_an_unsure_grounding_the_user_keeps_from_the_bigger_model_keeps_the_grounded_step() -> None:
    """Refused, the step the small model already proposed and grounded is offered as it was:
    neither model is asked again, and its evidence (the grounding's margin) stays."""
    gate = Gate(ConsentAnswer.NO)
    (p,), counts = show_password_step(gate)
    assert counts == (1, 0) and [q.kind for q in gate.questions] == [ConsentKind.ESCALATE]
    assert p.model == "small" and not p.escalated and p.action.describe() == "tap Show password"
    assert p.action.touch is not None and [c.model for c in p.llm_calls] == ["small"]
    assert any("sim=" in e for e in p.evidence)  # the grounding's evidence is kept
    assert p.evidence[-1] == "not sent to big: you did not allow it"


def show_password_step(gate: Gate) -> tuple[list, tuple[int, int]]:
    """One approve-mode step of "Show my library password" on the Library's sign-in screen,
    a small model answering "tap Show password" and a bigger one "tap Username", consent
    asked through ``gate``: the proposals shown, and how many requests each model got."""
    phone = VirtualPhone(seed=0)
    phone.reset({"library": {}})
    phone.open_app("Library")
    proposals = []
    with ScriptedLLMServer(default="tap Show password", models=("small",)) as s, \
            ScriptedLLMServer(default="tap Username", models=("big",)) as b:
        built = build_run(RunRequest("Show my library password", planner="zeroshot-", autonomy="approve",
                                     learn=False, model="small", max_steps=1),
                          SETTINGS, device=phone, parser=make_parser(SETTINGS, mode="tree"),
                          client=make_client(SETTINGS, model="small", backend="openai", base_url=s.url),
                          bigger=make_client(SETTINGS, model="big", backend="openai", base_url=b.url),
                          consent=Consent(gate), max_wait_s=0.0)
        for ev in drive(built.events, lambda q: Decision(DecisionKind.ABORT)):
            if isinstance(ev, Proposed):
                proposals.append(ev.proposal)
        return proposals, (s.chat_requests, b.chat_requests)
