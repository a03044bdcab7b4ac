"""Figures of a grounding run: strict accuracy and coverage, overall and by target kind,
for the whole data set and each half of its screens, and how the offered elements are
named (``naming_counts``).  Pure functions over verdicts."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from evaluation.grounding.bench import NAMINGS, Verdict


@dataclass(frozen=True, slots=True)
class Figures:
    """One group of instructions: how many, taps inside the box, targets the parse covered."""

    label: str
    n: int
    inside: int
    covered: int
    seconds: float  # per instruction: the screen's parse shared out, plus the choice

    @property
    def accuracy(self) -> float | None:
        return self.inside / self.n if self.n else None

    @property
    def coverage(self) -> float | None:
        return self.covered / self.n if self.n else None


def figures(label: str, verdicts: Sequence[Verdict], per_screen: dict[str, int] | None = None) -> Figures:
    """``per_screen``: how many instructions share each screen's parse (default: counted in ``verdicts``)."""
    per_screen = per_screen or _per_screen(verdicts)
    seconds = sum(v.choose_s + v.parse_s / per_screen[v.screen] for v in verdicts)
    n = len(verdicts)
    return Figures(label, n, sum(v.inside for v in verdicts), sum(v.covered for v in verdicts), seconds / n if n else 0.0)


def _per_screen(verdicts: Sequence[Verdict]) -> dict[str, int]:
    out: dict[str, int] = {}
    for v in verdicts:
        out[v.screen] = out.get(v.screen, 0) + 1
    return out


def table(verdicts: Sequence[Verdict]) -> list[Figures]:
    """Rows: all, text, icon; then the same for half A and half B."""
    shared = _per_screen(verdicts)
    rows = []
    for half in ("", "A", "B"):
        part = [v for v in verdicts if not half or v.half == half]
        if half and not part:
            continue
        prefix = f"half {half} " if half else ""
        rows.append(figures(f"{prefix}all", part, shared))
        for kind in ("text", "icon"):
            rows.append(figures(f"{prefix}{kind}", [v for v in part if v.kind == kind], shared))
    return rows


def pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.1f} %"


def deciders(verdicts: Sequence[Verdict]) -> list[tuple[str, int, int]]:
    """``(who chose, instructions, taps inside)`` per decider: the screen's evidence alone
    (a planner name ending in "+screen") or the model."""
    out: dict[str, list[int]] = {}
    for v in verdicts:
        who = "screen evidence" if v.decided_by.endswith("+screen") else "model" if v.decided_by else "no step"
        c = out.setdefault(who, [0, 0])
        c[0] += 1
        c[1] += v.inside
    return [(k, n, ok) for k, (n, ok) in sorted(out.items())]


def naming_counts(verdicts: Sequence[Verdict]) -> tuple[dict[str, int], dict[str, int]]:
    """``(targets, offered)``: how the element under each covered target is named, and how
    all the elements the screens offer are named (each screen counted once), by ``NAMINGS``."""
    targets = {k: sum(v.cover_naming == k for v in verdicts) for k in NAMINGS}
    seen: dict[str, tuple[int, ...]] = {}
    for v in verdicts:
        if v.screen_namings:
            seen.setdefault(v.screen, v.screen_namings)
    offered = {k: sum(c[i] for c in seen.values() if len(c) > i) for i, k in enumerate(NAMINGS)}
    return targets, offered
