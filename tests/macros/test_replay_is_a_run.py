"""One decision loop: a macro replay is a run of the agent loop, so it yields the runner's
events and leaves the same step records in the store as a task run does."""

from __future__ import annotations

import pytest

from agent import events as run_events
from agent.events import AwaitingDecision, Executed, Finished, Proposed
from agent.macros.planner import needs_you
from agent.macros.replay import Replayer, run_unattended
from agent.planners.base import PlanContext
from agent.runner import drive, run_episode
from agent.types import Action, Decision, DecisionKind, EpisodeStatus, Proposal, StepOutcome
from app.storage import Store
from tests.macros.fakephone import FRENCH, FakePhone, Variant
from tests.macros.sim_support import drive_replay
from tests.macros.test_record_replay import record_new_alarm

RUN_EVENT_TYPES = set(run_events.Event.__args__)  # type: ignore[attr-defined]


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "replays.sqlite")
    yield s
    s.close()


class _Script:
    """A planner that proposes fixed actions: the smallest task run."""

    name = "script"
    uses_latent = False

    def __init__(self, actions: list[Action]) -> None:
        self.actions = list(actions)

    def propose(self, ctx: PlanContext) -> Proposal:
        return Proposal(self.actions.pop(0) if self.actions else Action.simple("complete"), planner=self.name)


def test_a_replay_is_stored_as_an_episode_whose_steps_read_back_like_a_runs(store):
    macro = record_new_alarm(FakePhone())
    phone = FakePhone()
    seen = []
    replay = Replayer(phone, phone.parser).start(macro, store=store)
    try:
        event = next(replay.events)
        while True:
            seen.append(event)
            event = replay.events.send(None)
    except StopIteration as stop:
        result = stop.value
    assert result.succeeded and phone.screen == "saved"
    # the events are the runner's own
    assert {type(e) for e in seen} <= RUN_EVENT_TYPES
    assert any(isinstance(e, Proposed) for e in seen) and isinstance(seen[-1], Finished)

    stored = store.load_episode(result.episode.id)
    assert stored.status is EpisodeStatus.SUCCEEDED and stored.planner == "macro"
    # setup (open the app), the four recorded steps, then the finishing step
    assert [s.outcome for s in stored.steps] == [StepOutcome.EXECUTED] * 5 + [StepOutcome.FINISHED]
    assert stored.steps[0].executed == Action.open_app(macro.app)
    assert stored.steps[3].executed.text == "Wake up"
    executed = [e.record for e in seen if isinstance(e, Executed)]
    assert [s.executed for s in stored.steps] == [r.executed for r in executed]
    for s in stored.steps:
        assert s.proposal is not None and s.proposal.planner == "macro" and s.decision is not None
        assert s.parse is not None and s.screenshot is not None  # the frame is kept, like a run's
        assert s.timing("execute") is not None or s.outcome is StepOutcome.FINISHED
    assert "found by its id" in stored.steps[1].proposal.rationale

    # a task run on the same phone and store reads back through the same code and types
    phone2 = FakePhone()
    taps = [Action.tap(*phone2.center_of("tab_alarm"))]
    run = run_episode("open the alarms", phone2, phone2.parser, _Script(taps), store)
    run_seen = list(drive(run))
    assert {type(e) for e in run_seen} <= RUN_EVENT_TYPES
    ep = next(e for e in run_seen if isinstance(e, Finished)).episode
    task = store.load_episode(ep.id)
    assert type(task.steps[0]) is type(stored.steps[0])
    assert {type(s.proposal) for s in task.steps} == {type(s.proposal) for s in stored.steps}
    ids = {row["id"] for row in store.list_episodes()}
    assert {ep.id, result.episode.id} <= ids


def test_a_step_that_needs_the_user_waits_with_nothing_to_approve_and_a_demonstration_repairs_it(store):
    macro = record_new_alarm(FakePhone())
    phone = FakePhone(Variant(drop_resource_ids=True, renumber_ids=True, shift_save=True, lang=FRENCH))
    replay = Replayer(phone, phone.parser).start(macro, store=store)
    asked: list[AwaitingDecision] = []

    def answer(_index: int, ev: AwaitingDecision) -> Decision:
        asked.append(ev)
        if len(asked) == 1:  # Approve where nothing can be approved: asked again
            return Decision(DecisionKind.APPROVE)
        return Decision(DecisionKind.DEMONSTRATE, action=Action.tap(*phone.center_of("save")))

    result, _ = drive_replay(replay, answer)
    assert len(asked) == 2 and all(needs_you(a.proposal) for a in asked)
    assert replay.step_of(asked[0]) == 3 and "could not find" in asked[0].proposal.rationale
    assert phone.taps and phone.screen == "saved"
    assert result.succeeded and result.repaired and result.macro.version == 2
    stored = store.load_episode(result.episode.id)
    demo = [s for s in stored.steps if s.decision is not None and s.decision.kind is DecisionKind.DEMONSTRATE]
    assert len(demo) == 1 and demo[0].outcome is StepOutcome.EXECUTED
    assert result.steps[-1].words == "shown by you"


def test_an_unattended_replay_keeps_its_episode_when_it_gives_up(store):
    macro = record_new_alarm(FakePhone())
    phone = FakePhone(Variant(drop_resource_ids=True, renumber_ids=True, shift_save=True, lang=FRENCH))
    result = run_unattended(Replayer(phone, phone.parser), macro, store=store)
    assert result.status == "failed" and "Save" in result.message
    stored = store.load_episode(result.episode.id)
    assert stored.status is EpisodeStatus.ABORTED
    assert stored.steps[-1].outcome is StepOutcome.ABORTED
