"""The decision memory's data: one remembered decision, and one found again on a screen.

A ``Remembered`` decision is a step the user approved, edited or demonstrated, kept with
what identifies where it was taken: the app in front and its version, the screen's
identity (``agent.effects.screen_identity``: clock ticks and status icons do not count),
how many steps the run had already taken on that screen (``visit``: a switch flipped on a
screen leaves its identity as it was, so the second decision there is told apart from the
first) and the goal.  The step itself is a ``MacroStep`` (``agent.macros.recorder``): its
element's words and fingerprint find the element again on a new parse of the screen.

Frozen data only; no I/O.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from enum import StrEnum

from agent.macros.types import MacroStep
from agent.types import Action, new_id

#: ``Proposal.planner`` of a step proposed from memory.
MEMORY = "memory"
#: Evidence prefix of a macro step whose element the model found again (``agent.macros.heal``).
HEALED = "healed: "


class How(StrEnum):
    """How the user decided the remembered step."""

    APPROVED = "approved"
    EDITED = "edited"
    DEMONSTRATED = "demonstrated"


@dataclass(frozen=True, slots=True)
class Remembered:
    """One decision of the user's, kept for the next run on the same screen and goal."""

    goal: str
    app: str  # the package in front when the step was taken ("" when the phone did not say)
    screen: str  # agent.effects.screen_identity of the screen it was taken on
    step: MacroStep
    how: How = How.APPROVED
    app_version: str = ""
    visit: int = 0  # steps the run had already taken on this screen
    screen_words: str = ""  # what the screen showed, in a few words (for the Knowledge tab)
    episode_id: str = ""
    at: float = field(default_factory=time.time)
    id: str = field(default_factory=new_id)
    retired: str = ""  # why it is no longer proposed ("" while it is)

    @property
    def active(self) -> bool:
        return not self.retired

    @property
    def action(self) -> Action:
        return self.step.action


@dataclass(frozen=True, slots=True)
class Recall:
    """A remembered decision found again on the current screen."""

    entry: Remembered
    action: Action  # aimed at this parse's element
    found: str = ""  # how the element was found again (the cascade's level)
    demoted: str = ""  # why it is only a hint ("" when it may be proposed as the step)
    equivalent: bool = False  # remembered for an equivalent goal, not this very goal


def when(at: float) -> str:
    """A date as the card says it: "27 Nov" (with the year when it is not this year's)."""
    then, now = time.localtime(at), time.localtime()
    day = f"{then.tm_mday} {time.strftime('%b', then)}"
    return day if then.tm_year == now.tm_year else f"{day} {then.tm_year}"
