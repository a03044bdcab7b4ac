"""``run_episode``: the observe -> propose -> decide -> execute loop of one episode.

A generator: it yields frozen events (``agent.events``) and, at ``AwaitingDecision``,
receives the user's ``Decision`` through ``send()``.  Each step goes through four phases,
one method each: *observe* (screenshot, parse, and a closer second look when a pixel
parse shows none of the goal's words), *propose* (latent state, plan, ground,
assess), *decide* (ask the user or approve) and *execute*.  Any phase that fails raises
``StepFailed``, and one failure path stores the step, yields its ``ErrorEvent``, counts
the error and maybe finishes the run.

Stop rules: with latent state, stop when the completion estimate says yes — but not on
the first screen of a run, before anything was done (small models claim a fresh task is
already done; the planner then proposes a first step, and the estimate is asked again on
the next screen); without latent state, stop on a predicted "done"; always stop at the
step budget, or when the agent's own approved action changed nothing on the screen
``max_repeats`` times in a row (an edit or a demonstration never counts).  With a
``judge`` (the task's oracle on the virtual phone) the phone decides: a run ends
"succeeded" as soon as the goal is met, and a "done" the phone does not confirm is not a
success; with ``confirm_done`` and no judge the user is asked "Is the task done?".

Decisions shape what comes next (``agent.feedback``): a rejected action is remembered for
its screen (a clock tick does not make a new screen), left out of that screen's reply
forms, re-planned if proposed anyway, and its reason goes into the next prompt; an edit or
a demonstration is executed as the step and told to the planner as a correction; after
two rejections on one screen the question offers other candidates to pick.  ``Working``
events say which stage (and which model call of the step) is under way.

A planner that may recall the step (``Recalls``: the decision memory) is asked first, and
a step it recalls is proposed with no latent estimate, model call or assessment
(``agent.run_propose``).  A proposal whose evidence says ``ASK_USER`` waits for the user
whatever the autonomy.  Sensitive actions wait for approval unless allowed for the
task.  Every step is handed to the ``StepSink`` the moment it completes and then arrives
as one step event carrying the stored ``Step`` (with where its time went).  With a ``record``
(``agent.transient``) each action is announced to it, and what flashed on the screen after
an action (a toast, a snackbar) is kept in that step (``Amended`` when found after the
step was stored) and named in the next screen's fenced description.  A device
failure ends the run with a fatal error event and the episode is kept.  On-screen text
only ever reaches models inside a fenced data block.  This module never imports the
application layer, Qt or a concrete device.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Generator, Iterator
from dataclasses import replace

from agent.commands import action_key
from agent.device import Device, DeviceError, DeviceGone
from agent.effects import screen_identity, screen_signature, unchanged_note
from agent.events import (
    Aborted,
    Amended,
    Autonomy,
    AwaitingDecision,
    ErrorEvent,
    Event,
    Executed,
    Finished,
    Observed,
    Parsed,
    Rejected,
    RunSettings,
    StepSink,
    Working,
)
from agent.execute import NotExecutable, execute
from agent.feedback import NOT_DONE_NOTE, OFFER_AFTER, choice_of, correction_note
from agent.flash_steps import with_steps
from agent.grounding.assessment import Assessor
from agent.grounding.base import ElementGrounder, GroundContext, Grounder, GroundingError, needs_grounding
from agent.latent import ChainedEstimator, LatentEstimator
from agent.llm.base import CancelToken
from agent.planners.base import ASK_USER, Planner, Turn
from agent.run_propose import ProposingRun
from agent.run_step import (
    Judge,
    LookAgain,
    Offer,
    Phase,
    RunGenerator,
    ScreenParserLike,
    StepFailed,
    StepWork,
    await_decision,
    error_proposal,
    screen_png,
    to_sink,
)
from agent.screen_text import description, fenced
from agent.transient import RunRecord
from agent.types import (
    Action,
    ActionType,
    Decision,
    DecisionKind,
    Episode,
    EpisodeStatus,
    Proposal,
    Step,
    StepOutcome,
)

log = logging.getLogger(__name__)

#: The note of a run the phone itself confirmed.
CHECKED_ON_PHONE = "done — checked on the phone"


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
    judge: Judge | None = None,
    record: RunRecord | None = None,
    look_again: LookAgain | None = None,
) -> RunGenerator:
    """Drive one episode; see the module docstring.  Returns the final ``Episode``.

    ``judge(final_action)`` is the task's oracle where there is one (the virtual phone):
    True when the goal is met on the phone now, False when not, None when it cannot say.
    ``record`` is the record of the run (``agent.transient``): it is told when each action
    goes out, and what it saw flash on the screen goes into the steps and the next screen's
    description.
    ``look_again`` reads the screen again, closer, when the parse shows none of the goal's
    words (pixel parses); what it found is in the parse the planner gets and in the step's evidence."""
    if not goal.strip():
        raise ValueError("the goal is empty: say what the agent should do")
    if planner.uses_latent and estimator is None:
        client = getattr(planner, "client", None)
        if client is None:
            raise ValueError(f"planner {planner.name!r} uses latent state: pass an estimator")
        estimator = ChainedEstimator(client)
    run = _Run(goal, device, parser, planner, store, settings or RunSettings(), estimator,
               grounder or ElementGrounder(), assessor, cancel, judge, record, look_again)
    return (yield from run.loop())


class _Run(ProposingRun):
    """A run's loop (``loop`` is the generator behind ``run_episode``): observe, propose
    (``ProposingRun``), decide and execute, and the one failure path."""

    # ---- the loop ------------------------------------------------------------------------
    def loop(self) -> RunGenerator:
        to_sink(self.store, "begin_episode", self.episode)
        while True:
            end = self._end_reason()
            if end is not None:
                yield (yield from self._finish_asking(*end))
                return self.episode
            work = StepWork(self.index)
            self.index += 1
            try:
                finished = yield from self._step(work)
            except StepFailed as exc:
                finished = yield from self._failed(work, exc)
            if finished is not None:
                yield finished
                return self.episode

    def _end_reason(self) -> tuple[EpisodeStatus, str] | None:
        if self.cancel is not None and self.cancel.cancelled:
            return EpisodeStatus.ABORTED, "cancelled"
        if self.index >= self.settings.max_steps:
            return EpisodeStatus.FAILED, f"step budget of {self.settings.max_steps} reached"
        if self.memory.errors_in_row >= self.settings.max_consecutive_errors:
            return EpisodeStatus.ERROR, f"{self.memory.errors_in_row} failed steps in a row"
        return None

    def _step(self, work: StepWork) -> Phase:
        """One step through the four phases; returns a ``Finished`` when the run ends."""
        yield from self._observe(work)
        stuck = self._stuck()
        if stuck:
            return (yield from self._finish_asking(EpisodeStatus.FAILED, stuck))
        offer = yield from self._propose(work)
        decision = yield from self._decide(work, offer)
        while decision.kind is DecisionKind.ESCALATE:  # "Ask the bigger model": the same step again
            offer = yield from self._propose(work, escalate="you asked for the bigger model")
            decision = yield from self._decide(work, offer)
        return (yield from self._execute(work, decision))

    # ---- observe ---------------------------------------------------------------------------
    def _observe(self, work: StepWork) -> Phase:
        t0 = time.perf_counter()
        try:
            screen = self.device.screenshot(with_hierarchy=True)
        except DeviceGone as exc:
            raise StepFailed(f"device failure: {exc}", fatal=True) from None
        except DeviceError as exc:
            raise StepFailed(f"screenshot failed: {exc}") from None
        device_times = [(name, ms) for name, ms in screen.timings_ms if name in ("frame", "hierarchy")]
        if device_times:
            work.timings.extend(device_times)
        else:
            work.time("frame", t0)
        work.screen, work.foreground = screen, screen.foreground_package
        yield Observed(work.index, screen)
        yield Working(work.index, "reading the screen", started=time.time())
        t0 = time.perf_counter()
        try:
            parse = self.parser.parse(screen)
        except Exception as exc:  # a parser bug must not kill the run
            log.exception("screen parse failed")
            raise StepFailed(f"screen parse failed: {exc}") from None
        if self.look_again is not None and self.look_again.needed(self.goal, parse):
            yield Working(work.index, "reading the screen again, closer", started=time.time())
            try:
                parse, work.looked_again = self.look_again(self.goal, screen, parse)
            except Exception:  # the second look is an extra: the first parse stands
                log.exception("the second look at the screen failed")
        work.time("parse", t0)
        work.parse = parse
        yield Parsed(work.index, parse)
        pulled = self.flashes.pull(self.episode, self.last_action_step, parse)
        if self.flashes.record is not None:
            work.add("record", pulled.ms)
        for step in self._amend(pulled.amended):
            yield Amended(step.index, step)
        work.screen_text = fenced(description(parse, app=work.foreground) + ("\n" + pulled.note if pulled.note else ""))
        work.images = (screen_png(screen),) if self.settings.send_screenshot else ()
        mem = self.memory
        work.screen_id = screen_key = screen_identity(parse, work.foreground)
        if screen_key != mem.last_screen_key:
            mem.notes.clear()
            mem.failed.clear()
            if self.settings.feedback:
                mem.notes.extend(mem.feedback.notes(screen_key))
        mem.last_screen_key = screen_key
        if self.settings.feedback:
            mem.notes.extend(n for n in mem.corrections if n not in mem.notes)
        mem.corrections.clear()
        if mem.history and mem.prev_parse is not None:  # agent.effects: did the last action do anything?
            last = mem.history[-1]
            note = unchanged_note(last.action, mem.prev_parse, parse)
            if note and note not in mem.notes:
                mem.notes.append(note)
            same = screen_signature(mem.prev_parse) == screen_signature(parse)
            if last.source == "agent" and same and not last.action.is_terminal:
                mem.unchanged.append(action_key(last.action))
            else:
                mem.unchanged.clear()

    def _stuck(self) -> str:
        """Why the run is stuck: the agent's own action changed nothing ``max_repeats`` times."""
        keys = self.memory.unchanged[-self.settings.max_repeats:]
        if len(keys) == self.settings.max_repeats and len(set(keys)) == 1:
            return (f"the same action was repeated {self.settings.max_repeats} times and changed nothing: "
                    f"{self.memory.history[-1].action.describe()}")
        return ""

    # ---- decide ----------------------------------------------------------------------------
    def _decide(self, work: StepWork, offer: Offer) -> Phase:
        reasons = self._ask_reasons(offer)
        done_claim = offer.proposal.action.type is ActionType.COMPLETE
        confirm = done_claim and self.settings.confirm_done and self.judge is None
        if confirm:
            reasons = ["the agent says the task is done: is the task done?"]
        if not reasons:
            work.decision = Decision(DecisionKind.APPROVE, decided_by="auto")
            return work.decision
        alternatives: tuple[Action, ...] = ()
        feedback = self.memory.feedback
        if (self.settings.feedback and work.parse is not None and not offer.proposal.action.is_terminal
                and feedback.count(work.screen_id) >= OFFER_AFTER):
            alternatives = feedback.alternatives(work.screen_id, work.parse, self.goal, offer.proposal.action)
        t0 = time.perf_counter()
        work.decision = yield from await_decision(AwaitingDecision(work.index, offer.proposal, "; ".join(reasons),
                                                           alternatives=alternatives, confirm_done=confirm))
        work.time("decide", t0)
        return work.decision

    def _ask_reasons(self, offer: Offer) -> list[str]:
        mode = self.settings.mode
        reasons = []
        if mode is Autonomy.APPROVE:
            reasons.append("every step needs approval")
        if offer.sensitive and not self.settings.allow_sensitive:
            reasons.append(f"sensitive action ({offer.sensitive})")
        if offer.blocked:
            reasons.append("the agent is stuck on this screen: please demonstrate the next step")
        reasons.extend(e[len(ASK_USER):] for e in offer.proposal.evidence if e.startswith(ASK_USER))
        if mode is Autonomy.CONFIDENT:
            if offer.ask_reason:
                reasons.append(offer.ask_reason)
            elif offer.confidence is None and self.assessor is None:
                reasons.append("no confidence estimate for this step")
            elif offer.confidence is not None and offer.confidence < self.settings.confidence_threshold:
                reasons.append(f"low confidence ({offer.confidence:.2f})")
        return reasons

    # ---- execute ---------------------------------------------------------------------------
    def _execute(self, work: StepWork, decision: Decision) -> Phase:
        """Carry out the decision; returns a ``Finished`` when the run ends here."""
        assert work.proposal is not None
        if decision.kind is DecisionKind.ABORT:
            yield Aborted(work.index, self._record(work, work.stored(StepOutcome.ABORTED)))
            return self._finish(EpisodeStatus.ABORTED, decision.feedback or "aborted by the user")
        if decision.kind is DecisionKind.REJECT:
            mem = self.memory
            if work.proposal.action.type is ActionType.COMPLETE:
                note = NOT_DONE_NOTE + (f": {decision.feedback}" if decision.feedback else ".")
            else:
                note = f"The user rejected \"{work.proposal.action.describe()}\" and said: {decision.feedback}"
                mem.feedback.reject(work.screen_id, work.proposal.action, work.parse, decision.feedback)
            if self.settings.feedback:
                mem.notes.append(note)
            mem.failed.append(work.proposal.action)
            mem.errors_in_row = 0
            yield Rejected(work.index, self._record(work, work.stored(StepOutcome.REJECTED)))
            return None
        action = work.proposal.action if decision.kind is DecisionKind.APPROVE else decision.action
        assert action is not None
        if needs_grounding(action):
            if work.parse is None:  # a step the user performs on a screen that could not be parsed
                raise StepFailed(f"cannot ground \"{action.describe()}\": the screen could not be read")
            try:
                action = self.grounder.ground(action, GroundContext(self.goal, work.parse, (), self.cancel)).action
            except GroundingError as exc:
                raise StepFailed(f"cannot ground the chosen action: {exc.message}", exc.calls) from None
        if action.is_terminal:
            return (yield from self._finish_with(work, action))
        sent = time.time()
        record_ms = self.flashes.action_begins(work.index, sent, action)
        t0 = time.perf_counter()
        try:
            execute(action, self.device, wait_ms=self.settings.settle_ms, max_wait_s=self.settings.max_wait_s)
        except NotExecutable as exc:
            raise StepFailed(str(exc)) from None
        except DeviceGone as exc:
            raise StepFailed(f"device failure: {exc}", fatal=True) from None
        except DeviceError as exc:  # the phone refused this action (unknown app, bad input)
            raise StepFailed(f"\"{action.describe()}\" failed on the phone: {exc.message}",
                              refused=action) from None
        finally:  # sent or failed, the action is over: the record must not wait for it to end
            work.time("execute", t0)
            record_ms += self.flashes.action_sent(work.index, sent, time.time(), action)
        if self.flashes.record is not None:
            work.add("record", record_ms)
        if action.type is not ActionType.WAIT:  # what flashes next follows this step's action
            self.last_action_step = work.index
        self._remember(work, action, decision)
        rec = self._record(work, work.stored(StepOutcome.EXECUTED, executed=action))
        yield Executed(work.index, action, rec)
        if self._verdict(None):
            return self._finish(EpisodeStatus.SUCCEEDED, CHECKED_ON_PHONE)
        return None

    def _verdict(self, final: Action | None) -> bool | None:
        """The task's oracle, if there is one (a failing oracle says nothing)."""
        if self.judge is None:
            return None
        try:
            return self.judge(final)
        except Exception:  # the oracle is an extra: the run's own verdict stands
            log.warning("the task's oracle failed", exc_info=True)
            return None

    def _finish_with(self, work: StepWork, action: Action) -> Phase:
        """A terminal action (complete / impossible) ends the run with a stored step."""
        status = EpisodeStatus.SUCCEEDED if action.type is ActionType.COMPLETE else EpisodeStatus.IMPOSSIBLE
        rec = self._record(work, work.stored(StepOutcome.FINISHED, executed=action))
        yield Executed(work.index, action, rec)
        verdict = self._verdict(action)
        if status is EpisodeStatus.IMPOSSIBLE:
            if verdict is True:
                return self._finish(status, "the planner judged the task impossible — checked: it is")
            return self._finish(status, "the planner judged the task impossible")
        if verdict is False:
            return self._finish(EpisodeStatus.FAILED, "the agent said the task is done, but the phone shows it is not")
        if verdict is True:
            return self._finish(status, CHECKED_ON_PHONE)
        if work.decision is not None and work.decision.kind is DecisionKind.APPROVE and self.settings.confirm_done \
                and work.decision.decided_by != "auto":
            return self._finish(status, "done — confirmed by the user")
        why = "completion estimate says the goal is met" if self.planner.uses_latent else "the planner predicted done"
        return self._finish(status, why)

    def _finish_asking(self, status: EpisodeStatus, note: str) -> Phase:
        """End a run that stopped without a verdict; the phone's oracle, or (``confirm_done``)
        the user, may still say the goal is met: then it ends "succeeded"."""
        verdict = self._verdict(None)
        if verdict is True:
            return self._finish(EpisodeStatus.SUCCEEDED, CHECKED_ON_PHONE)
        if verdict is None and self.settings.confirm_done and status is EpisodeStatus.FAILED:
            question = Proposal(Action.simple(ActionType.COMPLETE), rationale=f"The run stopped: {note}.",
                                planner=self.planner.name)
            answer = yield from await_decision(AwaitingDecision(self.index, question, f"the run stopped ({note}): "
                                                        "is the task done?", confirm_done=True))
            if answer.kind is DecisionKind.APPROVE:
                return self._finish(EpisodeStatus.SUCCEEDED, "done — confirmed by the user")
        return self._finish(status, note)

    def _remember(self, work: StepWork, action: Action, decision: Decision) -> None:
        """After an executed action: the planners' history (the planner decides what of it to use)."""
        mem = self.memory
        mem.errors_in_row = 0
        by_agent = decision.kind is DecisionKind.APPROVE
        source = {DecisionKind.APPROVE: "agent", DecisionKind.EDIT: "edit",
                  DecisionKind.DEMONSTRATE: "demonstration"}[decision.kind]
        command = action.describe() if by_agent else f"{action.describe()} (done by the user)"
        thought = work.proposal.rationale if work.proposal is not None else ""
        proposed = work.proposal.action if work.proposal is not None else None
        if not by_agent and (proposed is None or choice_of(proposed, work.parse) != choice_of(action, work.parse)):
            mem.corrections.append(correction_note(decision.kind, proposed, action))
            if proposed is not None and not proposed.is_terminal and proposed.type is not ActionType.WAIT \
                    and work.screen_id:
                mem.feedback.reject(work.screen_id, proposed, work.parse, f"the user did \"{action.describe()}\" instead")
        mem.history.append(Turn(command, action, work.screen_text, thought, source=source))
        mem.prev_screen_text = work.screen_text
        mem.prev_parse = work.parse

    # ---- the one failure path ----------------------------------------------------------------
    def _failed(self, work: StepWork, exc: StepFailed) -> Phase:
        """Store the failed step, report it, count it; returns a ``Finished`` when the run ends.
        A step whose model call was interrupted by a pause is not a failure: it is dropped and
        starts again (same index) once the run resumes."""
        if self.cancel is not None and self.cancel.interrupted and not self.cancel.cancelled:
            self.cancel.resume()
            self.index = work.index
            yield Working(work.index, "paused: this step starts again when you resume", started=time.time())
            return None
        mem = self.memory
        mem.errors_in_row += 1
        if exc.refused is not None:
            mem.notes.append(exc.message)
            mem.failed.append(exc.refused)
        if work.proposal is None:  # failed before proposing: keep every LLM call made so far
            work.calls.extend(exc.calls)
            calls = tuple(work.calls)
            placeholder = error_proposal(self.planner.name, work.latent, calls)
        else:
            calls, placeholder = exc.calls, None
        rec = self._record(work, work.stored(StepOutcome.ERROR, error=exc.message, proposal=placeholder))
        yield ErrorEvent(work.index, exc.message, fatal=exc.fatal, calls=tuple(calls), record=rec)
        if exc.fatal:
            return self._finish(EpisodeStatus.ERROR, exc.message)
        if self.cancel is not None and self.cancel.cancelled:
            return self._finish(EpisodeStatus.ABORTED, "cancelled")
        if self.settings.ask_on_error and work.screen is not None and work.decision is None:
            return (yield from self._user_performs(work, exc.message))
        if mem.errors_in_row >= self.settings.max_consecutive_errors:
            return self._finish(EpisodeStatus.ERROR, f"{mem.errors_in_row} failed steps in a row; "
                                                     f"last: {exc.message}")
        return None

    def _user_performs(self, failed: StepWork, message: str) -> Phase:
        """``ask_on_error``: the user may edit or demonstrate the failed step as a new step."""
        placeholder = Proposal(Action.simple(ActionType.WAIT), rationale=f"(the agent failed: {message})",
                               planner=self.planner.name)
        work = replace(failed, index=self.index, started=time.time(), calls=[], proposal=placeholder,
                       decision=None, timings=[])
        decision = yield from await_decision(AwaitingDecision(
            work.index, placeholder, f"the agent failed: {message}; edit or demonstrate this step, "
                                     "reject to let the agent retry, or stop", failed=True))
        if decision.kind in (DecisionKind.APPROVE, DecisionKind.REJECT):
            return None  # nothing performed: the agent tries again
        self.index += 1
        work.decision = decision
        try:
            return (yield from self._execute(work, decision))
        except StepFailed as exc:  # the user's action failed too: counted, not asked again
            return (yield from self._failed(work, exc))

    # ---- records -------------------------------------------------------------------------------
    def _record(self, work: StepWork, step: Step) -> Step:
        stored = to_sink(self.store, "append_step", self.episode.id, step, work.screen)
        if isinstance(stored, Step):
            step = stored
        self.episode = self.episode.with_step(step)
        return step

    def _amend(self, amended: tuple[Step, ...]) -> tuple[Step, ...]:
        """Stored steps that gained what flashed after them: stored again, kept in the episode."""
        for step in amended:
            if self.store is not None and hasattr(self.store, "amend_step"):
                to_sink(self.store, "amend_step", self.episode.id, step)
        self.episode = with_steps(self.episode, amended)
        return amended

    def _finish(self, status: EpisodeStatus, note: str) -> Finished:
        if self.last_action_step is not None:  # what flashed after the last action, before the record stops
            self.flashes.settle(self.settings.record_settle_s)
            self._amend(self.flashes.pull(self.episode, None, None).amended)
        self.episode = replace(self.episode, status=status, note=note, finished_at=time.time())
        to_sink(self.store, "finish_episode", self.episode.id, status, note)
        return Finished(status, note, self.episode)


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
