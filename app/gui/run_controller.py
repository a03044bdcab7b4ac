"""Running a task from the window: builds the agent loop (``agent.runner.run_episode``),
drives it on a worker thread through ``GeneratorDriver``, shows each event (parse,
latent state, proposal, executed step) and sends the user's decisions back.

Edit opens the action editor (target picked on the mirror); Demonstrate switches the
mirror to demonstration mode and sends the user's gesture as the step.  Closing the
window stops the loop at its next yield; the runner stores the episode as it goes.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from agent.types import Action, Decision, DecisionKind, LatentState, Proposal, Step
from app.gui.workers import Failure, GeneratorDriver, needs_decision
from vision.types import Screen, ScreenParse
from widgets.notifications import Level
from widgets.screen_view import ViewMode
from widgets.task_panel import RunState, TaskRequest

if TYPE_CHECKING:
    from app.gui.window import MainWindow

log = logging.getLogger(__name__)


class RunController:
    """One task run at a time, owned by the main window."""

    def __init__(self, window: MainWindow) -> None:
        self.w = window
        self.driver: GeneratorDriver | None = None
        self.proposal: Proposal | None = None
        self.demonstrating = False
        self.episode_id: str | None = None
        self.result: Any = None
        self.events: list[Any] = []
        self._latent_prev: LatentState | None = None  # the last estimate of the previous step
        self._latent_last: LatentState | None = None
        self._latent_step: int | None = None
        self._screens: dict[int, tuple[Any, ScreenParse | None, Action | None]] = {}
        self._current_screen: Screen | None = None
        self._current_parse: ScreenParse | None = None
        self._decision_started: float | None = None
        self.llm_factory: Any = None  # tests and embedders may supply the LLM client
        self._starting = False
        w = window
        w.task_panel.startRequested.connect(self.start)
        w.task_panel.pauseRequested.connect(self.pause)
        w.task_panel.stepRequested.connect(self.step_once)
        w.task_panel.abortRequested.connect(self.abort)
        w.decision_bar.decided.connect(self.decide)
        w.decision_bar.editRequested.connect(self.edit)
        w.decision_bar.demonstrateRequested.connect(self.demonstrate)
        w.view.actionDemonstrated.connect(self._on_demonstrated)

    @property
    def active(self) -> bool:
        return self._starting or (self.driver is not None and self.driver.running)

    # ---- starting ----------------------------------------------------------------------
    def start(self, request: TaskRequest) -> None:
        w = self.w
        if self.active:
            w.notify(Level.WARNING, "A task is already running.")
            return
        if w.device is None:
            w.notify(Level.ERROR, "No phone is connected.", "Pick a phone (or the virtual phone) in the tool bar.")
            return
        # building the loop imports the agent and opens the database: do it off the GUI thread
        self._starting = True
        w.task_panel.set_state(RunState.RUNNING, f"Starting: {request.goal}")
        w.misc.submit(lambda: self._make_generator(request), on_done=lambda gen: self._begin(request, gen),
                      on_error=self._start_failed)

    def _start_failed(self, failure: Failure) -> None:
        self._starting = False
        self.w.task_panel.set_state(RunState.IDLE, "Could not start")
        self.w.notify_failure("Could not start the task", failure)

    def _begin(self, request: TaskRequest, gen: Any) -> None:
        w = self.w
        self._starting = False
        if w._closing:
            gen.close()
            return
        self.events.clear()
        self._screens.clear()
        self._latent_prev = self._latent_last = None
        self._latent_step = None
        self.result = None
        w.timeline.clear()
        w.timeline_dock.raise_()
        w.model_status.setText(f"model: {request.model}")
        self.driver = GeneratorDriver(gen, w.poster, self._on_event, self._on_finished, self._on_error,
                                      on_stop=self._cancel_run)
        w.task_panel.set_state(RunState.RUNNING, f"Running: {request.goal}")
        self.driver.start()

    def _make_generator(self, request: TaskRequest) -> Any:
        from agent.llm.base import CancelToken
        from app.gui.agent_setup import build_episode

        self._cancel = CancelToken()
        client = self.llm_factory(request) if self.llm_factory is not None else None
        gen, self._client = build_episode(
            goal=request.goal, planner=request.planner, autonomy=request.autonomy, model=request.model,
            device=self.w.agent_device(), parser=_LazyParser(self.w), store=self.w.store(),
            settings=self.w.settings, cancel=self._cancel, client=client,
        )
        return gen

    def _cancel_run(self) -> None:
        cancel = getattr(self, "_cancel", None)
        if cancel is not None:
            cancel.cancel()

    # ---- events from the loop (GUI thread) ---------------------------------------------------
    def _on_event(self, event: Any) -> None:
        w = self.w
        self.events.append(event)
        screen = _first(event, ("screen",), Screen)
        parse = _first(event, ("parse",), ScreenParse)
        proposal = _first(event, ("proposal",), Proposal)
        latent = _first(event, ("latent", "state", "latent_state"), LatentState)
        step = _first(event, ("record", "step"), Step)
        index = getattr(event, "step", None)
        if isinstance(index, int):
            self._index = index
        else:
            index = None
        episode = getattr(event, "episode", None)
        if episode is not None and getattr(episode, "id", None):
            self.episode_id = episode.id
        if getattr(event, "episode_id", None):
            self.episode_id = event.episode_id
        if screen is not None:
            self._current_screen = screen
        elif proposal is not None and w._live_screen is not None:
            self._current_screen = w._live_screen  # the mirror's frame when the proposal came
        if parse is not None:
            self._current_parse = parse
            w._live_parse = parse  # the runner's parse is the freshest parse of the live phone
            if w.viewing == "live":
                w.show_parse(parse)
        if proposal is not None:
            self.proposal = proposal
            w.proposal_card.set_proposal(proposal)
            if w.viewing == "live":
                w.view.set_proposal(proposal.action)
            if latent is None and proposal.latent is not None:
                latent = proposal.latent
        if latent is not None:
            # highlight what changed since the previous *step* (a step may refine its estimate)
            if index is not None and index != self._latent_step:
                self._latent_prev = self._latent_last
                self._latent_step = index
            self._latent_last = latent
            w.latent_panel.set_state(latent, self._latent_prev)
        if step is not None:
            shown = self._current_screen
            self._screens[step.index] = (shown, step.parse or self._current_parse, step.executed)
            thumb = shown.image if shown is not None else None
            w.timeline.add_step(step, thumb)
        message = getattr(event, "message", "") or ""
        kind = getattr(getattr(event, "kind", None), "value", getattr(event, "kind", type(event).__name__))
        if kind in ("error",) or type(event).__name__.lower().startswith("error"):
            w.notify(Level.ERROR, f"Agent: {message or 'error'}", str(getattr(event, "detail", "")))
        elif message and kind in ("warning", "notice"):
            w.notify(Level.WARNING, message)
        if needs_decision(event):
            self._decision_started = time.perf_counter()
            w.decision_bar.set_enabled(True)
            w.task_panel.set_state(RunState.WAITING, "Waiting for your decision")
            w.decision_bar.buttons[DecisionKind.APPROVE].setFocus()
        elif w.task_panel.state is RunState.WAITING:
            w.task_panel.set_state(RunState.RUNNING, "Running")

    def _on_finished(self, result: Any) -> None:
        self.result = result
        self._close_client()
        self._end_ui()
        status = getattr(getattr(result, "status", None), "value", None)
        if getattr(result, "id", None):
            self.episode_id = result.id
        self.w.task_panel.set_state(RunState.IDLE, f"Finished: {status or 'done'}")
        self.w.notify(Level.INFO, f"Task finished ({status or 'done'}).")

    def _on_error(self, failure: Failure) -> None:
        self._close_client()
        self._end_ui()
        self.w.task_panel.set_state(RunState.IDLE, "Stopped by an error")
        self.w.notify_failure("The agent stopped", failure)

    def _end_ui(self) -> None:
        w = self.w
        self.driver = None
        self.proposal = None
        self.demonstrating = False
        w.decision_bar.set_enabled(False)
        w.view.set_proposal(None)
        if w.view.mode is ViewMode.DEMONSTRATE:
            w.view.set_mode(ViewMode.INSPECT)

    def _close_client(self) -> None:
        client, self._client = getattr(self, "_client", None), None
        close = getattr(client, "close", None)
        if close is not None:
            try:
                close()
            except Exception as exc:  # closing an HTTP client must not hide the run's result
                log.warning("closing the LLM client failed: %s", exc)

    # ---- user controls ---------------------------------------------------------------------
    def decide(self, decision: Decision) -> None:
        if self.driver is None or not self.driver.waiting:
            return
        if decision.kind in (DecisionKind.REJECT, DecisionKind.ABORT) and self.proposal is not None:
            # the runner records these steps without an event: show them on the timeline too
            from agent.types import StepOutcome

            outcome = StepOutcome.REJECTED if decision.kind is DecisionKind.REJECT else StepOutcome.ABORTED
            index = getattr(self, "_index", self.w.timeline.count())
            self._screens[index] = (self._current_screen, self._current_parse, None)
            thumb = self._current_screen.image if self._current_screen is not None else None
            self.w.timeline.add_step(Step(index, parse=self._current_parse, proposal=self.proposal,
                                          decision=decision, outcome=outcome), thumb)
        self.w.decision_bar.set_enabled(False)
        self.demonstrating = False
        if self.w.view.mode is ViewMode.DEMONSTRATE:
            self.w.view.set_mode(ViewMode.INSPECT)
        self.w.view.set_proposal(None)
        self.w.task_panel.set_state(RunState.RUNNING, f"{decision.kind.value}: carrying on")
        self.driver.decide(decision)

    def edit(self) -> None:
        if self.proposal is None:
            return
        self.w.open_action_editor(
            self.proposal.action, lambda action: self.decide(Decision(DecisionKind.EDIT, action=action))
        )

    def demonstrate(self) -> None:
        if self.proposal is None:
            return
        self.demonstrating = True
        self.w.show_live()
        self.w.view.set_mode(ViewMode.DEMONSTRATE)
        self.w.task_panel.set_state(RunState.WAITING, "Demonstrate: do the step on the mirror (tap, hold, drag, or type and press Enter)")

    def _on_demonstrated(self, action: Action) -> None:
        if self.demonstrating:
            self.decide(Decision(DecisionKind.DEMONSTRATE, action=action))

    def pause(self, paused: bool) -> None:
        if self.driver is not None:
            self.driver.pause(paused)
            self.w.task_panel.set_state(RunState.PAUSED if paused else RunState.RUNNING,
                                        "Paused" if paused else "Running")

    def step_once(self) -> None:
        if self.driver is not None:
            self.driver.step_once()

    def abort(self) -> None:
        if self.driver is None:
            return
        if self.driver.waiting:
            self.decide(Decision(DecisionKind.ABORT, feedback="aborted by the user"))
        else:
            self.driver.stop()

    def shutdown(self, timeout: float = 15.0) -> None:
        """Stop the loop cleanly (abort at the next decision or yield) and wait for it."""
        driver = self.driver
        if driver is None:
            return
        driver.stop()
        if not driver.join(timeout):
            log.error("the agent loop did not stop within %.0f s", timeout)
        self._close_client()

    # ---- past steps ---------------------------------------------------------------------------
    def step_screen(self, index: int) -> tuple[Any, ScreenParse | None, Action | None] | None:
        return self._screens.get(index)


class _LazyParser:
    """Hands the runner the window's parser, built on first use (on the runner's thread)."""

    def __init__(self, window: MainWindow) -> None:
        self._w = window

    def parse(self, screen: Screen, *args: Any, **kwargs: Any) -> ScreenParse:
        return self._w.parse_screen(screen, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._w.parser(), name)


def _first(event: Any, names: tuple[str, ...], cls: type) -> Any:
    for n in names:
        v = getattr(event, n, None)
        if isinstance(v, cls):
            return v
    return None
