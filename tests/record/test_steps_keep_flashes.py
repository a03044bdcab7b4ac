"""What flashed, in the steps: stored and read back (older steps read as having seen
nothing), amended in the store, told to the model once and inside the screen's fence,
never told about a wait (it does not touch the phone), and a run without a record is the
run it always was."""

from __future__ import annotations

from dataclasses import dataclass, field

from agent import codec
from agent.events import Amended, RunSettings
from agent.flash_steps import FlashSteps
from agent.planners.base import PlanContext
from agent.runner import drive, run_episode
from agent.transient import FLASHED, SHOWING, Transient
from agent.types import Action, ActionType, Autonomy, Episode, Proposal, Step
from app.storage import Store
from tests.macros.fakephone import FakePhone
from vision.geometry import Rect

TOAST = Transient("Alarm set for 7:00 AM", 100.0, 102.0, Rect(10, 900, 400, 960), step=0)


def test_a_step_keeps_its_flashes_and_older_steps_read_as_having_none():
    step = Step(0, transients=(TOAST,))
    assert codec.decode(codec.encode(step), "step") == step
    old = codec.encode(Step(1))
    old["version"] = 2
    del old["data"]["transients"]
    assert codec.decode(old, "step").transients == ()


def test_the_store_keeps_a_step_amended_with_what_flashed_after_it(tmp_path):
    store = Store(tmp_path / "runs.sqlite")
    try:
        episode = Episode(goal="set an alarm")
        store.begin_episode(episode)
        stored = store.append_step(episode.id, Step(0))
        store.amend_step(episode.id, Step(0, started_at=stored.started_at, finished_at=stored.finished_at,
                                          transients=(TOAST,)))
        again = store.load_episode(episode.id)
    finally:
        store.close()
    assert len(again.steps) == 1 and again.steps[0].transients == (TOAST,)


@dataclass
class Record:
    """A record of a run that saw the toast after step 0's action (appearing, then gone)."""

    sent: list[tuple[int, float, float]] = field(default_factory=list)
    gone: bool = False

    def action_begins(self, step, at, where=None):
        pass

    def action_sent(self, step, started, ended, where=None):
        self.sent.append((step, started, ended))

    def transients(self):
        return (TOAST,) if self.gone else ()

    def showing(self, step):
        return () if self.gone or step != 0 else (TOAST,)

    def settle(self, timeout_s):
        self.gone = True


def test_the_model_hears_of_a_flash_once_inside_the_screens_fence():
    flashes = FlashSteps(Record())
    episode = Episode(goal="g", steps=(Step(0),))
    first = flashes.pull(episode, 0, None)
    assert first.note.startswith(SHOWING) and "Alarm set for 7:00 AM" in first.note
    assert flashes.pull(episode, 0, None).note == ""  # told once
    flashes.record.gone = True
    later = flashes.pull(episode, 0, None)
    assert later.note == "" and [s.transients for s in later.amended] == [(TOAST,)]


class Planner:
    name = "script"
    uses_latent = False

    def __init__(self, phone: FakePhone) -> None:
        self.phone = phone
        self.screens: list[str] = []

    def propose(self, ctx: PlanContext) -> Proposal:
        self.screens.append(ctx.screen)
        if len(self.screens) == 1:
            el = next(e for e in ctx.parse.elements if e.id.split("#")[0] == "tab_alarm")
            return Proposal(Action.tap(el.rect.center.x, el.rect.center.y), planner=self.name)
        if len(self.screens) == 2:
            return Proposal(Action(ActionType.WAIT, duration_ms=10), planner=self.name)
        return Proposal(Action.simple(ActionType.COMPLETE), planner=self.name)


def test_a_run_with_a_record_tells_it_each_action_and_keeps_what_it_saw():
    phone = FakePhone()
    record = Record()
    planner = Planner(phone)
    events = list(drive(run_episode("add an alarm", phone, phone.parser, planner,
                                    settings=RunSettings(mode=Autonomy.AUTO), record=record)))
    assert [s for s, _a, _b in record.sent] == [0]  # the tap; the wait touched nothing
    assert SHOWING in planner.screens[1] and planner.screens[1].index(SHOWING) < planner.screens[1].index("</screen>")
    assert FLASHED not in planner.screens[2] and SHOWING not in planner.screens[2]
    final = events[-1].episode
    assert final.steps[0].transients == (TOAST,)  # found when the run ended (the record settled)
    assert all(s.timing("record") is not None for s in final.steps if s.executed and not s.executed.is_terminal)
    assert not any(isinstance(e, Amended) for e in events[:2])


def test_a_run_without_a_record_is_unchanged():
    phone = FakePhone()
    planner = Planner(phone)
    events = list(drive(run_episode("add an alarm", phone, phone.parser, planner,
                                    settings=RunSettings(mode=Autonomy.AUTO))))
    final = events[-1].episode
    assert all(s.timing("record") is None and s.transients == () for s in final.steps)
    assert not any(isinstance(e, Amended) for e in events)
    assert all(FLASHED not in s and SHOWING not in s for s in planner.screens)


@dataclass
class LateCapture:
    """A capture whose OCR found the toast only as the record stopped (after the run's
    last look at it)."""

    def start(self, video=None):
        return self

    def stop(self):
        from phone.record.capture import CaptureSummary
        from phone.record.ring import RingStats

        return CaptureSummary((TOAST,), None, None, RingStats(0, 0, 0, 0, 0, 0, 0.0), 3, 1, 0.0)


def test_a_flash_found_as_the_record_stops_is_stored_in_its_step(tmp_path):
    from app.run_record import RecordingSink

    store = Store(tmp_path / "runs.sqlite")
    sink = RecordingSink(store, LateCapture(), video=False)  # type: ignore[arg-type]
    try:
        episode = Episode(goal="set an alarm")
        sink.begin_episode(episode)
        sink.append_step(episode.id, Step(0))
        sink.append_step(episode.id, Step(1))
        sink.finish_episode(episode.id, "succeeded")
        again = store.load_episode(episode.id)
    finally:
        store.close()
    assert [s.transients for s in again.steps] == [(TOAST,), ()]
    assert sink.summary is not None and sink.summary.transients == (TOAST,)


class RefusingPhone(FakePhone):
    """A phone that refuses every tap."""

    def tap(self, x: int, y: int) -> None:
        from agent.device import DeviceError

        raise DeviceError("the tap was refused")


def test_an_action_the_phone_refused_is_over_for_the_record_when_it_failed():
    phone = RefusingPhone()
    record = Record()
    events = list(drive(run_episode("add an alarm", phone, phone.parser, Planner(phone),
                                    settings=RunSettings(mode=Autonomy.AUTO), record=record)))
    assert events[-1].episode.steps[0].executed is None  # the tap failed ...
    # ... and the record was told it ended then (not left pending, pinning later flashes to it)
    assert [s for s, _a, _b in record.sent] == [0]
    step, started, ended = record.sent[0]
    assert started <= ended <= events[-1].episode.steps[0].finished_at
