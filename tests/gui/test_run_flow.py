"""The run controller drives a two-way agent generator from a worker thread: proposals
wait for the user's decision, edits and demonstrations carry the user's action, and
closing the window mid-run stops the loop through its own clean-up.

The generator here is a scripted stand-in with the runner's shape (events out,
decisions in); the end-to-end test with the real runner lives in test_end_to_end.py.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import pytest
from PySide6.QtCore import Qt

from agent.types import Action, DecisionKind, Proposal, Step, StepOutcome
from app.gui.devices import DeviceChoice
from app.gui.window import MainWindow
from app.gui.workers import GeneratorDriver, GuiPoster
from vision.geometry import Point
from widgets.screen_view import ViewMode
from widgets.task_panel import RunState

from .fakes import FixedParser, ScriptedPhone
from .samples import sample_latent, sample_parse, sample_proposal


@dataclass(frozen=True)
class Proposed:
    proposal: Proposal
    parse: object = None
    needs_decision: bool = True


@dataclass(frozen=True)
class StepDone:
    step: Step


def scripted_loop(n: int, log: list, cleaned: threading.Event):
    """Propose ``n`` taps; record each decision; stop on abort."""
    try:
        for i in range(n):
            p = sample_proposal(Action.tap(100 + i, 200))
            p = Proposal(**{**{f: getattr(p, f) for f in p.__dataclass_fields__},
                            "latent": sample_latent(progression=f"{i} done")})
            decision = yield Proposed(p, sample_parse())
            log.append(decision)
            if decision.kind is DecisionKind.ABORT:
                yield StepDone(Step(i, proposal=p, decision=decision, outcome=StepOutcome.ABORTED))
                return "aborted"
            executed = decision.executes or (p.action if decision.kind is DecisionKind.APPROVE else None)
            outcome = StepOutcome.REJECTED if decision.kind is DecisionKind.REJECT else StepOutcome.EXECUTED
            yield StepDone(Step(i, proposal=p, decision=decision, executed=executed, outcome=outcome))
        return "done"
    finally:
        cleaned.set()


@pytest.fixture
def win(qtbot):
    phone = ScriptedPhone()
    w = MainWindow(None, discover=False, parser_factory=FixedParser, device_factory=lambda c, t: phone,
                   live_parse=False)
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    w.connect_device(DeviceChoice("scripted-1", "Scripted phone"))
    qtbot.waitUntil(lambda: w.view.frame is not None, timeout=5000)
    w.decisions, w.cleaned = [], threading.Event()
    w.run._make_generator = lambda req: scripted_loop(5, w.decisions, w.cleaned)
    w.task_panel.set_models(["fake-model"])
    w.task_panel.goal.setPlainText("Turn off Wi-Fi")
    yield w
    w.close()


def _wait_proposal(qtbot, w):
    try:
        qtbot.waitUntil(lambda: w.decision_bar.enabled, timeout=5000)
    except Exception:
        raise AssertionError(([(n.message, n.detail) for n in w.notifications.history], w.task_panel.error.text(), w.task_panel.state, w.run.events, w.task_panel.start.isVisible(), w.task_panel.start.isEnabled())) from None


def test_each_kind_of_decision_reaches_the_loop(win, qtbot):
    w = win
    qtbot.mouseClick(w.task_panel.start, Qt.MouseButton.LeftButton)
    _wait_proposal(qtbot, w)
    assert w.task_panel.state is RunState.WAITING
    assert w.view.proposal == Action.tap(100, 200)
    assert w.proposal_card.title.text().startswith("Tap")
    # approve with the keyboard
    qtbot.keyClick(w, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: len(w.decisions) == 1 and w.decision_bar.enabled, timeout=5000)
    # reject with feedback
    w.decision_bar.feedback.setText("not that one")
    w.decision_bar.trigger(DecisionKind.REJECT)
    qtbot.waitUntil(lambda: len(w.decisions) == 2 and w.decision_bar.enabled, timeout=5000)
    # edit: the editor opens, the target is picked on the mirror
    w.decision_bar.trigger(DecisionKind.EDIT)
    ed = w._editor
    assert ed is not None and ed.isVisible()
    qtbot.mouseClick(ed.pick_touch, Qt.MouseButton.LeftButton)
    assert w.view.mode is ViewMode.PICK
    qtbot.mouseClick(w.view.viewport(), Qt.MouseButton.LeftButton, pos=w.view.view_pos_of(Point(600, 700)).toPoint())
    ed._try_accept()
    qtbot.waitUntil(lambda: len(w.decisions) == 3 and w.decision_bar.enabled, timeout=5000)
    # demonstrate: a tap on the mirror becomes the step
    w.decision_bar.trigger(DecisionKind.DEMONSTRATE)
    assert w.view.mode is ViewMode.DEMONSTRATE
    qtbot.mouseClick(w.view.viewport(), Qt.MouseButton.LeftButton, pos=w.view.view_pos_of(Point(960, 290)).toPoint())
    qtbot.waitUntil(lambda: len(w.decisions) == 4 and w.decision_bar.enabled, timeout=5000)
    assert w.view.mode is ViewMode.INSPECT
    w.decision_bar.trigger(DecisionKind.APPROVE)
    qtbot.waitUntil(lambda: w.task_panel.state is RunState.IDLE, timeout=5000)

    kinds = [d.kind for d in w.decisions]
    assert kinds == [DecisionKind.APPROVE, DecisionKind.REJECT, DecisionKind.EDIT, DecisionKind.DEMONSTRATE,
                     DecisionKind.APPROVE]
    assert w.decisions[1].feedback == "not that one"
    edit = w.decisions[2].action
    assert abs(edit.touch.x - 600) <= 3 and edit.target.element_id == "e3"
    demo = w.decisions[3].action
    assert demo.type.value == "tap" and demo.target.element_id == "e2"
    assert w.timeline.count() == 5 and w.run.result == "done"
    assert "progression" in w.latent_panel.changed


def test_selecting_a_past_step_shows_its_screen_and_back_to_live(win, qtbot):
    w = win
    w.run.start(w.task_panel.request())
    _wait_proposal(qtbot, w)
    w.decision_bar.trigger(DecisionKind.APPROVE)
    qtbot.waitUntil(lambda: w.timeline.count() == 1, timeout=5000)
    w.timeline.select_step(0)
    assert w.viewing == "step:0" and w.banner_row.isVisible()
    w.show_live()
    assert w.viewing == "live"
    w.run.abort()
    qtbot.waitUntil(lambda: w.task_panel.state is RunState.IDLE, timeout=5000)
    assert w.decisions[-1].kind is DecisionKind.ABORT


def test_closing_the_window_during_a_run_aborts_through_the_loop(qtbot):
    phone = ScriptedPhone()
    w = MainWindow(None, discover=False, parser_factory=FixedParser, device_factory=lambda c, t: phone,
                   live_parse=False)
    qtbot.addWidget(w)
    w.connect_device(DeviceChoice("scripted-1", "Scripted phone"))
    qtbot.waitUntil(lambda: w.device is not None, timeout=5000)
    decisions, cleaned = [], threading.Event()
    w.run._make_generator = lambda req: scripted_loop(5, decisions, cleaned)
    w.task_panel.set_models(["m"])
    w.task_panel.goal.setPlainText("x")
    w.run.start(w.task_panel.request())
    _wait_proposal(qtbot, w)
    w.close()
    assert cleaned.is_set()
    assert decisions and decisions[-1].kind is DecisionKind.ABORT


def test_driver_pauses_between_events_and_steps_one_at_a_time(qtbot):
    poster = GuiPoster()
    seen = []
    gate = threading.Event()

    def gen():
        for i in range(4):
            seen.append(i)
            yield i
        gate.set()

    done = []
    d = GeneratorDriver(gen(), poster, lambda e: None, done.append, lambda f: None)
    d.pause(True)
    d.start()
    qtbot.wait(200)
    assert seen == [0]
    d.step_once()
    qtbot.waitUntil(lambda: seen == [0, 1], timeout=2000)
    qtbot.wait(100)
    assert seen == [0, 1]
    d.pause(False)
    qtbot.waitUntil(lambda: done == [None], timeout=2000)
    assert d.join(2)


def test_driver_reports_an_exception_in_the_loop(qtbot):
    poster = GuiPoster()
    errors = []

    def gen():
        yield 1
        raise RuntimeError("planner exploded")

    d = GeneratorDriver(gen(), poster, lambda e: None, lambda r: None, errors.append)
    d.start()
    qtbot.waitUntil(lambda: len(errors) == 1, timeout=2000)
    assert "planner exploded" in errors[0].message and "Traceback" in errors[0].detail
    assert d.join(2)
