"""What a run or a replay cost: model calls, the user's interventions, wall time, and
where each step's proposal came from.

``origin(step)`` names the source of a step's proposal: ``memory`` (the user's
remembered decision, ``agent.memory``), ``recording`` (a macro step found again with no
model call), ``heal`` (a macro step the model found again, ``agent.macros.heal``),
``screen`` / ``map`` (taken on the screen's evidence or the app map with no model call),
``model`` (the model proposed it), or ``none`` (no proposal: a step that failed before
one).  ``run_cost(episode)`` adds a run up.  Pure functions over stored steps; no I/O.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from agent.memory.types import HEALED, MEMORY
from agent.types import DecisionKind, Episode, Step

ORIGINS = ("memory", "recording", "heal", "model", "screen", "map", "none")
__all__ = ["HEALED", "ORIGINS", "RunCost", "origin", "run_cost"]


def origin(step: Step) -> str:
    """Where the step's proposal came from (one of ``ORIGINS``)."""
    p = step.proposal
    if p is None:
        return "none"
    if p.planner == MEMORY:
        return "memory"
    if p.planner == "macro":
        return "heal" if any(e.startswith(HEALED) for e in p.evidence) else "recording"
    if p.llm_calls:
        return "model"
    if p.planner.endswith("+screen"):
        return "screen"
    if p.planner.endswith("+map"):
        return "map"
    return "model" if p.planner else "none"


@dataclass(frozen=True, slots=True)
class RunCost:
    """One run's cost."""

    model_calls: int
    interventions: int  # rejections + edits + demonstrations
    wall_s: float
    steps: int
    origins: tuple[tuple[str, int], ...] = ()  # (origin, steps), in ``ORIGINS`` order

    def describe(self) -> str:
        """"2 model calls · 1 intervention · 41 s · memory 3, model 2"."""
        calls = f"{self.model_calls} model call{'s' if self.model_calls != 1 else ''}"
        asks = f"{self.interventions} intervention{'s' if self.interventions != 1 else ''}"
        where = ", ".join(f"{o} {n}" for o, n in self.origins)
        return " · ".join(x for x in (calls, asks, f"{self.wall_s:.0f} s", where) if x)


def run_cost(episode: Episode) -> RunCost:
    """Add up ``episode``: every model call any step made (failed steps' included), every
    step the user rejected, edited or demonstrated, and the time from start to end."""
    calls = sum(len(s.proposal.llm_calls) for s in episode.steps if s.proposal is not None)
    asks = sum(1 for s in episode.steps if s.decision is not None and s.decision.kind in (
        DecisionKind.REJECT, DecisionKind.EDIT, DecisionKind.DEMONSTRATE))
    end = episode.finished_at or max((s.finished_at or s.started_at for s in episode.steps), default=episode.started_at)
    seen = Counter(origin(s) for s in episode.steps if s.proposal is not None)
    return RunCost(calls, asks, max(0.0, end - episode.started_at), len(episode.steps),
                   tuple((o, seen[o]) for o in ORIGINS if seen[o]))
