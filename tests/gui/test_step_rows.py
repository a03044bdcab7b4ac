"""A row of the Steps tab says who the step that ran came from: the model's proposal, or
the user who showed or edited another step in its place."""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6", reason="the Steps tab needs PySide6")

from agent.types import Action, Decision, DecisionKind, LLMCall, Proposal, Step, StepOutcome
from widgets.timeline import step_summary

CALL = LLMCall(purpose="plan", model="m", prompt="p", reply="r")


def ran(kind: DecisionKind, executed: Action) -> Step:
    proposal = Proposal(Action.tap(1, 1), planner="zeroshot-", llm_calls=(CALL,))
    return Step(1, proposal=proposal, decision=Decision(kind, action=executed if kind is not DecisionKind.APPROVE
                                                         else None), executed=executed, outcome=StepOutcome.EXECUTED)


def test_an_approved_proposal_is_the_models():
    row = step_summary(ran(DecisionKind.APPROVE, Action.tap(1, 1)), "model")
    assert row.endswith("executed · by the model")


def test_a_demonstrated_step_is_the_users_and_names_the_proposal_it_replaced():
    row = step_summary(ran(DecisionKind.DEMONSTRATE, Action.tap(5, 5)), "model")
    assert "[demonstrate]" in row and "shown by you (the proposal was by the model)" in row
    assert "executed · by the model" not in row


def test_an_edited_step_is_the_users_too():
    assert "edited by you" in step_summary(ran(DecisionKind.EDIT, Action.tap(5, 5)), "screen")
