"""The propose phase of ``agent.runner``'s loop, and the collaborators and state of a run
it needs: the latent state (when the planner uses it), the plan, its grounding on the
parsed screen (a grounding miss or an action the user rejected on this screen goes back to
the planner), then the assessment; a planner that recalls the step (``Recalls``, the
decision memory) is asked first, and its step skips all of that.  ``ProposingRun`` is the
base of the runner's ``_Run``: it neither observes the phone nor executes anything.
"""

from __future__ import annotations

import logging
import time
from dataclasses import replace

from agent.device import Device
from agent.events import Estimated, Proposed, RunSettings, StepSink, Working
from agent.feedback import Feedback
from agent.flash_steps import FlashSteps
from agent.grounding.assessment import Assessor
from agent.grounding.base import GroundContext, Grounder, GroundingError
from agent.latent import LatentEstimator, LatentInput
from agent.llm.base import CancelToken
from agent.planners.base import EscalationRefused, PlanContext, PlanError, Planner, Recalls
from agent.run_step import (
    Judge,
    LookAgain,
    Offer,
    Phase,
    RunMemory,
    ScreenParserLike,
    StepFailed,
    StepWork,
    call_model,
    calls_per_step,
)
from agent.safety import sensitivity
from agent.transient import RunRecord
from agent.types import Action, ActionType, Episode, Proposal

log = logging.getLogger(__name__)

#: Evidence on a first step whose completion estimate said "done" before anything was done.
_EARLY_DONE = "completion estimate said the task is already done before any step; not taken on the first screen"


class ProposingRun:
    """One episode's collaborators and state, and its propose phase."""

    def __init__(self, goal: str, device: Device, parser: ScreenParserLike, planner: Planner,
                 store: StepSink | None, settings: RunSettings, estimator: LatentEstimator | None,
                 grounder: Grounder, assessor: Assessor | None, cancel: CancelToken | None,
                 judge: Judge | None = None, record: RunRecord | None = None,
                 look_again: LookAgain | None = None) -> None:
        self.goal, self.device, self.parser, self.planner = goal, device, parser, planner
        self.look_again = look_again
        self.flashes = FlashSteps(record)  # the record of the run (agent.transient), or nothing
        self.last_action_step: int | None = None  # the step whose action touched the phone last
        self.store, self.settings, self.estimator = store, settings, estimator
        self.grounder, self.assessor, self.cancel, self.judge = grounder, assessor, cancel, judge
        self.calls_expected = calls_per_step(planner, estimator, assessor)
        self.memory = RunMemory()
        self.index = 0
        try:
            serial = device.info.serial
        except Exception:  # a dead device is reported at the first screenshot
            serial = "?"
        self.episode = Episode(goal=goal, planner=planner.name, model=settings.model, device=serial,
                               autonomy=settings.mode)

    # ---- propose ---------------------------------------------------------------------------
    def _propose(self, work: StepWork, escalate: str = "") -> Phase:
        """A step the planner recalls (no model call), else latent state (if the planner
        uses it), plan and ground, then the assessment.  ``escalate``: why the bigger model
        takes this step (the latent state already estimated stays; memory is not asked)."""
        recalled = self._recall(work) if not escalate else None
        if recalled is not None:
            offer = Offer(recalled, recalled.confidence)
        else:
            if self.planner.uses_latent and self.estimator is not None and not escalate:
                proposal = yield from self._plan_with_latent(work, self.estimator)
            else:
                yield self._working(work, "asking the bigger model" if escalate else "planning the next action")
                proposal = self._plan_and_ground(work, escalate)
            if self.assessor is not None and not proposal.action.is_terminal:
                yield self._working(work, "checking the proposal")
            offer = self._assess(work, proposal)
        sensitive = sensitivity(offer.proposal.action, work.parse, work.foreground, risk=offer.proposal.risk)
        proposal = replace(offer.proposal, sensitive=sensitive is not None, confidence=offer.confidence,
                           llm_calls=tuple(work.calls),
                           latent=work.latent if work.latent is not None else offer.proposal.latent)
        work.proposal = proposal
        yield Proposed(work.index, proposal)
        return replace(offer, proposal=proposal, sensitive=sensitive)

    def _recall(self, work: StepWork) -> Proposal | None:
        """The planner's remembered step for this screen (``Recalls``: the decision memory),
        unless the user turned it down here in this run; None: plan as usual."""
        if not isinstance(self.planner, Recalls) or work.parse is None:
            return None
        mem = self.memory
        ctx = PlanContext(goal=self.goal, parse=work.parse, screen=work.screen_text, history=tuple(mem.history),
                          notes=tuple(mem.notes), step_index=work.index, cancel=self.cancel)
        try:
            proposal = self.planner.recall(ctx)
        except Exception:  # a memory that fails is no memory: the planner plans
            log.warning("recalling a step failed", exc_info=True)
            return None
        if proposal is not None:
            work.calls.extend(proposal.llm_calls)  # a memory may ask the model (kept with the step)
        if proposal is None or (self.settings.feedback and mem.feedback.matching(
                work.screen_id, proposal.action, work.parse) is not None):
            return None
        if self.planner.uses_latent and mem.history:  # keeps the estimates' history in step
            mem.performed.append(mem.history[-1].command)
        return proposal

    def _plan_with_latent(self, work: StepWork, estimator: LatentEstimator) -> Phase:
        mem = self.memory
        linput = LatentInput(
            goal=self.goal, screen=work.screen_text, previous_screen=mem.prev_screen_text,
            commanded=mem.history[-1].command if mem.history else "",
            commanded_history=tuple(t.command for t in mem.history), performed_history=tuple(mem.performed))
        yield self._working(work, "estimating progress")
        est = call_model(estimator.estimate, linput, self.cancel)
        work.calls.extend(est.calls)
        work.latent = latent = est.latent
        if mem.history:
            mem.performed.append(latent.performed_action or mem.history[-1].command)
            linput = replace(linput, performed_history=tuple(mem.performed[:-1]))
        yield Estimated(work.index, latent, est.calls)
        first = not mem.history  # nothing done yet in this run
        if est.complete and not first:
            return Proposal(Action.simple(ActionType.COMPLETE), rationale=latent.completion_reason,
                            latent=latent, planner=self.planner.name)
        yield self._working(work, "planning the next action")
        proposal = self._plan_and_ground(work)
        if getattr(estimator, "calls_per_step", 2) > 1:
            yield self._working(work, "checking whether the task is done")
        comp = call_model(estimator.completion, linput, latent, proposal.action.describe(), self.cancel)
        work.calls.extend(comp.calls)
        work.latent = comp.latent
        if comp.complete and not first:
            proposal = replace(proposal, action=Action.simple(ActionType.COMPLETE),
                               rationale=comp.latent.completion_reason)
        elif est.complete or comp.complete:
            proposal = replace(proposal, evidence=(*proposal.evidence, _EARLY_DONE))
        return replace(proposal, latent=comp.latent)

    def _plan_and_ground(self, work: StepWork, escalate: str = "", own: Proposal | None = None) -> Proposal:
        """Propose and ground, sending grounding misses back to the planner (``max_replans`` times).
        ``own``: the run's model's grounded step that ``escalate`` is about, kept when the
        bigger model may not take the step."""
        assert work.parse is not None
        notes = list(self.memory.notes)
        evidence: list[str] = list(work.looked_again)
        history = tuple(self.memory.history)
        feedback = self.memory.feedback if self.settings.feedback else Feedback()
        rejected = feedback.excluded(work.screen_id, work.parse)
        for attempt in range(self.settings.max_replans + 1):
            ctx = PlanContext(goal=self.goal, parse=work.parse, screen=work.screen_text, history=history,
                              latent=work.latent, notes=tuple(notes), examples=self.settings.examples,
                              step_index=work.index, cancel=self.cancel, images=work.images, rejected=rejected,
                              escalate=escalate, rejections=feedback.count(work.screen_id), replan=attempt,
                              keeps_own=own is not None)
            try:
                proposal = self.planner.propose(ctx)
            except EscalationRefused as exc:
                if own is None:
                    raise StepFailed(exc.message, exc.calls) from None
                return replace(own, evidence=(*own.evidence, exc.message))
            except PlanError as exc:
                raise StepFailed(exc.message, exc.calls) from None
            work.calls.extend(proposal.llm_calls)
            evidence.extend(proposal.evidence)
            try:
                g = self.grounder.ground(proposal.action, GroundContext(
                    self.goal, work.parse, tuple(t.command for t in history), self.cancel))
            except GroundingError as exc:
                work.calls.extend(exc.calls)
                if exc.blocked:
                    return replace(proposal, evidence=(*evidence, f"blocked: {exc.message}"))
                evidence.append(f"re-plan {attempt + 1}: {exc.message}")
                notes.append(f"\"{proposal.action.describe()}\" is not possible: {exc.message}. "
                             f"Elements available on this screen:\n{exc.available}")
                continue
            work.calls.extend(g.calls)
            again = feedback.matching(work.screen_id, g.action, work.parse)
            if again is not None:  # the free-text path can name a rejected action: ask again
                evidence.append(f"re-plan {attempt + 1}: \"{again.shown}\" was rejected on this screen")
                notes.append(f"\"{again.shown}\" was rejected by the user on this screen: propose something else.")
                continue
            grounded = replace(proposal, action=g.action, evidence=(*evidence, *g.evidence))
            unsure = "" if escalate else _unsure(self.planner, grounded)
            if unsure:  # the run's model is unsure of its grounded step: the bigger model takes it
                return self._plan_and_ground(work, unsure, own=grounded)
            return grounded
        raise StepFailed(f"no new groundable action after {self.settings.max_replans} re-plans ({evidence[-1]})")

    def _assess(self, work: StepWork, proposal: Proposal) -> Offer:
        blocked = any(e.startswith("blocked") for e in proposal.evidence)
        if self.assessor is None or proposal.action.is_terminal or blocked:
            return Offer(proposal, proposal.confidence, blocked=blocked)
        a = call_model(self.assessor.assess, self.goal, tuple(t.command for t in self.memory.history),
                      proposal.action, work.screen_text, tuple(self.memory.failed), self.cancel)
        work.calls.extend(a.calls)
        proposal = replace(proposal, evidence=(*proposal.evidence, f"assessment: {a.verdict} ({a.reason})"))
        confidence = a.confidence if a.confidence is not None else (1.0 if a.confident else 0.0)
        ask = ""
        if a.verdict == "retract":
            proposal = replace(proposal, action=Action.simple(ActionType.BACK))
        elif a.verdict == "finish":
            proposal = replace(proposal, action=Action.simple(ActionType.COMPLETE))
        elif a.verdict == "change":
            ask = f"the assessment suggests a different action: {a.reason}"
        if not a.confident:
            ask = ask or f"the assessment is not confident: {a.reason}"
        return Offer(proposal, confidence, ask)

    def _working(self, work: StepWork, stage: str) -> Working:
        """A stage that calls the model: which call of the step it is."""
        call = min(len({c.purpose for c in work.calls if not c.purpose.endswith(".reask")}) + 1,
                   max(self.calls_expected, 1))
        return Working(work.index, stage, call, max(self.calls_expected, call), time.time())


def _unsure(planner: Planner, proposal: Proposal) -> str:
    """Why the planner's bigger model should take this grounded step ("" when it has none,
    or the step is sure enough; ``agent.planners.escalate``)."""
    check = getattr(planner, "unsure", None)
    return str(check(proposal)) if callable(check) else ""
