"""The wording and language axes of the virtual-phone benchmarks.

Every virtual-phone task has several wordings of its goal (``goals:``, English; wording 0
is the one the agent was tuned on) and some have wordings for the phone in German
(``goals_de:``).  ``--wording`` and ``--language`` choose which of them a benchmark runs:
``parse_wordings`` reads ``0``, ``2``, ``0,1,2`` or ``all``; ``parse_languages`` reads
``en``, ``de`` or ``en,de``; ``plan_cells`` turns the chosen tasks into (task, language,
wording) cells and says which were skipped and why — a task without goals in the
language, or with fewer wordings than asked (skipped with a message, not an error: in a
set of tasks, ``--wording 3`` is meaningful for the tasks that have four).  When nothing at
all is left, ``plan_cells`` raises ``ValueError`` with what the tasks do have.

``axis_figures`` reports any per-cell measure per language and wording: the tuned English
wording 0 beside each other wording, every other wording pooled ("held out"), and the gap
to English wording 0 counted on the same tasks only (a wording most tasks lack is not
compared with all of them).  Pure computation over results that carry ``task_id``,
``language`` and ``wording``; it runs nothing and prints nothing.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

ALL = None  #: ``parse_wordings("all")``: every wording each task has
TUNED = ("en", 0)  #: the wording the agent was tuned on


def parse_wordings(spec: str | int) -> tuple[int, ...] | None:
    """``"0"``, ``"0,2"`` -> the indices; ``"all"`` -> None (every wording each task has)."""
    text = str(spec).strip().lower()
    if text in ("all", "*"):
        return ALL
    out: list[int] = []
    for part in (p.strip() for p in text.split(",")):
        if not part.isdigit():
            raise ValueError(f"--wording {spec!r}: give a wording number (0 is the first), a list such as 0,1,2, "
                             "or 'all'")
        if int(part) not in out:
            out.append(int(part))
    if not out:
        raise ValueError("--wording: name at least one wording (0 is the first), or 'all'")
    return tuple(out)


def parse_languages(spec: str) -> tuple[str, ...]:
    """``"en"``, ``"de"``, ``"en,de"`` -> the languages, each one the virtual phone speaks."""
    from phone.virtual.i18n import LANGUAGES

    out = tuple(dict.fromkeys(p.strip().lower() for p in spec.split(",") if p.strip()))
    bad = [x for x in out if x not in LANGUAGES]
    if bad or not out:
        raise ValueError(f"--language {spec!r}: the virtual phone speaks {', '.join(LANGUAGES)} "
                         "(a comma-separated list runs each)")
    return out


@dataclass(frozen=True, slots=True)
class Cell:
    """One task asked one way: its id, the phone's language and the wording's index there."""

    task_id: str
    language: str
    wording: int
    goal: str


def plan_cells(tasks: Sequence[Any], wordings: tuple[int, ...] | None, languages: Sequence[str] = ("en",)
               ) -> tuple[list[Cell], list[str]]:
    """The cells to run (task by task, then language, then wording) and a message per
    skipped (task, language) or (task, wording); ``ValueError`` when no cell is left."""
    cells: list[Cell] = []
    skipped: list[str] = []
    for task in tasks:
        for lang in languages:
            said = task.wordings(lang)
            if not said:
                skipped.append(f"{task.id}: no goals written in {lang!r} (it has: {', '.join(task.languages)}); skipped")
                continue
            chosen = range(len(said)) if wordings is ALL else wordings
            for w in chosen:
                if w >= len(said):
                    skipped.append(f"{task.id}: {len(said)} wording(s) in {lang!r} (0 to {len(said) - 1}), "
                                   f"no wording {w}; skipped")
                    continue
                cells.append(Cell(task.id, lang, w, said[w]))
    if not cells:
        counts = sorted({(lang, len(t.wordings(lang))) for t in tasks for lang in languages})
        have = ", ".join(f"{n} in {lang!r}" for lang, n in counts) or "none"
        asked = "any wording" if wordings is ALL else "wording " + ",".join(map(str, wordings))
        raise ValueError(f"none of the {len(tasks)} task(s) has {asked} in {', '.join(map(repr, languages))}: "
                         f"they have {have} (wordings count from 0); pick a wording number below those counts, "
                         "or 'all', or another --language")
    return cells, skipped


@dataclass(frozen=True, slots=True)
class AxisFigure:
    """One row of the per-wording report."""

    label: str
    language: str
    wording: int | None  # None: the language's wordings pooled (in English, all but the tuned one)
    cells: int
    tasks: int
    means: dict[str, float]
    #: mean of (this row − English wording 0) over the tasks both have; None when none
    gaps: dict[str, float | None]
    paired_tasks: int


def _label(language: str, wording: int | None) -> str:
    if wording is None:
        return f"{language} · wordings 1+ pooled" if language == TUNED[0] else f"{language} · all wordings pooled"
    return f"{language} · w{wording}" + (" (tuned)" if (language, wording) == TUNED else "")


def axis_figures(results: Iterable[Any], measures: dict[str, Callable[[Any], float]], *,
                 pair: Callable[[Any], Hashable] = lambda r: r.task_id) -> list[AxisFigure]:
    """Each measure's mean per (language, wording), then the held-out wordings pooled per
    language, with the gap to English wording 0 on the same ``pair`` keys (by default the
    task; pass the task with the seed, noise and planner when those vary)."""
    rs = [r for r in results]
    groups: dict[tuple[str, int], list[Any]] = {}
    for r in rs:
        groups.setdefault((r.language, int(r.wording)), []).append(r)
    tuned = {pair(r): r for r in groups.get(TUNED, [])}

    def row(language: str, wording: int | None, members: list[Any]) -> AxisFigure:
        means = {k: round(statistics.fmean(f(r) for r in members), 3) for k, f in measures.items()}
        paired = [(r, tuned[pair(r)]) for r in members if pair(r) in tuned] if (language, wording) != TUNED else []
        keys = {pair(r) for r, _ in paired}
        gaps: dict[str, float | None] = {
            k: (round(statistics.fmean(f(r) - f(t) for r, t in paired), 3) if paired else None)
            for k, f in measures.items()}
        return AxisFigure(_label(language, wording), language, wording, len(members),
                          len({r.task_id for r in members}), means, gaps, len(keys))

    out = [row(lang, w, members) for (lang, w), members in sorted(groups.items(), key=lambda kv: (
        kv[0][0] != TUNED[0], kv[0]))]
    for lang in dict.fromkeys(lang for lang, _ in sorted(groups, key=lambda k: (k[0] != TUNED[0], k))):
        held = [r for (lg, w), members in groups.items() if lg == lang and (lg, w) != TUNED for r in members]
        several = len({w for (lg, w) in groups if lg == lang and (lg, w) != TUNED}) > 1
        if held and several:
            out.append(row(lang, None, held))
    return out


def markdown_table(figures: Sequence[AxisFigure], measures: Sequence[str]) -> str:
    """The figures as a Markdown table: each measure's mean and its gap to English wording 0."""
    head = ["wording", "cells", "tasks", *[m for m in measures], *[f"{m} − tuned" for m in measures], "paired tasks"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for f in figures:
        gaps = ["–" if f.gaps[m] is None else f"{f.gaps[m]:+.2f}" for m in measures]
        lines.append("| " + " | ".join([f.label, str(f.cells), str(f.tasks), *[f"{f.means[m]:.2f}" for m in measures],
                                         *gaps, str(f.paired_tasks) if f.gaps and any(
                                             g is not None for g in f.gaps.values()) else "–"]) + " |")
    return "\n".join(lines)


def cells_by_task(cells: Sequence[Cell]) -> dict[str, list[tuple[str, int]]]:
    """The (language, wording) pairs of each task, in the order planned (``online.plan_jobs``'s ``asked``)."""
    out: dict[str, list[tuple[str, int]]] = {}
    for c in cells:
        out.setdefault(c.task_id, []).append((c.language, c.wording))
    return out


#: The online benchmark's per-wording measures (``evaluation.metrics.EpisodeResult``).
ONLINE_MEASURES: dict[str, Callable[[Any], float]] = {
    "success": lambda r: float(r.success), "partial": lambda r: float(r.partial), "steps": lambda r: float(r.steps)}


def online_pair(r: Any) -> Hashable:
    """Online cells are paired with the tuned wording on the same planner, task, seed and noise."""
    return (r.planner, r.task_id, r.seed, r.noise)


def report_sections(results: Sequence[Any]) -> list[tuple[str, str]]:
    """Markdown sections (title, body) of an online run's figures per wording and language,
    one per planner; none when the run holds a single wording in a single language."""
    rs = [r for r in results if r.error is None]
    if len({(r.language, r.wording) for r in rs}) < 2:
        return []
    out = []
    for planner in sorted({r.planner for r in rs}):
        figs = axis_figures([r for r in rs if r.planner == planner], ONLINE_MEASURES, pair=online_pair)
        out.append((f"Per wording and language — {planner}", markdown_table(figs, list(ONLINE_MEASURES))))
    return out


def asked_cells(source: str, task_ids: Sequence[str], wording: str, language: str
                ) -> tuple[dict[str, list[tuple[str, int]]], list[str]]:
    """For the online benchmark's tasks of ``source``: per task, the (language, wording)
    pairs ``--wording`` and ``--language`` ask for, and a message per skipped one."""
    from evaluation.online_bench import find_task

    cells, skipped = plan_cells([find_task(source, t) for t in task_ids], parse_wordings(wording),
                                parse_languages(language))
    return cells_by_task(cells), skipped
