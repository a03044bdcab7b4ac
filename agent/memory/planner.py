"""``RememberingPlanner``: a planner wrapper that proposes the user's remembered step on a
screen where there is one, with no model call.

It sits outside every other wrapper (the app maps' and the screen evidence's
``GuidedPlanner`` included): what the user decided is trusted above what the screen
suggests.  The runner asks ``recall(ctx)`` before it estimates anything (``Recalls`` in
``agent.planners.base``): a remembered step found again on this screen comes back as the
proposal, and the step makes no model call at all.  When the remembered step is only a
hint (the app's version changed since), or the user already turned it down on this
screen in this run, ``propose`` hands the step to the wrapped planner with the hint in
its notes and the remembered element first in the parse (so a structured reply form
offers it first).

Keeps no state of its own: the run's ``MemorySession`` does.  No I/O.
"""

from __future__ import annotations

from dataclasses import replace

from agent.memory.run import MemorySession
from agent.planners.base import PlanContext, Planner, Wrapping
from agent.types import Proposal


class RememberingPlanner(Wrapping):
    """``inner`` with the decision memory in front of it (see the module docstring)."""

    def __init__(self, inner: Planner, session: MemorySession) -> None:
        super().__init__(inner)
        self.session = session

    def recall(self, ctx: PlanContext) -> Proposal | None:
        """The remembered step for this screen as the proposal, or None (plan as usual)."""
        found = self.session.recall(ctx.parse)
        if found is None or found.demoted:
            return None
        return self._counted(self.session.proposal(ctx.step_index, found))

    def _counted(self, proposal: Proposal) -> Proposal:
        """``proposal`` carrying the memory's own model calls, if it made any (the run counts them)."""
        calls = self.session.take_calls()
        return replace(proposal, llm_calls=(*calls, *proposal.llm_calls)) if calls else proposal

    def propose(self, ctx: PlanContext) -> Proposal:
        found = self.session.recall(ctx.parse)
        if found is None:
            return self._counted(self.inner.propose(ctx))
        hint = self.session.hint(found) if found.demoted else (
            f"On this screen the user chose \"{found.action.describe()}\" for this task before; "
            "it was turned down here just now, so choose again.")
        parse = ctx.parse
        target = found.action.target.element_id if found.action.target is not None else None
        if target and found.demoted:
            first = tuple(e for e in parse.elements if e.id == target)
            parse = replace(parse, elements=first + tuple(e for e in parse.elements if e.id != target))
        proposal = self.inner.propose(replace(ctx, parse=parse, notes=(*ctx.notes, hint)))
        return self._counted(replace(proposal, evidence=(*proposal.evidence, f"memory hint: {hint}")))
