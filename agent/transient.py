"""What flashed on the screen after a step's action, and the contract of a run's record.

A ``Transient`` is text that appeared on the phone and went away again on its own — a
toast, a snackbar, a dialog that opened and closed, a progress line — as the record of a
run saw it in the mirror's frames (``phone.record``).  It is kept in the ``Step`` whose
action it followed, with when it was first and last seen (wall-clock seconds) and where
(device pixels).  Such messages are often the only sign that a step worked ("Alarm set
for 7 hours from now"), so the runner also tells the models about them, inside the
screen's fenced data block: they are on-screen words, hence untrusted.

``RunRecord`` is what the runner needs of a record: to be told when an action was sent,
and to read back (without waiting) what was seen.  It is declared here so the agent never
imports the phone or the application layer.  No I/O, no threads here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from vision.geometry import Rect

#: The line that names what flashed after the last action, in a screen's description.
FLASHED = "Flashed on the screen after the last action (gone now)"
SHOWING = "Appeared after the last action (a message over the screen)"


@dataclass(frozen=True, slots=True)
class Transient:
    """Text that appeared and disappeared by itself during a step."""

    text: str
    first_seen: float  # wall-clock seconds (``time.time()``) of the first frame showing it
    last_seen: float  # ... of the frame that no longer showed it (the stream sends every change)
    rect: Rect  # where, in device pixels
    step: int = -1  # the index of the step whose action it followed

    @property
    def seconds(self) -> float:
        """How long it was seen (0 for a single frame)."""
        return max(0.0, self.last_seen - self.first_seen)

    def line(self) -> str:
        """``“Alarm set for 7:00” (seen 1.9 s)``"""
        return f"“{self.text}” (seen {self.seconds:.1f} s)"


@runtime_checkable
class RunRecord(Protocol):
    """The record of a run as the runner uses it; see the module docstring.  Every method
    returns at once: the capture works on threads of its own."""

    def action_begins(self, step: int, at: float, where: Rect | None = None) -> None:
        """Step ``step``'s action is about to go to the phone (wall-clock time ``at``);
        ``where`` is the part of the screen it touches (device pixels; None for keys)."""

    def action_sent(self, step: int, started: float, ended: float, where: Rect | None = None) -> None:
        """Step ``step``'s action went to the phone between these wall-clock times."""

    def transients(self) -> Sequence[Transient]:
        """Everything confirmed so far (appeared and gone), each with its step."""

    def showing(self, step: int) -> Sequence[Transient]:
        """Text that appeared after step ``step``'s action and is still on the screen."""

    def settle(self, timeout_s: float) -> None:
        """Wait (at most ``timeout_s``) until what was shown so far has been examined;
        only called when a run ends, never on a step's path."""


def by_step(found: Iterable[Transient]) -> dict[int, tuple[Transient, ...]]:
    """Transients grouped by step index, in the order they were first seen, each text
    once per step."""
    out: dict[int, list[Transient]] = {}
    for t in sorted(found, key=lambda t: t.first_seen):
        kept = out.setdefault(t.step, [])
        if all(k.text.casefold() != t.text.casefold() for k in kept):
            kept.append(t)
    return {k: tuple(v) for k, v in out.items()}


def screen_note(flashed: Sequence[Transient], showing: Sequence[Transient]) -> str:
    """Lines for a screen's description about what flashed after the last action (empty
    when nothing did); the caller puts them inside the fenced screen block."""
    lines = []
    if flashed:
        lines.append(f"{FLASHED}: " + "; ".join(t.line() for t in flashed))
    if showing:
        lines.append(f"{SHOWING}: " + "; ".join(f"“{t.text}”" for t in showing))
    return "\n".join(lines)
