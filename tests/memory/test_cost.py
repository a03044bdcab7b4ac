"""What a run cost, and where each step came from (``agent.cost``)."""

from __future__ import annotations

from agent.cost import origin, run_cost
from agent.memory.types import HEALED, MEMORY
from agent.types import (
    Action,
    ActionType,
    Decision,
    DecisionKind,
    Episode,
    LLMCall,
    Proposal,
    Step,
    StepOutcome,
)

CALL = LLMCall(purpose="plan", model="m", prompt="p", reply="r")


def step(i: int, proposal: Proposal | None, decision: DecisionKind = DecisionKind.APPROVE) -> Step:
    made = Decision(decision, action=Action.tap(2, 2) if decision in (DecisionKind.EDIT, DecisionKind.DEMONSTRATE)
                    else None, feedback="no" if decision is DecisionKind.REJECT else "")
    return Step(i, proposal=proposal, decision=made, started_at=100.0 + i, finished_at=101.0 + i,
                outcome=StepOutcome.REJECTED if decision is DecisionKind.REJECT else StepOutcome.EXECUTED)


def test_each_step_says_where_it_came_from_and_the_run_adds_up():
    tap = Action.tap(1, 1)
    steps = (
        step(0, Proposal(tap, planner=MEMORY)),
        step(1, Proposal(tap, planner="zeroshot-", llm_calls=(CALL, CALL)), DecisionKind.REJECT),
        step(2, Proposal(tap, planner="zeroshot-+screen")),
        step(3, Proposal(tap, planner="macro")),
        step(4, Proposal(tap, planner="macro", evidence=(HEALED + "the model chose X",), llm_calls=(CALL,)),
             DecisionKind.EDIT),
        step(5, Proposal(Action.simple(ActionType.COMPLETE), planner="zeroshot-+map"), DecisionKind.DEMONSTRATE),
        step(6, None),
    )
    assert [origin(s) for s in steps] == ["memory", "model", "screen", "recording", "heal", "map", "none"]
    cost = run_cost(Episode(goal="g", steps=steps, started_at=100.0, finished_at=130.0))
    assert (cost.model_calls, cost.interventions, cost.wall_s, cost.steps) == (3, 3, 30.0, 7)
    assert cost.origins == (("memory", 1), ("recording", 1), ("heal", 1), ("model", 1), ("screen", 1), ("map", 1))
    assert cost.describe() == ("3 model calls · 3 interventions · 30 s · memory 1, recording 1, heal 1, model 1, "
                               "screen 1, map 1")
