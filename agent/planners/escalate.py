"""``EscalatingPlanner``: one step at a time to a bigger model.

A run has its model (the "small" one) and, when the user configured one, a bigger model.
A step goes to the bigger one when

* the user asked for it on this step ("Ask the bigger model": ``PlanContext.escalate``),
* the user has rejected ``after_rejections`` proposals on this screen already
  (``PlanContext.rejections``), or
* the small model is unsure: its proposal carries a named confidence measure
  (``agent.explain.confidence_of``: the samples' agreement, a model's score, the
  grounding margin, which only the runner's grounding gives: it asks ``unsure`` of the
  grounded step and plans it again with ``PlanContext.escalate`` set) below ``below``, or
  its reply could not be used at all, or this is a
  re-plan of the step (``PlanContext.replan``: its last proposal named nothing on the
  screen, or repeated an action the user rejected here: a second rejection the runner
  gives on the user's behalf).

Before a step goes to the bigger model, the user's consent is asked for it (per task,
remembered per model, ``agent.privacy.consent``); a "no" keeps the small model's
proposal (the runner's grounded step, when the runner sent the step up for being unsure
of it: ``PlanContext.keeps_own``, no second call).  The proposal says which model made it (``Proposal.model``) and why it was
escalated (``Proposal.escalated``); its ``llm_calls`` keep both models' calls.  Latent
state is still estimated by the small model: only the planning call moves.  The bigger
model reaches a remote server through the redacting client like any other (the
composition root wraps it).  Planners keep no per-episode state; neither does this one.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from typing import Any

from agent.explain import confidence_of
from agent.planners.base import EscalationRefused, PlanContext, PlanError, Planner, Wrapping
from agent.privacy.consent import Consent
from agent.privacy.types import ConsentKind, ConsentQuestion
from agent.types import LLMCall, Proposal

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class EscalationPolicy:
    """When a step goes to the bigger model (see the module docstring)."""

    below: float = 0.6
    after_rejections: int = 2
    on_unusable: bool = True

    def __post_init__(self) -> None:
        if not 0.0 <= self.below <= 1.0:
            raise ValueError("the confidence bar for escalation must be in [0, 1]")
        if self.after_rejections < 1:
            raise ValueError("escalation after rejections needs at least 1")


@dataclass(frozen=True, slots=True)
class BiggerModel:
    """The bigger model as the planner knows it: its planner, name and where it runs."""

    planner: Planner
    model: str
    server: str = ""
    remote: bool = False


class EscalatingPlanner(Wrapping):
    """The run's planner (``inner``, on the small model) with a bigger model behind it (see
    the module docstring)."""

    def __init__(self, small: Planner, bigger: BiggerModel, *, small_model: str,
                 policy: EscalationPolicy | None = None, consent: Consent | None = None) -> None:
        super().__init__(small)
        self.bigger = bigger
        self.small_model = small_model
        self.policy = policy or EscalationPolicy()
        self.consent = consent

    def __getattr__(self, name: str) -> Any:
        if name in ("bigger", "small_model", "policy", "consent"):  # not set yet: not the small planner's
            raise AttributeError(name)
        return super().__getattr__(name)

    # ---- when ----------------------------------------------------------------------------
    def _asked(self, ctx: PlanContext) -> str:
        if ctx.escalate:
            return ctx.escalate
        n = max(ctx.rejections, len(ctx.rejected))
        if n >= self.policy.after_rejections:
            return f"you rejected {n} proposals on this screen"
        if ctx.replan and self.policy.on_unusable:
            return f"{self.small_model}'s proposal could not be used (a re-plan of this step)"
        return ""

    def unsure(self, proposal: Proposal) -> str:
        """Why the small model's (grounded) proposal is not sure enough ("" when it is, when
        the bigger model made it, or when no model did: the screen's evidence decided)."""
        if proposal.escalated or not proposal.llm_calls or (proposal.model and proposal.model != self.small_model):
            return ""
        return self._unsure(proposal)

    def _unsure(self, proposal: Proposal) -> str:
        if proposal.action.is_terminal:
            return ""
        shown = confidence_of(proposal)
        if shown is None or shown.value >= self.policy.below:
            return ""
        return f"{self.small_model} was unsure ({shown.measure} {shown.value:.0%})"

    def _permitted(self, ctx: PlanContext, reason: str) -> bool:
        if self.consent is None:
            return True
        b = self.bigger
        return self.consent.permit(ConsentQuestion(ConsentKind.ESCALATE, b.model, b.server, ctx.goal, reason,
                                                   remote=b.remote))

    # ---- the step --------------------------------------------------------------------------
    def propose(self, ctx: PlanContext) -> Proposal:
        reason = self._asked(ctx)
        first: Proposal | None = None
        failed: PlanError | None = None
        calls: tuple[LLMCall, ...] = ()
        if not reason:
            try:
                first = self.inner.propose(ctx)
            except PlanError as exc:
                if not self.policy.on_unusable:
                    raise
                failed, calls = exc, exc.calls
                reason = f"{self.small_model}'s reply could not be used"
            else:
                reason = self._unsure(first)
                if not reason:
                    return replace(first, model=first.model or self.small_model)
                calls = first.llm_calls
        if not self._permitted(ctx, reason):
            log.info("escalation to %s not allowed: %s", self.bigger.model, reason)
            refused = f"not sent to {self.bigger.model}: you did not allow it"
            if failed is not None:
                raise failed
            if first is None and ctx.keeps_own:
                raise EscalationRefused(refused)  # the runner keeps the step it already grounded
            if first is None:
                first = self.inner.propose(ctx)
            return replace(first, model=first.model or self.small_model, evidence=(*first.evidence, refused))
        try:
            big = self.bigger.planner.propose(ctx)
        except PlanError as exc:
            raise PlanError(f"{self.bigger.model} (the bigger model): {exc.message}", (*calls, *exc.calls)) from None
        log.info("step %d escalated to %s: %s", ctx.step_index, self.bigger.model, reason)
        return replace(big, model=self.bigger.model, escalated=reason, llm_calls=(*calls, *big.llm_calls),
                       evidence=(f"escalated to {self.bigger.model}: {reason}", *big.evidence))
