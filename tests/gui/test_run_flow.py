"""The run controller drives a two-way agent generator from a worker thread: proposals
wait for the user's decision, edits and demonstrations carry the user's action, every
stored step reaches the timeline, the finish reason is shown, and closing the window
mid-run stops the loop through its own clean-up.

The generator here is scripted, but it speaks with the real ``agent.events`` classes, so
renaming or reshaping one of them fails these tests; the end-to-end test with the real
runner lives in test_end_to_end.py.
"""

from __future__ import annotations

import threading
from dataclasses import replace

import pytest
from PySide6.QtCore import Qt

from agent.events import (
    Aborted,
    AwaitingDecision,
    ErrorEvent,
    Estimated,
    Executed,
    Finished,
    Observed,
    Parsed,
    Proposed,
    Rejected,
)
from agent.types import Action, ActionType, DecisionKind, Episode, EpisodeStatus, Proposal, Step, StepOutcome
from app.gui.devices import DeviceChoice
from app.gui.window import MainWindow
from app.gui.window_layout import MIN_SIZE
from app.gui.workers import GeneratorDriver, GuiPoster
from vision.geometry import Point
from widgets.screen_view import ViewMode
from widgets.task_panel import RunState

from .fakes import FixedParser, ScriptedPhone
from .samples import sample_latent, sample_parse, sample_proposal, sample_screen


def scripted_loop(n: int, log: list, cleaned: threading.Event, *, fail_at: int | None = None,
                  end: tuple[EpisodeStatus, str] = (EpisodeStatus.SUCCEEDED, "the goal is reached")):
    """Propose ``n`` taps with the runner's events; record each decision; stop on abort.
    At step ``fail_at`` the planner's reply is unreadable and the user is asked to act."""
    episode = Episode(goal="Turn off Wi-Fi", id="ep-scripted")
    try:
        for i in range(n):
            yield Observed(i, sample_screen())
            yield Parsed(i, sample_parse())
            if i == fail_at:
                msg = "the planner's reply could not be read"
                rec = Step(i, outcome=StepOutcome.ERROR, error=msg)
                episode = episode.with_step(rec)
                yield ErrorEvent(i, msg, record=rec)
                wait = Proposal(Action.simple(ActionType.WAIT), rationale=f"(the agent failed: {msg})")
                decision = yield AwaitingDecision(i, wait, f"the agent failed: {msg}", failed=True)
                log.append(decision)
                rec = Step(i + 100, proposal=wait, decision=decision, executed=decision.action)
                episode = episode.with_step(rec)
                yield Executed(i + 100, decision.action, rec)
                continue
            p = replace(sample_proposal(Action.tap(100 + i, 200)), latent=sample_latent(progression=f"{i} done"))
            yield Estimated(i, p.latent)
            yield Proposed(i, p)
            decision = yield AwaitingDecision(i, p, "approval mode")
            log.append(decision)
            if decision.kind is DecisionKind.ABORT:
                rec = Step(i, proposal=p, decision=decision, outcome=StepOutcome.ABORTED)
                episode = replace(episode.with_step(rec), status=EpisodeStatus.ABORTED, note="aborted by the user")
                yield Aborted(i, rec)
                yield Finished(EpisodeStatus.ABORTED, "aborted by the user", episode)
                return episode
            if decision.kind is DecisionKind.REJECT:
                rec = Step(i, proposal=p, decision=decision, outcome=StepOutcome.REJECTED)
                episode = episode.with_step(rec)
                yield Rejected(i, rec)
                continue
            executed = decision.executes or p.action
            rec = Step(i, proposal=p, decision=decision, executed=executed)
            episode = episode.with_step(rec)
            yield Executed(i, executed, rec)
        episode = replace(episode, status=end[0], note=end[1])
        yield Finished(end[0], end[1], episode)
        return episode
    finally:
        cleaned.set()


def _window(qtbot, loop=None):
    phone = ScriptedPhone()
    w = MainWindow(None, discover=False, parser_factory=FixedParser, device_factory=lambda c, t: phone,
                   live_parse=False)
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    w.connect_device(DeviceChoice("scripted-1", "Scripted phone"))
    qtbot.waitUntil(lambda: w.view.frame is not None, timeout=5000)
    w.decisions_made, w.cleaned = [], threading.Event()
    w.run._make_generator = loop or (lambda req: scripted_loop(5, w.decisions_made, w.cleaned))
    w.task_panel.set_models(["fake-model"])
    w.task_panel.goal.setPlainText("Turn off Wi-Fi")
    return w


@pytest.fixture
def win(qtbot):
    w = _window(qtbot)
    yield w
    w.close()


def _wait_proposal(qtbot, w):
    try:
        qtbot.waitUntil(lambda: w.decision_bar.enabled, timeout=5000)
    except Exception:
        raise AssertionError(([(n.message, n.detail) for n in w.notifications.history], w.task_panel.error.text(),
                              w.task_panel.state, w.run.events)) from None


def test_each_kind_of_decision_reaches_the_loop(win, qtbot):
    w = win
    qtbot.mouseClick(w.task_panel.start, Qt.MouseButton.LeftButton)
    _wait_proposal(qtbot, w)
    assert w.task_panel.state is RunState.WAITING
    assert w.view.proposal == Action.tap(100, 200)
    assert w.proposal_card.title.text().startswith("Tap")
    # approve with the keyboard
    qtbot.keyClick(w, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: len(w.decisions_made) == 1 and w.decision_bar.enabled, timeout=5000)
    assert "progression" in w.latent_panel.changed  # highlighted: it changed since the last step
    # reject with feedback
    w.decision_bar.feedback.setText("not that one")
    w.decision_bar.trigger(DecisionKind.REJECT)
    qtbot.waitUntil(lambda: len(w.decisions_made) == 2 and w.decision_bar.enabled, timeout=5000)
    # edit: the editor opens, the target is picked on the mirror
    w.decision_bar.trigger(DecisionKind.EDIT)
    ed = w._editor
    assert ed is not None and ed.isVisible()
    qtbot.mouseClick(ed.pick_touch, Qt.MouseButton.LeftButton)
    assert w.view.mode is ViewMode.PICK
    qtbot.mouseClick(w.view.viewport(), Qt.MouseButton.LeftButton, pos=w.view.view_pos_of(Point(600, 700)).toPoint())
    ed._try_accept()
    qtbot.waitUntil(lambda: len(w.decisions_made) == 3 and w.decision_bar.enabled, timeout=5000)
    # demonstrate: a tap on the mirror becomes the step
    w.decision_bar.trigger(DecisionKind.DEMONSTRATE)
    assert w.view.mode is ViewMode.DEMONSTRATE
    qtbot.mouseClick(w.view.viewport(), Qt.MouseButton.LeftButton, pos=w.view.view_pos_of(Point(960, 290)).toPoint())
    qtbot.waitUntil(lambda: len(w.decisions_made) == 4 and w.decision_bar.enabled, timeout=5000)
    assert w.view.mode is ViewMode.INSPECT
    w.decision_bar.trigger(DecisionKind.APPROVE)
    qtbot.waitUntil(lambda: w.task_panel.state is RunState.IDLE, timeout=5000)

    kinds = [d.kind for d in w.decisions_made]
    assert kinds == [DecisionKind.APPROVE, DecisionKind.REJECT, DecisionKind.EDIT, DecisionKind.DEMONSTRATE,
                     DecisionKind.APPROVE]
    assert w.decisions_made[1].feedback == "not that one"
    edit = w.decisions_made[2].action
    assert abs(edit.touch.x - 600) <= 3 and edit.target.element_id == "e3"
    demo = w.decisions_made[3].action
    assert demo.type.value == "tap" and demo.target.element_id == "e2"
    # every step the loop stored is on the timeline, the rejected one included
    assert w.timeline.count() == 5
    assert "rejected" in w.timeline.step(1).outcome.value


def test_a_finished_run_says_why_it_stopped(qtbot):
    w = _window(qtbot, lambda req: scripted_loop(1, w.decisions_made, w.cleaned,
                                                 end=(EpisodeStatus.FAILED, "step budget of 1 used up")))
    w.task_panel.start.click()
    _wait_proposal(qtbot, w)
    w.decision_bar.trigger(DecisionKind.APPROVE)
    qtbot.waitUntil(lambda: w.task_panel.state is RunState.IDLE, timeout=5000)
    assert "failed" in w.task_panel.status.text() and "step budget of 1 used up" in w.task_panel.status.text()
    assert "step budget of 1 used up" in w.timeline.section_title(w.run.section)
    assert any("step budget of 1 used up" in n.message for n in w.notifications.history)
    assert w.run.episode_id == "ep-scripted"
    w.close()


def test_a_second_run_keeps_the_first_runs_steps(win, qtbot):
    w = win
    for _ in range(2):
        w.task_panel.start.click()
        _wait_proposal(qtbot, w)
        w.decision_bar.trigger(DecisionKind.ABORT)
        qtbot.waitUntil(lambda: w.task_panel.state is RunState.IDLE, timeout=5000)
    assert w.timeline.sections() == ["run:1", "run:2"]
    assert w.timeline.count("run:1") == 1 and w.timeline.count("run:2") == 1
    assert "aborted" in w.timeline.section_title("run:1")


def test_an_unreadable_reply_offers_demonstrate_instead_of_ending_the_run(qtbot):
    w = _window(qtbot, lambda req: scripted_loop(2, w.decisions_made, w.cleaned, fail_at=0))
    w.task_panel.start.click()
    _wait_proposal(qtbot, w)
    bar = w.decision_bar
    assert "could not do this step" in w.proposal_card.title.text()
    assert "could not be read" in w.proposal_card.rationale.text()
    assert not bar.buttons[DecisionKind.APPROVE].isEnabled()  # nothing to approve
    assert bar.buttons[DecisionKind.DEMONSTRATE].isEnabled() and bar.buttons[DecisionKind.EDIT].isEnabled()
    bar.trigger(DecisionKind.DEMONSTRATE)
    qtbot.mouseClick(w.view.viewport(), Qt.MouseButton.LeftButton, pos=w.view.view_pos_of(Point(960, 290)).toPoint())
    qtbot.waitUntil(lambda: len(w.decisions_made) == 1 and bar.enabled, timeout=5000)
    assert w.decisions_made[0].kind is DecisionKind.DEMONSTRATE
    assert bar.buttons[DecisionKind.APPROVE].isEnabled()  # the next, normal step
    outcomes = [w.timeline.step(i).outcome for i in (0, 100)]
    assert outcomes == [StepOutcome.ERROR, StepOutcome.EXECUTED]
    bar.trigger(DecisionKind.APPROVE)
    qtbot.waitUntil(lambda: w.task_panel.state is RunState.IDLE, timeout=5000)
    w.close()


def test_pause_then_abort_stops_the_run_in_one_click(win, qtbot):
    w = win
    w.task_panel.start.click()
    _wait_proposal(qtbot, w)
    qtbot.mouseClick(w.task_panel.pause, Qt.MouseButton.LeftButton)
    assert w.task_panel.state is RunState.PAUSED
    qtbot.mouseClick(w.task_panel.abort, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: w.task_panel.state is RunState.IDLE, timeout=5000)
    assert w.decisions_made[-1].kind is DecisionKind.ABORT
    assert w.cleaned.is_set()


def test_the_proposal_and_latent_panels_are_cleared_when_the_run_ends(win, qtbot):
    w = win
    w.task_panel.start.click()
    _wait_proposal(qtbot, w)
    assert w.proposal_card.proposal is not None and w.latent_panel._state is not None
    w.decision_bar.trigger(DecisionKind.ABORT)
    qtbot.waitUntil(lambda: w.task_panel.state is RunState.IDLE, timeout=5000)
    assert w.proposal_card.proposal is None and w.proposal_card.title.text() == "No proposal"
    assert w.latent_panel._state is None


def test_the_approval_card_says_when_the_screen_changed_since_planning(win, qtbot):
    w = win
    w.task_panel.start.click()
    _wait_proposal(qtbot, w)
    assert not w.proposal_card.screen_changed.isVisibleTo(w)
    # other pixels, the same screen (a clock, an animation): looked at once settled, no warning
    w.session.device.next_image = sample_screen().image[::-1].copy()
    qtbot.waitUntil(lambda: w.run.watch.checks >= 1, timeout=8000)
    assert not w.proposal_card.screen_changed.isVisibleTo(w)
    # another screen: other words on it
    other = sample_parse()
    parser = w.session.parser()
    getattr(parser, "base", parser).next_parse = replace(other, elements=tuple(replace(e, text=f"{e.text} elsewhere")
                                                                    if e.text else e for e in other.elements))
    w.session.device.next_image = sample_screen().image.copy()
    qtbot.waitUntil(lambda: w.proposal_card.screen_changed.isVisibleTo(w), timeout=8000)
    w.decision_bar.trigger(DecisionKind.ABORT)
    qtbot.waitUntil(lambda: w.task_panel.state is RunState.IDLE, timeout=5000)


def test_the_decision_bar_is_clickable_at_the_smallest_window(win, qtbot):
    w = win
    w.resize(MIN_SIZE)
    qtbot.waitUntil(lambda: w.size() == MIN_SIZE, timeout=2000)
    w.task_panel.start.click()
    _wait_proposal(qtbot, w)
    for button in w.decision_bar.buttons.values():
        if not button.isVisibleTo(w):  # "Ask bigger model" shows only with a bigger model configured
            continue
        centre = button.mapTo(w, button.rect().center())
        assert w.rect().contains(centre) and w.childAt(centre) is button, button.text()
    approve = w.decision_bar.buttons[DecisionKind.APPROVE]
    qtbot.mouseClick(approve, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(w.decisions_made) == 1, timeout=5000)
    assert w.decisions_made[0].kind is DecisionKind.APPROVE
    w.run.abort()
    qtbot.waitUntil(lambda: w.task_panel.state is RunState.IDLE, timeout=5000)


def test_selecting_a_past_step_shows_its_screen_and_back_to_live(win, qtbot):
    w = win
    w.run.start(w.task_panel.request())
    _wait_proposal(qtbot, w)
    w.decision_bar.trigger(DecisionKind.APPROVE)
    qtbot.waitUntil(lambda: w.timeline.count() == 1, timeout=5000)
    w.timeline.select_step(0)
    assert not w.session.viewing.live and w.session.viewing.step == 0 and w.banner_row.isVisible()
    w.show_live()
    assert w.session.viewing.live
    w.run.abort()
    qtbot.waitUntil(lambda: w.task_panel.state is RunState.IDLE, timeout=5000)
    assert w.decisions_made[-1].kind is DecisionKind.ABORT


def test_closing_the_window_during_a_run_aborts_through_the_loop(qtbot):
    phone = ScriptedPhone()
    w = MainWindow(None, discover=False, parser_factory=FixedParser, device_factory=lambda c, t: phone,
                   live_parse=False)
    qtbot.addWidget(w)
    w.connect_device(DeviceChoice("scripted-1", "Scripted phone"))
    qtbot.waitUntil(lambda: w.session.device is not None, timeout=5000)
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


def waiting_loop(log: list, gate: threading.Event, cleaned: threading.Event):
    """A step that works visibly (stage, call k of n), then offers candidates after two
    rejections, then asks "Is the task done?"."""
    from agent.events import Working

    episode = Episode(goal="Turn off Wi-Fi", id="ep-waiting")
    try:
        yield Observed(0, sample_screen())
        yield Parsed(0, sample_parse())
        yield Working(0, "estimating progress", 2, 6, __import__("time").time() - 14)
        gate.wait(10)  # the model "works" until the test has looked at the card
        p = sample_proposal(Action.tap(100, 200))
        yield Proposed(0, p)
        alternative = Action.tap(300, 400)
        decision = yield AwaitingDecision(0, p, "approval mode", alternatives=(alternative,))
        log.append(decision)
        done = Proposal(Action.simple(ActionType.COMPLETE), rationale="Wi-Fi shows Off.")
        decision = yield AwaitingDecision(1, done, "the agent says the task is done: is the task done?",
                                          confirm_done=True)
        log.append(decision)
        episode = replace(episode, status=EpisodeStatus.SUCCEEDED, note="done — confirmed by the user")
        yield Finished(EpisodeStatus.SUCCEEDED, "done — confirmed by the user", episode)
        return episode
    finally:
        cleaned.set()


def test_the_card_shows_the_work_in_progress_then_candidates_then_asks_if_done(qtbot):
    gate = threading.Event()
    w = _window(qtbot, lambda req: waiting_loop(w.decisions_made, gate, w.cleaned))
    try:
        w.latent_panel.set_state(sample_latent(progression="1 done"))
        w.task_panel.start.click()
        card = w.proposal_card
        qtbot.waitUntil(lambda: card.working.isVisible(), timeout=5000)
        assert card.title.text() == "The agent is thinking…"
        assert "Estimating progress — call 2 of 6, 14 s" in card.rationale.text()
        assert w.latent_panel.stale  # the previous step's estimates are greyed
        w.run.working.heard("tap Network &")  # a streamed reply, from the request's thread in real runs
        qtbot.waitUntil(lambda: card.stream.isVisible() and card.stream.text() == "tap Network &", timeout=5000)
        gate.set()
        _wait_proposal(qtbot, w)
        assert not card.working.isVisible() and card.rationale.text().startswith("Why: ")
        picks = card.alternatives.findChildren(type(w.decision_bar.buttons[DecisionKind.APPROVE]))
        assert [b.text() for b in picks] == ["tap at (300, 400)"]
        picks[0].click()  # one click: performed as an edit
        qtbot.waitUntil(lambda: len(w.decisions_made) == 1 and w.decision_bar.enabled, timeout=5000)
        assert w.decisions_made[0].kind is DecisionKind.EDIT and w.decisions_made[0].action == Action.tap(300, 400)
        assert card.title.text() == "Is the task done?" and "Wi-Fi shows Off." in card.rationale.text()
        assert w.decision_bar.buttons[DecisionKind.REJECT].text() == "Not done yet"
        w.decision_bar.trigger(DecisionKind.APPROVE)
        qtbot.waitUntil(lambda: w.task_panel.state is RunState.IDLE, timeout=5000)
        assert w.decisions_made[1].kind is DecisionKind.APPROVE
        assert w.decision_bar.buttons[DecisionKind.APPROVE].text() == "Approve"  # the bar is itself again
        assert "succeeded" in w.task_panel.status.text()
    finally:
        gate.set()
        w.close()
