"""``run_episode``: the observe -> parse -> estimate -> plan -> ground -> decide -> execute loop.

A generator: it yields frozen events (``agent.events``) and, at ``AwaitingDecision``,
receives the user's ``Decision`` through ``send()``.  Stop rules: with latent state, stop
when the completion estimate says yes; without, stop on a predicted "done"; always stop
at the step budget or after ``max_repeats`` identical actions in a row.  Sensitive
actions wait for approval unless allowed for the task.  Every step is handed to the
``StepSink`` the moment it completes.  LLM, parse and grounding failures become step
errors (the run goes on until ``max_consecutive_errors``); a device failure ends the
run with an error event and the episode is kept.  On-screen text only ever reaches
models inside a fenced data block.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from agent.commands import action_key
from agent.device import Device, DeviceError, DeviceGone
from agent.events import (
    Autonomy,
    AwaitingDecision,
    ErrorEvent,
    Estimated,
    Event,
    Executed,
    Finished,
    Observed,
    Parsed,
    Proposed,
    RunSettings,
    StepSink,
)
from agent.execute import NotExecutable, execute
from agent.grounding.assessment import Assessor
from agent.grounding.base import ElementGrounder, GroundContext, Grounder, GroundingError, needs_grounding
from agent.latent import ChainedEstimator, LatentEstimator, LatentInput
from agent.llm.base import CancelToken, LLMError
from agent.planners.base import PlanContext, PlanError, Planner, Turn
from agent.safety import sensitivity
from agent.screen_text import description, fenced
from agent.types import (
    Action,
    ActionType,
    Decision,
    DecisionKind,
    Episode,
    EpisodeStatus,
    LatentState,
    LLMCall,
    Proposal,
    Step,
    StepOutcome,
)
from vision.types import Screen, ScreenParse

log = logging.getLogger(__name__)


class ScreenParserLike(Protocol):
    def parse(self, screen: Screen) -> ScreenParse: ...


class _StepFailed(Exception):
    def __init__(self, message: str, calls: tuple[LLMCall, ...] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.calls = calls


@dataclass
class _State:
    episode: Episode
    history: list[Turn] = field(default_factory=list)
    performed: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # for the current screen
    failed: list[Action] = field(default_factory=list)  # options rejected on the current screen
    prev_screen_text: str = ""
    last_screen_key: str = ""
    index: int = 0
    errors_in_row: int = 0


def run_episode(
    goal: str,
    device: Device,
    parser: ScreenParserLike,
    planner: Planner,
    store: StepSink | None = None,
    *,
    settings: RunSettings | None = None,
    estimator: LatentEstimator | None = None,
    grounder: Grounder | None = None,
    assessor: Assessor | None = None,
    cancel: CancelToken | None = None,
) -> Generator[Event, Decision | None, Episode]:
    """Drive one episode; see the module docstring.  Returns the final ``Episode``."""
    settings = settings or RunSettings()
    if not goal.strip():
        raise ValueError("the goal is empty: say what the agent should do")
    if planner.uses_latent and estimator is None:
        client = getattr(planner, "client", None)
        if client is None:
            raise ValueError(f"planner {planner.name!r} uses latent state: pass an estimator")
        estimator = ChainedEstimator(client)
    grounder = grounder or ElementGrounder()
    try:
        serial = device.info.serial
    except Exception:  # a dead device is reported at the first screenshot
        serial = "?"
    st = _State(Episode(goal=goal, planner=planner.name, model=settings.model, device=serial,
                        autonomy=settings.mode.value))
    _sink(store, "begin_episode", st.episode)

    def finish(status: EpisodeStatus, note: str) -> Finished:
        st.episode = replace(st.episode, status=status, note=note, finished_at=time.time())
        _sink(store, "finish_episode", st.episode.id, status, note)
        return Finished(status, note, st.episode)

    def record(step: Step, screen: Screen | None) -> Step:
        step = replace(step, finished_at=time.time())
        stored = _sink(store, "append_step", st.episode.id, step, screen)
        if isinstance(stored, Step):
            step = stored
        st.episode = st.episode.with_step(step)
        return step

    while True:
        if cancel is not None and cancel.cancelled:
            yield finish(EpisodeStatus.ABORTED, "cancelled")
            return st.episode
        if st.index >= settings.max_steps:
            yield finish(EpisodeStatus.FAILED, f"step budget of {settings.max_steps} reached")
            return st.episode
        if st.errors_in_row >= settings.max_consecutive_errors:
            yield finish(EpisodeStatus.ERROR, f"{st.errors_in_row} failed steps in a row")
            return st.episode
        i = st.index
        st.index += 1
        started = time.time()

        # ---- observe ------------------------------------------------------------------
        try:
            screen = device.screenshot(with_hierarchy=True)
            foreground = screen.foreground_package
        except DeviceGone as exc:
            yield ErrorEvent(i, f"device failure: {exc}", fatal=True)
            record(Step(i, outcome=StepOutcome.ERROR, error=str(exc), started_at=started), None)
            yield finish(EpisodeStatus.ERROR, f"device failure: {exc}")
            return st.episode
        except DeviceError as exc:
            ev = _step_error(st, i, f"screenshot failed: {exc}", ())
            yield ev
            record(Step(i, outcome=StepOutcome.ERROR, error=ev.message, started_at=started), None)
            if st.errors_in_row >= settings.max_consecutive_errors:
                yield finish(EpisodeStatus.ERROR, ev.message)
                return st.episode
            continue
        yield Observed(i, screen)
        try:
            parse = parser.parse(screen)
        except Exception as exc:  # a parser bug must not kill the run
            log.exception("screen parse failed")
            ev = _step_error(st, i, f"screen parse failed: {exc}", ())
            yield ev
            record(Step(i, outcome=StepOutcome.ERROR, error=ev.message, foreground_package=foreground,
                        started_at=started), screen)
            if st.errors_in_row >= settings.max_consecutive_errors:
                yield finish(EpisodeStatus.ERROR, ev.message)
                return st.episode
            continue
        yield Parsed(i, parse)
        screen_text = fenced(description(parse, app=foreground))
        images = (_png(screen),) if settings.send_screenshot else ()
        screen_key = parse.description or screen_text
        if screen_key != st.last_screen_key:
            st.notes.clear()
            st.failed.clear()
        st.last_screen_key = screen_key

        # ---- estimate, plan, ground ---------------------------------------------------
        calls: list[LLMCall] = []
        latent: LatentState | None = None
        try:
            linput = LatentInput(
                goal=goal, screen=screen_text, previous_screen=st.prev_screen_text,
                commanded=st.history[-1].command if st.history else "",
                commanded_history=tuple(t.command for t in st.history), performed_history=tuple(st.performed))
            if planner.uses_latent and estimator is not None:
                est = _guard(estimator.estimate, linput, cancel)
                calls.extend(est.calls)
                latent = est.latent
                if st.history:
                    st.performed.append(latent.performed_action or st.history[-1].command)
                    linput = replace(linput, performed_history=tuple(st.performed[:-1]))
                yield Estimated(i, latent, est.calls)
                if est.complete:
                    proposal = Proposal(Action.simple(ActionType.COMPLETE), rationale=latent.completion_reason,
                                        latent=latent, planner=planner.name, llm_calls=tuple(calls))
                else:
                    proposal = yield from _plan_and_ground(
                        goal, parse, screen_text, st, planner, grounder, settings, latent, cancel, calls, i, images)
                    comp = _guard(estimator.completion, linput, latent, proposal.action.describe(), cancel)
                    calls.extend(comp.calls)
                    latent = comp.latent
                    if comp.complete:
                        proposal = replace(proposal, action=Action.simple(ActionType.COMPLETE),
                                           rationale=latent.completion_reason)
                    proposal = replace(proposal, latent=latent)
            else:
                proposal = yield from _plan_and_ground(
                    goal, parse, screen_text, st, planner, grounder, settings, None, cancel, calls, i, images)
            blocked = any(e.startswith("blocked") for e in proposal.evidence)
            ask_reason = ""
            confidence = proposal.confidence
            if assessor is not None and not proposal.action.is_terminal and not blocked:
                a = assessor.assess(goal, tuple(t.command for t in st.history), proposal.action, screen_text,
                                    tuple(st.failed), cancel)
                calls.extend(a.calls)
                proposal = replace(proposal, evidence=(*proposal.evidence, f"assessment: {a.verdict} ({a.reason})"))
                confidence = a.confidence if a.confidence is not None else (1.0 if a.confident else 0.0)
                if a.verdict == "retract":
                    proposal = replace(proposal, action=Action.simple(ActionType.BACK))
                elif a.verdict == "finish":
                    proposal = replace(proposal, action=Action.simple(ActionType.COMPLETE))
                elif a.verdict == "change":
                    ask_reason = f"the assessment suggests a different action: {a.reason}"
                if not a.confident:
                    ask_reason = ask_reason or f"the assessment is not confident: {a.reason}"
        except _StepFailed as exc:
            ev = _step_error(st, i, exc.message, (*calls, *exc.calls))
            yield ev
            record(Step(i, parse=parse, outcome=StepOutcome.ERROR, error=exc.message, foreground_package=foreground,
                        started_at=started, proposal=_error_proposal(planner.name, latent, ev.calls)), screen)
            if cancel is not None and cancel.cancelled:
                yield finish(EpisodeStatus.ABORTED, "cancelled")
                return st.episode
            if st.errors_in_row >= settings.max_consecutive_errors:
                yield finish(EpisodeStatus.ERROR, f"{st.errors_in_row} failed steps in a row; last: {exc.message}")
                return st.episode
            continue

        sensitive = sensitivity(proposal.action, parse, foreground)
        proposal = replace(proposal, sensitive=sensitive is not None, confidence=confidence,
                           llm_calls=tuple(calls), latent=latent if latent is not None else proposal.latent)
        yield Proposed(i, proposal)

        # ---- decide -------------------------------------------------------------------
        reasons = []
        if settings.mode is Autonomy.APPROVE:
            reasons.append("every step needs approval")
        if sensitive and not settings.allow_sensitive:
            reasons.append(f"sensitive action ({sensitive})")
        if blocked:
            reasons.append("the agent is stuck on this screen: please demonstrate the next step")
        if settings.mode is Autonomy.CONFIDENT:
            if ask_reason:
                reasons.append(ask_reason)
            elif confidence is None and assessor is None:
                reasons.append("no confidence estimate for this step")
            elif confidence is not None and confidence < settings.confidence_threshold:
                reasons.append(f"low confidence ({confidence:.2f})")
        if reasons:
            decision = yield AwaitingDecision(i, proposal, "; ".join(reasons))
            while not isinstance(decision, Decision):
                decision = yield AwaitingDecision(i, proposal, "; ".join(reasons))
        else:
            decision = Decision(DecisionKind.APPROVE, decided_by="auto")

        base = Step(i, parse=parse, proposal=proposal, decision=decision, foreground_package=foreground,
                    started_at=started)
        if decision.kind is DecisionKind.ABORT:
            record(replace(base, outcome=StepOutcome.ABORTED), screen)
            yield finish(EpisodeStatus.ABORTED, decision.feedback or "aborted by the user")
            return st.episode
        if decision.kind is DecisionKind.REJECT:
            st.notes.append(f"The user rejected \"{proposal.action.describe()}\" and said: {decision.feedback}")
            st.failed.append(proposal.action)
            st.errors_in_row = 0
            record(replace(base, outcome=StepOutcome.REJECTED), screen)
            continue
        action = proposal.action if decision.kind is DecisionKind.APPROVE else decision.action
        assert action is not None
        source = {DecisionKind.APPROVE: "agent", DecisionKind.EDIT: "edit", DecisionKind.DEMONSTRATE: "demonstration"}[
            decision.kind]
        if needs_grounding(action):
            try:
                action = grounder.ground(action, GroundContext(goal, parse, (), cancel)).action
            except GroundingError as exc:
                ev = _step_error(st, i, f"cannot ground the chosen action: {exc.message}", exc.calls)
                yield ev
                record(replace(base, outcome=StepOutcome.ERROR, error=ev.message), screen)
                continue

        if action.is_terminal:
            status = EpisodeStatus.SUCCEEDED if action.type is ActionType.COMPLETE else EpisodeStatus.IMPOSSIBLE
            rec = record(replace(base, executed=action, outcome=StepOutcome.FINISHED), screen)
            yield Executed(i, action, rec)
            why = "completion estimate says the goal is met" if planner.uses_latent else "the planner predicted done"
            yield finish(status, why if status is EpisodeStatus.SUCCEEDED else "the planner judged the task impossible")
            return st.episode

        # ---- execute ------------------------------------------------------------------
        try:
            execute(action, device, wait_ms=settings.settle_ms, max_wait_s=settings.max_wait_s)
        except NotExecutable as exc:
            ev = _step_error(st, i, str(exc), ())
            yield ev
            record(replace(base, outcome=StepOutcome.ERROR, error=ev.message), screen)
            continue
        except DeviceGone as exc:
            yield ErrorEvent(i, f"device failure: {exc}", fatal=True)
            record(replace(base, outcome=StepOutcome.ERROR, error=str(exc)), screen)
            yield finish(EpisodeStatus.ERROR, f"device failure: {exc}")
            return st.episode
        except DeviceError as exc:
            # the phone refused this action (unknown app, bad input): the planner hears about it
            ev = _step_error(st, i, f"\"{action.describe()}\" failed on the phone: {exc.message}", ())
            yield ev
            st.notes.append(ev.message)
            st.failed.append(action)
            record(replace(base, outcome=StepOutcome.ERROR, error=ev.message), screen)
            if st.errors_in_row >= settings.max_consecutive_errors:
                yield finish(EpisodeStatus.ERROR, f"{st.errors_in_row} failed steps in a row; last: {ev.message}")
                return st.episode
            continue
        st.errors_in_row = 0
        thought = proposal.rationale if planner.name.startswith("react") else ""
        command = action.describe() if source == "agent" else f"{action.describe()} (done by the user)"
        st.history.append(Turn(command, action, screen_text, thought, source=source))
        st.prev_screen_text = screen_text
        rec = record(replace(base, executed=action, outcome=StepOutcome.EXECUTED), screen)
        yield Executed(i, action, rec)
        keys = [action_key(t.action) for t in st.history[-settings.max_repeats:]]
        if len(keys) == settings.max_repeats and len(set(keys)) == 1:
            yield finish(EpisodeStatus.FAILED, f"the same action was repeated {settings.max_repeats} times: "
                                               f"{action.describe()}")
            return st.episode


def _plan_and_ground(goal: str, parse: ScreenParse, screen_text: str, st: _State, planner: Planner,
                     grounder: Grounder, settings: RunSettings, latent: LatentState | None,
                     cancel: CancelToken | None, calls: list[LLMCall], i: int,
                     images: tuple[bytes, ...] = ()) -> Generator[Event, Any, Proposal]:
    """Propose and ground, sending grounding misses back to the planner (``max_replans`` times)."""
    notes = list(st.notes)
    evidence: list[str] = []
    for attempt in range(settings.max_replans + 1):
        ctx = PlanContext(goal=goal, parse=parse, screen=screen_text, history=tuple(st.history), latent=latent,
                          notes=tuple(notes), examples=settings.examples, step_index=i, cancel=cancel,
                          images=images)
        try:
            proposal = planner.propose(ctx)
        except PlanError as exc:
            raise _StepFailed(exc.message, exc.calls) from None
        calls.extend(proposal.llm_calls)
        evidence.extend(proposal.evidence)
        try:
            g = grounder.ground(proposal.action, GroundContext(goal, parse, tuple(t.command for t in st.history),
                                                               cancel))
        except GroundingError as exc:
            calls.extend(exc.calls)
            if exc.blocked:
                return replace(proposal, evidence=(*evidence, f"blocked: {exc.message}"))
            evidence.append(f"re-plan {attempt + 1}: {exc.message}")
            notes.append(f"\"{proposal.action.describe()}\" is not possible: {exc.message}. "
                         f"Elements available on this screen:\n{exc.available}")
            continue
        calls.extend(g.calls)
        return replace(proposal, action=g.action, evidence=(*evidence, *g.evidence))
    raise _StepFailed(f"no groundable action after {settings.max_replans} re-plans ({evidence[-1]})", ())
    yield  # pragma: no cover - makes this a generator


def _png(screen: Screen, max_side: int = 1024) -> bytes:
    """The screenshot as PNG, downscaled so its longer side is at most ``max_side``."""
    import io

    from PIL import Image

    img = Image.fromarray(screen.image)
    scale = max_side / max(img.size)
    if scale < 1:
        img = img.resize((round(img.width * scale), round(img.height * scale)))
    buf = io.BytesIO()
    img.save(buf, format="PNG", optimize=False)
    return buf.getvalue()


def _guard(fn: Callable[..., Any], *args: Any) -> Any:
    try:
        return fn(*args)
    except LLMError as exc:
        raise _StepFailed(str(exc), exc.calls) from None


def _step_error(st: _State, i: int, message: str, calls: tuple[LLMCall, ...]) -> ErrorEvent:
    st.errors_in_row += 1
    return ErrorEvent(i, message, fatal=False, calls=tuple(calls))


def _error_proposal(planner: str, latent: LatentState | None, calls: tuple[LLMCall, ...]) -> Proposal | None:
    """Keep the failed step's LLM calls (prompts and replies) with the stored step."""
    if not calls:
        return None
    return Proposal(Action.simple(ActionType.WAIT), rationale="(no usable proposal)", latent=latent,
                    planner=planner, llm_calls=calls)


def _sink(store: StepSink | None, method: str, *args: Any) -> Any:
    if store is None:
        return None
    try:
        return getattr(store, method)(*args)
    except Exception:  # storage trouble is logged, the run goes on
        log.exception("storing %s failed", method)
        return None


def drive(run: Generator[Event, Decision | None, Episode],
          decide: Callable[[AwaitingDecision], Decision] | None = None) -> Iterator[Event]:
    """Iterate a run, answering each ``AwaitingDecision`` with ``decide`` (approve if None)."""
    try:
        event = next(run)
        while True:
            yield event
            if isinstance(event, AwaitingDecision):
                decision = decide(event) if decide else Decision(DecisionKind.APPROVE)
                event = run.send(decision)
            else:
                event = next(run)
    except StopIteration:
        return
