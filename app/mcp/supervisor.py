"""Who decides on an MCP client's acting call: the ``Supervisor`` interface and the
stated policies (``ask``, ``auto``, ``read-only``).

A ``Review`` is one proposal as the approval card shows it (the client, the tool, the
``Proposal`` with its sensitivity, the observation it was made on); the answer is a
``Decision``, exactly as for Tapwise's own agent.  ``PolicySupervisor`` applies a policy
and hands what must be asked to a person (the window's card or the terminal).  A
sensitive action is always asked, whatever the policy; with no one to ask it is refused,
never carried out.  No I/O, no Qt, no MCP.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Protocol

from agent.types import Decision, DecisionKind, Proposal

if TYPE_CHECKING:
    from app.mcp.observation import Observation


class Policy(StrEnum):
    """How acting calls are decided."""

    ASK = "ask"  # every acting call waits for the user
    AUTO = "auto"  # carried out at once; sensitive ones still wait for the user
    READ_ONLY = "read-only"  # observing only: every acting call is refused


POLICY_WORDS = {
    Policy.ASK: "every acting call waits for your approval",
    Policy.AUTO: "acting calls run at once; sensitive ones still wait for your approval",
    Policy.READ_ONLY: "clients may only observe; every acting call is refused",
}


@dataclass(frozen=True, slots=True)
class Review:
    """One acting call waiting for a decision."""

    client: str
    tool: str
    proposal: Proposal
    observation: Observation | None
    reason: str  # why it is asked: the sensitivity sentence, or the policy

    @property
    def sensitive(self) -> bool:
        return self.proposal.sensitive


class Supervisor(Protocol):
    """Answers reviews; may block (a person is deciding).  Called on a worker thread."""

    def review(self, review: Review) -> Decision: ...


class NoOneToAsk:
    """The asker when nobody can answer (no window, no terminal): it refuses, saying why."""

    def review(self, review: Review) -> Decision:
        return Decision(DecisionKind.REJECT, feedback=(
            f"nobody can approve this call here ({review.reason}); start Tapwise's MCP server from the window "
            "or from a terminal to have it approved"), decided_by="policy")


class PolicySupervisor:
    """Applies ``policy``; what needs a person goes to ``ask``."""

    def __init__(self, policy: Policy | str, ask: Supervisor | None = None) -> None:
        self.policy = Policy(policy)
        self.ask: Supervisor = ask if ask is not None else NoOneToAsk()

    def review(self, review: Review) -> Decision:
        if self.policy is Policy.READ_ONLY:
            return Decision(DecisionKind.REJECT, feedback="Tapwise serves this phone read-only: only observing "
                            "tools are allowed", decided_by="policy")
        if self.policy is Policy.AUTO and not review.sensitive:
            return Decision(DecisionKind.APPROVE, decided_by="policy")
        return self.ask.review(review)
