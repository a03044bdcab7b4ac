"""A planner for the knowledge tests that remembers every context it was shown and always
proposes Back: what a wrapping planner (guided, focused, filled) passed on is read from it."""

from __future__ import annotations

from agent.planners.base import PlanContext
from agent.types import Action, ActionType, Proposal


class Recorder:
    name = "recorder"
    uses_latent = False

    def __init__(self) -> None:
        self.seen: list[PlanContext] = []

    def propose(self, ctx: PlanContext) -> Proposal:
        self.seen.append(ctx)
        return Proposal(Action.simple(ActionType.BACK), planner=self.name)
