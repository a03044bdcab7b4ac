"""Running a task from the window: checks that a model answers, builds the agent loop
(``agent.runner.run_episode``), drives it on a worker thread through ``GeneratorDriver``,
shows each event (parse, latent state, proposal, step, finish reason) and sends the
user's decisions back through the decision router.

Events are dispatched on the real ``agent.events`` classes.  Each run gets its own
section on the step timeline (earlier runs stay).  Edit opens the action editor (target
picked on the mirror); Demonstrate switches the mirror to demonstration mode and sends
the user's gesture as the step.  Closing the window stops the loop at its next yield;
the runner stores the episode as it goes.  While the model works the card shows the
stage, the call of the step and the seconds so far (ticking), with the reply streaming in
(the run's ``CancelToken`` is listened to); the latent panel greys the previous step's
estimates, and says why when a run makes none (``app.gui.latent_controller``).  A
proposal's reason line comes from ``agent.explain``; the card warns of a changed screen only
when it changed in a way that matters (``app.gui.screen_watch``); candidates offered
after repeated rejections are one click (an edit); "Is the task done?" is asked on the
card when the agent says so.  Never imports the window.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agent import events
from agent.types import (
    Action,
    ActionType,
    Decision,
    DecisionKind,
    Episode,
    EpisodeStatus,
    LatentState,
    Proposal,
    Step,
)
from app.gui.demonstrate import Demonstration
from app.gui.episode_controller import STATUS_WORDS
from app.gui.latent_controller import LatentNotes
from app.gui.record_controller import RecordController
from app.gui.run_start import NoModelAnswers, SessionParser, check_model
from app.gui.screen_watch import ScreenWatch, identify_on, planned_identity
from app.gui.session import Session, Workbench
from app.gui.workers import Failure, GeneratorDriver
from app.gui.working_card import WorkingCard
from vision.types import Screen, ScreenParse
from widgets.notifications import Level
from widgets.screen_view import ViewMode
from widgets.task_panel import RunState, TaskRequest

if TYPE_CHECKING:
    from agent.runner import RunGenerator

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class RunEnd:
    """How the last run ended, as the window shows it."""

    status: EpisodeStatus
    reason: str
    episode_id: str = ""
    cost: str = ""  # agent.cost.RunCost.describe(): model calls, interventions, wall time, origins

    def summary(self) -> str:
        """How it ended and why: "✔ succeeded — the goal is reached · 2 model calls · …"."""
        words = STATUS_WORDS.get(self.status, self.status.value)
        return words + (f" — {self.reason}" if self.reason else "") + (f" · {self.cost}" if self.cost else "")

    def text(self) -> str:
        return f"Finished: {self.summary()}"


def is_decision_request(event: object) -> bool:
    """The agent loop waits for a decision after this event."""
    return isinstance(event, events.AwaitingDecision)


class RunController:
    """One task run at a time."""

    def __init__(self, ui: Workbench) -> None:
        self.ui = ui
        self.session: Session = ui.session
        self.driver: GeneratorDriver | None = None
        self.proposal: Proposal | None = None
        self.episode_id: str | None = None
        self.result: Any = None
        self.end: RunEnd | None = None
        self.events: list[Any] = []
        self.llm_factory: Any = None  # tests and embedders may supply the LLM client
        self._section = ""
        self._goal = ""
        self._runs = 0
        self._latent_prev: LatentState | None = None  # the last estimate of the previous step
        self._latent_last: LatentState | None = None
        self._latent_step: int | None = None
        self._screens: dict[tuple[str, int], tuple[Screen | None, ScreenParse | None, Action | None]] = {}
        self._step_screen: dict[int, Screen] = {}  # the frame each step was planned on
        self._current_parse: ScreenParse | None = None
        self._built: tuple[str, str, str, bool] | None = None  # planner chosen, planner used, model, estimates
        self._decision_started: float | None = None
        self._starting = False
        self._cancel: Any = None
        self._client: Any = None
        self.working = WorkingCard(ui.proposal_card, self.session.poster, lambda: self.proposal is not None)
        ui.proposal_card.alternativePicked.connect(self._pick)
        tp = ui.task_panel
        tp.startRequested.connect(self.start)
        tp.pauseRequested.connect(self.pause)
        tp.stepRequested.connect(self.step_once)
        tp.abortRequested.connect(self.abort)
        tp.modelPicked.connect(self._model_picked)
        self._demo = Demonstration(ui, self._on_demonstrated)
        self.recording = RecordController(ui)  # the "Record a video" box, the REC line, the run's record
        self.latent = LatentNotes(ui)  # what the latent panel says when there are no estimates
        self.watch = ScreenWatch(identify_on(self.session))  # has the screen changed in a way that matters?
        self.watch.verdict.connect(ui.proposal_card.set_screen_changed)

    @property
    def demonstrating(self) -> bool:
        """The mirror waits for the user to show the step (``app.gui.demonstrate``)."""
        return self._demo.active

    @demonstrating.setter
    def demonstrating(self, on: bool) -> None:
        self._demo.active = on

    @property
    def active(self) -> bool:
        return self._starting or (self.driver is not None and self.driver.running)

    @property
    def section(self) -> str:
        """The timeline section of the current (or last) run."""
        return self._section

    # ---- starting ----------------------------------------------------------------------
    def start(self, request: TaskRequest) -> None:
        ui = self.ui
        if self.active:
            ui.notify(Level.WARNING, "A task is already running.")
            return
        if self.session.device is None:
            ui.notify(Level.ERROR, "No phone is connected.", "Pick a phone (or the virtual phone) in the tool bar.")
            return
        self._remember_choices(request)
        self.recording.warm_up()  # the record's OCR loads while the model is checked
        if not ui.ensure_model(request.model, then=lambda: self.start(request)):
            ui.task_panel.set_state(RunState.IDLE, f"Starting the built-in model {request.model}…")
            return  # Start goes on once the built-in model answers
        # checking the model and building the loop do network and database I/O: off the GUI thread
        self._starting = True
        ui.task_panel.set_state(RunState.RUNNING, f"Starting: {request.goal}")
        ui.busy("Checking the model…")
        self.session.misc.submit(lambda: self._make_generator(request), on_done=lambda gen: self._begin(request, gen),
                                 on_error=self._start_failed)

    def _model_picked(self, model: str) -> None:
        """Picking a built-in model in the list starts it."""
        if not self.active:
            self.ui.ensure_model(model)

    def _remember_choices(self, request: TaskRequest) -> None:
        """The planner, autonomy and model of a started run are the next session's defaults."""
        s = self.session.settings
        from agent.types import Autonomy

        agent = s.agent.model_copy(update={"planner": request.planner or s.agent.planner,
                                           "autonomy": Autonomy(request.autonomy or s.agent.autonomy)})
        llm = s.llm.model_copy(update={"model": request.model or s.llm.model})
        if (agent, llm) != (s.agent, s.llm):
            self.session.settings = s.model_copy(update={"agent": agent, "llm": llm})
            self.ui.persist_settings()

    def _start_failed(self, failure: Failure) -> None:
        self._starting = False
        ui = self.ui
        ui.busy("")
        if isinstance(failure.error, NoModelAnswers):
            ui.task_panel.set_state(RunState.IDLE, "Not started: no model answers")
            ui.task_panel.error.setText(str(failure.error))
            ui.notify(Level.ERROR, str(failure.error), failure.error.hint, key="no-model")
            return
        ui.task_panel.set_state(RunState.IDLE, "Could not start")
        ui.notify_failure("Could not start the task", failure)

    def _begin(self, request: TaskRequest, gen: Any) -> None:
        ui = self.ui
        self._starting = False
        ui.busy("")
        if ui.closing:
            gen.close()
            return
        ui.task_panel.error.setText("")
        self.events.clear()
        self._step_screen.clear()
        if self._built is not None:
            self.latent.run_started(*self._built)
        self._latent_prev = self._latent_last = None
        self._latent_step = None
        self.result = None
        self.end = None
        self.episode_id = None
        self._runs += 1
        self._section = f"run:{self._runs}"
        ui.timeline.begin_section(self._section, f"▶ {request.goal} — running")
        ui.timeline_dock.raise_()
        ui.model_status.setText(f"model: {request.model}")
        ui.decision_bar.set_bigger_model(self.session.settings.escalation.model.strip())
        self._clear_panels()
        self.driver = GeneratorDriver(gen, self.session.poster, self._on_event, self._on_finished, self._on_error,
                                      on_stop=self._cancel_run, needs_decision=is_decision_request)
        self._goal = request.goal
        ui.task_panel.set_state(RunState.RUNNING, f"Running: {request.goal}")
        self.recording.started()
        self.driver.start()

    def _make_generator(self, request: TaskRequest) -> RunGenerator:
        """The run as ``app.compose`` assembles it, with a failed step offered to the user
        instead of ending the run and "Is the task done?" asked when the agent says so."""
        from agent.llm.base import CancelToken
        from app.compose import RunRequest, build_run
        from phone.virtual.oracle import judge_for  # the virtual phone's verdict on its own tasks

        client = self.llm_factory(request) if self.llm_factory is not None else None
        settings = self.session.settings
        check_model(settings, request.model, client)
        store = self.session.store()
        self._cancel = CancelToken()
        self._cancel.listen(self.working.heard)
        run = build_run(RunRequest(goal=request.goal, planner=request.planner, autonomy=request.autonomy,
                                   model=request.model),
                        settings, device=self.session.agent_device(), parser=SessionParser(self.session),
                        store=store, cancel=self._cancel, client=client, prefs=self.session.prefs,
                        judge=judge_for(request.goal, self.session.device), ask_on_error=True, confirm_done=True,
                        consent=self._consent(self._cancel), recorded=self.recording.prepare(store))
        self._client = run.client
        from app.compose import planner_for_model

        chosen, model = request.planner or settings.agent.planner, request.model or settings.llm.model
        self._built = (chosen, planner_for_model(chosen, model, self.session.prefs), model,
                       run.bundle.estimator is not None)
        return run.events

    def _consent(self, cancel: Any) -> Any:
        """The user's consent, asked in the window's dialog (``app.gui.guards``); stopping
        the run (``cancel``) takes "no" for a question still open."""
        from app.compose import user_consent
        from app.gui.guards import DialogConsentGate

        self.consent_gate = DialogConsentGate(self.session.poster, lambda: self.ui,  # type: ignore[arg-type,return-value]
                                              cancelled=lambda: cancel.cancelled)
        return user_consent(self.consent_gate)

    def _cancel_run(self) -> None:
        if self._cancel is not None:
            self._cancel.cancel()

    def _clear_panels(self) -> None:
        """Nothing from an earlier step may stay on the proposal and latent panels."""
        self.working.stop()
        self.proposal = None
        self.ui.proposal_card.set_proposal(None)
        self.ui.latent_panel.set_state(None)
        self.ui.view.set_proposal(None)

    # ---- events from the loop (GUI thread) ---------------------------------------------------
    def _on_event(self, event: Any) -> None:
        self.events.append(event)
        match event:
            case events.Observed(step=index, screen=screen):
                self._step_screen[index] = screen
                self.proposal = None  # a new observation: the last proposal is stale
                self.ui.proposal_card.set_proposal(None)
                self.ui.latent_panel.set_stale(True)
            case events.Working() as working:
                self.working.show(working)
            case events.Parsed(parse=parse):
                self._current_parse = parse
                self.session.live_parse = parse  # the runner's parse is the freshest one of the phone
                if self.session.viewing.live:
                    self.ui.show_parse(parse)
            case events.Estimated(step=index, latent=latent):
                self._show_latent(index, latent)
            case events.Proposed(step=index, proposal=proposal):
                self._show_proposal(index, proposal)
            case events.AwaitingDecision(step=index, proposal=proposal, reason=reason, failed=True):
                self._ask_to_perform(index, proposal, reason)
            case events.AwaitingDecision(step=index, proposal=proposal, reason=reason, confirm_done=True):
                self._ask_if_done(index, proposal, reason)
            case events.AwaitingDecision(step=index, proposal=proposal, reason=reason, alternatives=alternatives):
                self._show_proposal(index, proposal)
                self._offer(alternatives)
                self._ask(index, reason)
            case events.Executed(record=record) | events.Rejected(record=record) | events.Aborted(record=record) | events.Amended(record=record):
                self._add_step(record)
            case events.Finished(status=status, note=note, episode=episode):
                self._finish(status, note, episode)
            case events.ErrorEvent(step=index, message=message, fatal=fatal, record=record):
                if record is not None:
                    self._add_step(record)
                level = Level.ERROR if fatal else Level.WARNING
                self.ui.notify(level, f"The agent failed at step {index + 1}", message, key="agent-step-failed")
            case _:
                log.debug("event not shown: %r", event)
        if not is_decision_request(event) and self.ui.task_panel.state is RunState.WAITING:
            self.ui.task_panel.set_state(RunState.RUNNING, "Running")

    def _show_latent(self, index: int, latent: LatentState) -> None:
        # highlight what changed since the previous *step* (a step may refine its estimate)
        if index != self._latent_step:
            self._latent_prev = self._latent_last
            self._latent_step = index
        self._latent_last = latent
        self.ui.latent_panel.set_state(latent, self._latent_prev)

    # ---- proposals and questions ------------------------------------------------------------------
    def _show_proposal(self, index: int, proposal: Proposal) -> None:
        from agent.explain import confidence_of, why_line

        self.working.stop()
        self.proposal = proposal
        self.ui.proposal_card.set_proposal(proposal, why=why_line(proposal, self._goal, self._current_parse),
                                           confidence=confidence_of(proposal))
        self._show_screen_gist(index)
        if self.session.viewing.live:
            self.ui.view.set_proposal(proposal.action)
        if proposal.latent is not None:
            self._show_latent(index, proposal.latent)

    def _show_screen_gist(self, index: int) -> None:
        """The card says what the parse shows (app, page, entries): the model's summary of the
        screen is checked against the same words."""
        from agent.screen_text import screen_gist

        parse, screen = self._current_parse, self._step_screen.get(index)
        if parse is not None:
            gist = screen_gist(parse, screen.foreground_package if screen else None)
            self.ui.proposal_card.set_screen(gist.head, gist.text)

    def _ask(self, index: int, reason: str) -> None:
        ui = self.ui
        self._decision_started = time.perf_counter()
        self._watch_screen(index)
        ui.decisions.claim(self)
        ui.task_panel.set_state(RunState.WAITING, f"Waiting for your decision ({reason})" if reason
                                else "Waiting for your decision")
        ui.decision_bar.buttons[DecisionKind.APPROVE].setFocus()

    def _offer(self, alternatives: tuple[Action, ...]) -> None:
        """Other candidates after repeated rejections on this screen, one click each."""
        self.ui.proposal_card.set_alternatives([(a.describe(), a) for a in alternatives])

    def _pick(self, action: Action) -> None:
        """The user picked an offered candidate: it is performed as an edit of the step."""
        self.decide(Decision(DecisionKind.EDIT, action=action, feedback="picked from the offered candidates"))

    def _ask_if_done(self, index: int, proposal: Proposal, reason: str) -> None:
        """The agent says the task is done (or the run stopped): the user says whether it is."""
        self.working.stop()
        self.proposal = proposal
        self.ui.proposal_card.set_proposal(proposal)
        self.ui.proposal_card.set_question("Is the task done?", (proposal.rationale or reason).strip())
        self._wait_off_the_mirror(self.ui.decision_bar.set_confirm, "Is the task done? Yes ends the run as succeeded",
                                  DecisionKind.APPROVE)

    def _ask_to_perform(self, index: int, placeholder: Proposal, reason: str) -> None:
        """A failed step: the user shows or edits what to do, rejects to retry, or aborts."""
        self.proposal = placeholder
        self.ui.proposal_card.set_failed(reason)
        self._wait_off_the_mirror(self.ui.decision_bar.set_failed_step,
                                  "The step failed: Demonstrate or Edit it, Reject to retry", DecisionKind.DEMONSTRATE)

    def _wait_off_the_mirror(self, bar_mode: Callable[[bool], None], state: str, focus: DecisionKind) -> None:
        """A question with no step to show on the mirror: the overlay's proposal and the screen
        watch stop, the decision bar waits in ``bar_mode``, the panel says ``state`` and the
        ``focus`` button takes the keyboard."""
        self.ui.view.set_proposal(None)
        self.watch.stop()
        self.ui.decisions.claim(self)
        bar_mode(True)
        self.ui.task_panel.set_state(RunState.WAITING, state)
        self.ui.decision_bar.buttons[focus].setFocus()

    def check_screen_changed(self) -> None:
        """A live frame arrived while a proposal waits: the watch looks at it once it settles."""
        live = self.session.live_screen
        if live is not None and self.proposal is not None:
            self.watch.frame(live)

    def _watch_screen(self, index: int) -> None:
        """Watch for a change that matters to the screen step ``index`` was planned on."""
        parse, screen = self._current_parse, self._step_screen.get(index)
        if parse is None or screen is None:
            self.watch.stop()
            return
        self.watch.watch(planned_identity(parse, screen), self.session.live_screen)

    def _add_step(self, step: Step) -> None:
        shown = self._step_screen.get(step.index)
        self._screens[(self._section, step.index)] = (shown, step.parse or self._current_parse, step.executed)
        self.ui.timeline.add_step(step, shown.image if shown is not None else None, section=self._section)

    def _finish(self, status: EpisodeStatus, note: str, episode: Episode) -> None:
        self.episode_id = episode.id
        from agent.cost import run_cost

        self.end = RunEnd(EpisodeStatus(status), note, episode.id, run_cost(episode).describe())
        # the stored steps are the truth: any step the loop did not announce (or that gained
        # what flashed after it since) is shown as stored
        for step in episode.steps:
            shown = self.ui.timeline.step(step.index, self._section)
            if shown is None or shown.transients != step.transients:
                self._add_step(step)
        self.ui.timeline.set_section_title(self._section, f"{self._goal} — {self.end.summary()}")

    def _on_finished(self, result: Any) -> None:
        self.result = result
        if isinstance(result, Episode):
            self._record_speed(result)
        self._close_client()
        self._end_ui()
        if isinstance(result, Episode):
            self.episode_id = result.id
            if self.end is None:
                self.end = RunEnd(result.status, result.note, result.id)
        end = self.end or RunEnd(EpisodeStatus.SUCCEEDED, "")
        self.ui.task_panel.set_state(RunState.IDLE, end.text())
        level = Level.INFO if end.status is EpisodeStatus.SUCCEEDED else Level.WARNING
        self.ui.notify(level, f"Task {end.summary()}", key="run-finished")
        self.ui.episodes_panel.request_refresh()
        self.ui.task_ended()

    def _on_error(self, failure: Failure) -> None:
        self._close_client()
        self._end_ui()
        self.end = RunEnd(EpisodeStatus.ERROR, failure.message, self.episode_id or "")
        self.ui.timeline.set_section_title(self._section, f"{self._goal} — {self.end.summary()}")
        self.ui.task_panel.set_state(RunState.IDLE, f"Stopped by an error: {failure.message}")
        self.ui.notify_failure("The agent stopped", failure)
        self.ui.episodes_panel.request_refresh()

    def _end_ui(self) -> None:
        ui = self.ui
        self.recording.finished(self._section, self.episode_id)
        self.driver = None
        self.demonstrating = False
        ui.decisions.release(self)
        ui.decision_bar.set_bigger_model("")
        self._clear_panels()
        self.watch.stop()
        self.latent.run_ended()
        if ui.view.mode is ViewMode.DEMONSTRATE:
            ui.view.set_mode(ViewMode.INSPECT)

    def _record_speed(self, episode: Episode) -> None:
        """Keep the model's seconds per call (it chooses the "auto" planner next time)."""
        calls = [c for s in episode.steps if s.proposal is not None for c in s.proposal.llm_calls if not c.error]
        if not calls or not episode.model:
            return
        seconds = sum(c.latency_ms for c in calls) / len(calls) / 1000.0
        prefs, model = self.session.prefs, episode.model
        self.session.misc.submit(lambda: prefs.record_speed(model, seconds))

    def _close_client(self) -> None:
        client, self._client = self._client, None
        close = getattr(client, "close", None)
        if close is not None:
            try:
                close()
            except Exception as exc:  # closing an HTTP client must not hide the run's result
                log.warning("closing the LLM client failed: %s", exc)

    # ---- user controls (the decision router calls decide / edit / demonstrate) -------------
    def decide(self, decision: Decision) -> None:
        if self.driver is None or not self.driver.waiting:
            return
        ui = self.ui
        ui.decisions.release(self)
        self.demonstrating = False
        if ui.view.mode is ViewMode.DEMONSTRATE:
            ui.view.set_mode(ViewMode.INSPECT)
        ui.view.set_proposal(None)
        self.watch.stop()
        ui.task_panel.set_state(RunState.RUNNING, f"{decision.kind.value}: carrying on")
        self.driver.decide(decision)

    def edit(self) -> None:
        if self.proposal is None:
            return
        action = self.proposal.action
        placeholder = action.type is ActionType.WAIT and self.ui.decision_bar.failed_step
        self.ui.open_action_editor(
            None if placeholder else action, lambda a: self.decide(Decision(DecisionKind.EDIT, action=a))
        )

    def demonstrate(self) -> None:
        if self.proposal is None:
            return
        self._demo.start()
        self.ui.task_panel.set_state(RunState.WAITING, "Demonstrate: do the step on the mirror "
                                     "(tap, hold, drag, or type and press Enter)")

    def _on_demonstrated(self, action: Action) -> None:
        self.decide(Decision(DecisionKind.DEMONSTRATE, action=action))

    def pause(self, paused: bool) -> None:
        """Pause at once: a model call in progress is abandoned and its step starts again on resume."""
        if self.driver is not None:
            self.driver.pause(paused)
            if self._cancel is not None:
                if paused and not self.driver.waiting:
                    self._cancel.interrupt()
                elif not paused:
                    self._cancel.resume()
            self.ui.task_panel.set_state(RunState.PAUSED if paused else RunState.RUNNING,
                                         "Paused" if paused else "Running")

    def step_once(self) -> None:
        if self.driver is not None:
            self.driver.step_once()

    def abort(self) -> None:
        """Stop the run in one click, paused or waiting for a decision alike."""
        driver = self.driver
        if driver is None:
            return
        if driver.waiting:
            self.decide(Decision(DecisionKind.ABORT, feedback="aborted by the user"))
        driver.stop()  # also lifts a pause, so the loop reaches its end
        self.ui.task_panel.set_state(RunState.RUNNING, "Aborting…")

    def shutdown(self, timeout: float = 15.0) -> None:
        """Stop the loop cleanly (abort at the next decision or yield) and wait for it."""
        driver = self.driver
        if driver is None:
            self.recording.shutdown()
            return
        driver.stop()
        if not driver.join(timeout):
            log.error("the agent loop did not stop within %.0f s", timeout)
        self._close_client()
        self.recording.shutdown()

    # ---- past steps ---------------------------------------------------------------------------
    def step_screen(self, section: str, index: int) -> tuple[Screen | None, ScreenParse | None, Action | None] | None:
        return self._screens.get((section, index))
