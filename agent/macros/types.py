"""Frozen data types of macros: a recorded ``Macro``, its steps (``MacroStep``) and, for a step
the model found again, its ``HealNote``.  Data only: recording, replay and healing live
in the other modules of ``agent.macros``; serialisation in ``agent.codec``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from agent.types import Action, Target, new_id


@dataclass(frozen=True, slots=True)
class HealNote:
    """How a step's element was found again by the model (``agent.macros.heal``) and approved."""

    missed: str  # why the recording's own clues did not find it (the cascade's verdict)
    chose: str  # the element the model chose, in words
    model: str = ""
    at: float = field(default_factory=time.time)


@dataclass(frozen=True, slots=True)
class MacroStep:
    """One recorded step of a macro, in words and with what re-finds its element."""

    action: Action
    description: str = ""
    target: Target | None = None
    screen_before: str = ""
    screen_after: str = ""
    expected_package: str | None = None
    expect_checked: bool | None = None  # a toggle step: the state the switch/checkbox should end in
    healed: HealNote | None = None  # this version's step was healed (the model found it; the user approved)


@dataclass(frozen=True, slots=True)
class Macro:
    """A named, versioned sequence of semantic steps; ``{name}`` in typed text is a parameter."""

    name: str
    steps: tuple[MacroStep, ...] = ()
    id: str = field(default_factory=new_id)
    version: int = 1
    app: str | None = None
    description: str = ""
    parameters: tuple[str, ...] = ()
    created_at: float = field(default_factory=time.time)

    def __post_init__(self) -> None:
        if not self.name.strip():
            raise ValueError("a macro needs a name")
        if self.version < 1:
            raise ValueError("macro versions start at 1")
