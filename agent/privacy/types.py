"""What the user is asked before something leaves the machine or goes to another model,
and what they answered.  Frozen data only (the window's consent dialog imports it)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class ConsentKind(str, Enum):
    SEND = "send"  # the first request of a run to a model server that is not on this machine
    ESCALATE = "escalate"  # one step goes to the bigger model


class ConsentAnswer(str, Enum):
    ONCE = "once"  # this time (for SEND: this run)
    TASK = "task"  # for this task, remembered per model
    NO = "no"


@dataclass(frozen=True, slots=True)
class Replaced:
    """One value the redactor replaced: its placeholder and what kind of value it was
    (never the value itself: this is what records and dialogs show)."""

    placeholder: str
    kind: str  # "phone number", "e-mail address", "digit run", "contact name"


@dataclass(frozen=True, slots=True)
class ConsentQuestion:
    """A question for the user.  For ``SEND``, ``sent`` is exactly the text that would go
    (system prompt, prompt and reply form, after redaction) and ``replaced`` what was
    taken out of it; ``images`` says how many screenshots would go along, unredacted."""

    kind: ConsentKind
    model: str
    server: str = ""
    goal: str = ""
    reason: str = ""
    sent: str = ""
    replaced: tuple[Replaced, ...] = ()
    images: int = 0
    remote: bool = False

    def replaced_summary(self) -> str:
        """"3 phone numbers, 1 e-mail address" (empty when nothing was replaced)."""
        return summarise(self.replaced)


def summarise(replaced: tuple[Replaced, ...] | list[Replaced]) -> str:
    """How many values of each kind were replaced, in words."""
    counts: dict[str, int] = {}
    for r in replaced:
        counts[r.kind] = counts.get(r.kind, 0) + 1
    return ", ".join(f"{n} {kind}{'' if n == 1 else 's'}" for kind, n in counts.items())
