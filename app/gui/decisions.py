"""The one listener on the decision bar: routes Approve / Edit / Reject / Demonstrate /
Abort to whichever loop (an agent run or a macro replay) is waiting for a decision.

A loop ``claim``s the bar when it needs a decision and ``release``s it when answered;
the bar is enabled exactly while someone holds it.  No I/O.
"""

from __future__ import annotations

import logging
from typing import Protocol

from agent.types import Decision
from widgets.proposal import DecisionBar

log = logging.getLogger(__name__)


class DecisionTaker(Protocol):
    """A loop that can be answered from the decision bar."""

    def decide(self, decision: Decision) -> None: ...

    def edit(self) -> None: ...

    def demonstrate(self) -> None: ...


class DecisionRouter:
    def __init__(self, bar: DecisionBar) -> None:
        self.bar = bar
        self.owner: DecisionTaker | None = None
        bar.decided.connect(self.decide)
        bar.editRequested.connect(self._edit)
        bar.demonstrateRequested.connect(self._demonstrate)

    def claim(self, owner: DecisionTaker) -> None:
        """``owner`` waits for a decision: the bar is enabled and answers go to it."""
        self.owner = owner
        self.bar.set_enabled(True)

    def release(self, owner: DecisionTaker) -> None:
        if self.owner is owner:
            self.owner = None
            self.bar.set_enabled(False)

    def decide(self, decision: Decision) -> None:
        """Send ``decision`` to the loop that waits for one (no-op when none does)."""
        if self.owner is not None:
            self.owner.decide(decision)

    def _edit(self) -> None:
        if self.owner is not None:
            self.owner.edit()

    def _demonstrate(self) -> None:
        if self.owner is not None:
            self.owner.demonstrate()
