"""Replaying macros as runs of the agent loop.

``Replayer.start(macro, params)`` builds a ``Replay``: ``agent.runner.run_episode`` driven
by a ``MacroPlanner`` (``agent.macros.planner``) whose proposals are the macro's steps,
found again on each screen.  Its ``events`` generator yields the runner's own events
(``agent.events``: ``Proposed``, ``AwaitingDecision``, ``Executed``, ``Rejected``,
``Finished``…) and takes ``Decision``s through ``send()`` exactly as a task run does, so
approval, safety checks, storage (the ``StepSink``) and the window's controllers are
the ones runs use.  The generator returns a ``ReplayResult``: per-step reports, the
episode as stored and, when the user repaired steps, the macro's next version.

With ``approve_each`` every step waits for approval (Reject skips the step).  With a
``healer``, a step the cascade cannot find (or finds ambiguously) is healed by one model
call and put to the user as a *healed* step whatever the replay's autonomy; approved, the
macro's next version keeps it.  A step that cannot be found or healed, or whose effect
was wrong (undone with Back when the screen changed), waits for the user however the
replay runs: ``Replay.question`` turns that
``AwaitingDecision`` into a ``NeedDemonstration``; demonstrate (or edit) the step,
reject to skip it, abort to give up.  ``run_unattended`` drives a replay without a user.
The replayer talks to the device only through ``agent.device.Device``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from typing import Any

from agent.device import Device, DeviceError
from agent.events import AwaitingDecision, Event, RunSettings, StepSink
from agent.llm.base import CancelToken
from agent.macros.editing import fill_parameters, next_version
from agent.macros.effects import StepReport
from agent.macros.heal import Healer
from agent.macros.planner import Eyes, MacroPlanner, needs_you
from agent.macros.recorder import Observation
from agent.macros.reidentify import Grounder, MatchLevel, Thresholds
from agent.macros.start import MAX_BACKS, is_fresh_launch
from agent.macros.types import Macro, MacroStep
from agent.runner import ScreenParserLike
from agent.types import Action, Autonomy, Decision, DecisionKind, Episode, EpisodeStatus
from vision.geometry import Size

log = logging.getLogger(__name__)

__all__ = ["NeedDemonstration", "Replay", "ReplayResult", "Replayer", "app_available", "run_unattended"]


@dataclass(frozen=True, slots=True, eq=False)
class NeedDemonstration:
    """A step waits for the user: it could not be found, or its effect was wrong."""

    index: int  # the macro step
    step: MacroStep
    reason: str
    observation: Observation | None


@dataclass(frozen=True, slots=True)
class ReplayResult:
    status: str  # succeeded | failed | aborted | app_missing
    macro: Macro  # the next version when steps were repaired
    steps: tuple[StepReport, ...] = ()
    repaired: bool = False
    message: str = ""
    episode: Episode | None = None  # the run as stored
    healed: int = 0  # steps the model found again and the user approved (kept in the next version)

    @property
    def succeeded(self) -> bool:
        return self.status == "succeeded"

    @property
    def levels(self) -> tuple[str, ...]:
        return tuple(s.level for s in self.steps)


def app_available(device: Device, app: str) -> bool | None:
    """Whether ``app`` (package or name) is installed; ``None`` if the device cannot tell."""
    lister = getattr(device, "installed_apps", None)
    if not callable(lister):
        return None
    try:
        apps = lister()
    except DeviceError as exc:
        log.warning("could not list installed apps: %s", exc)
        return None
    want = app.casefold()
    names: list[str] = []
    for a in apps:
        if isinstance(a, str):
            names.append(a)
        elif isinstance(a, (tuple, list)):
            names.extend(str(x) for x in a)
        else:  # objects with package/label attributes
            names.extend(str(getattr(a, k)) for k in ("package", "label", "name") if getattr(a, k, None))
    return any(n.casefold() == want for n in names)


@dataclass
class Replay:
    """One replay: the planner (what it found, which step is which) and the run's events."""

    planner: MacroPlanner
    events: Generator[Event, Decision | None, ReplayResult]

    def step_of(self, event: AwaitingDecision) -> int | None:
        """The macro step a decision request is about (None: a setup or finishing step)."""
        return self.planner.asked.get(event.step)

    def question(self, event: AwaitingDecision) -> NeedDemonstration | None:
        """The request as a ``NeedDemonstration`` when the step needs the user, else None."""
        if not needs_you(event.proposal):
            return None
        index = self.planner.asked.get(event.step, self.planner.cursor)
        return NeedDemonstration(index, self.planner.concrete.steps[index], self.planner.failure,
                                 self.planner.eyes.last)


@dataclass
class Replayer:
    """Replays macros on ``device``; ``parser`` turns its screenshots into parses."""

    device: Device
    parser: ScreenParserLike
    grounder: Grounder | None = None
    approve_each: bool = False
    check_effects: bool = True
    recorded_size: Size | None = None  # for scaling raw points when no element was recorded
    settle_ms: int = 0  # pause after each action before the next screenshot
    thresholds: Thresholds = field(default_factory=Thresholds)
    start_in_app: bool = True
    after_scroll_layout_weight: float = 0.25
    skip_levels: tuple[MatchLevel, ...] = ()  # cascade levels not to use (ablations)
    healer: Healer | None = None  # asked (one model call) where the cascade misses or is unsure

    def start(self, macro: Macro, params: dict[str, str] | None = None, *, store: StepSink | None = None,
              cancel: CancelToken | None = None) -> Replay:
        """Build the replay; ``MissingParameter`` names a missing value before anything runs."""
        from agent.runner import run_episode

        params = dict(params or {})
        concrete = fill_parameters(macro, params)
        planner = MacroPlanner(macro, concrete, Eyes(self.parser), params, grounder=self.grounder,
                               thresholds=self.thresholds, check_effects=self.check_effects,
                               recorded_size=self.recorded_size, start_in_app=self.start_in_app,
                               after_scroll_layout_weight=self.after_scroll_layout_weight,
                               skip_levels=self.skip_levels, healer=self.healer)
        if macro.app and app_available(self.device, macro.app) is False:
            planner.missing_app = (f"the macro's app {macro.app!r} is not installed on this device: "
                                   "install it or pick another macro")
        n = len(macro.steps)
        fresh = sum(1 for step in macro.steps if is_fresh_launch(step))  # open, Backs, open again
        settings = RunSettings(mode=Autonomy.APPROVE if self.approve_each else Autonomy.AUTO,
                               max_steps=3 * n + 6 + fresh * (MAX_BACKS + 2), max_repeats=_longest_repeat(concrete) + 1,
                               max_consecutive_errors=3, settle_ms=self.settle_ms, model="")
        goal = f"Replay the macro “{macro.name}” (v{macro.version})"
        run = run_episode(goal, self.device, planner.eyes, planner, store, settings=settings, cancel=cancel)
        return Replay(planner, _relay(planner, run))

    def run(self, macro: Macro, params: dict[str, str] | None = None, *, store: StepSink | None = None,
            cancel: CancelToken | None = None) -> Generator[Event, Decision | None, ReplayResult]:
        """The replay's events (see ``start``)."""
        return self.start(macro, params, store=store, cancel=cancel).events


def _relay(planner: MacroPlanner, run: Generator[Event, Decision | None, Episode]
           ) -> Generator[Event, Decision | None, ReplayResult]:
    """The runner's events, unchanged, with the planner hearing each one first."""
    reply: Decision | None = None
    try:
        while True:
            try:
                event = run.send(reply)
            except StopIteration as stop:
                return _result(planner, stop.value)
            planner.heard(event)
            reply = yield event
    finally:
        run.close()


def _result(planner: MacroPlanner, episode: Episode) -> ReplayResult:
    macro = planner.macro
    reports = list(planner.reports)
    status = episode.status
    if planner.missing_app:
        state, message = "app_missing", planner.missing_app
    elif status is EpisodeStatus.SUCCEEDED:
        state, message = "succeeded", ""
    elif status is EpisodeStatus.ABORTED and not planner.failure:
        state, message = "aborted", episode.note or "aborted by the user"
    else:
        state, message = "failed", planner.failure or episode.note
    if state == "failed" and planner.wrong_effect is not None:
        reports.append(planner.wrong_effect)
    result_macro = macro
    if planner.repaired:
        result_macro = next_version(macro, tuple(planner.new_steps) + macro.steps[planner.cursor:])
    return ReplayResult(state, result_macro, tuple(reports), planner.repaired, message, episode, planner.healed)


def _longest_repeat(macro: Macro) -> int:
    """The most equal actions in a row in the macro (the runner's repeat rule must allow them)."""
    from agent.commands import action_key

    best = run = 1
    keys = [action_key(s.action) for s in macro.steps]
    for a, b in zip(keys, keys[1:], strict=False):
        run = run + 1 if a == b else 1
        best = max(best, run)
    return max(best, 2)


def as_decision(answer: Any, reason: str = "") -> Decision:
    """The user's answer to a ``NeedDemonstration``: an action (or a list: the first is
    used), a ``Decision``, or None to give up."""
    if answer is None:
        return Decision(DecisionKind.ABORT, feedback=reason or "no demonstration")
    if isinstance(answer, Decision):
        return answer
    if isinstance(answer, Action):
        return Decision(DecisionKind.DEMONSTRATE, action=answer)
    if isinstance(answer, Sequence) and not isinstance(answer, str):
        actions = [a for a in answer if isinstance(a, Action)]
        if actions:
            return Decision(DecisionKind.DEMONSTRATE, action=actions[0])
        return Decision(DecisionKind.ABORT, feedback=reason or "no demonstration")
    raise TypeError(f"a demonstration must be an Action, a list of actions or a Decision, got {type(answer).__name__}")


def run_unattended(replayer: Replayer, macro: Macro, params: dict[str, str] | None = None,
                   demonstrate: Callable[[NeedDemonstration], Any] | None = None,
                   approve: Callable[[AwaitingDecision], Decision] | None = None,
                   store: StepSink | None = None) -> ReplayResult:
    """Drive a replay to its end: approve everything, and answer requests for the user
    with ``demonstrate`` (``None`` gives up, as a user who is away would)."""
    replay = replayer.start(macro, params, store=store)
    gen = replay.events
    reply: Decision | None = None
    try:
        while True:
            ev = gen.send(reply)
            reply = None
            if isinstance(ev, AwaitingDecision):
                question = replay.question(ev)
                if question is not None:
                    answer = demonstrate(question) if demonstrate is not None else None
                    reply = as_decision(answer, question.reason)
                else:
                    reply = approve(ev) if approve is not None else Decision(DecisionKind.APPROVE)
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]
