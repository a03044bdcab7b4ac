"""Tables the ``tapwise bench`` commands print: the online run's summary per planner, and
every benchmark's figures per language and wording (``evaluation.wordings`` computes them).

The per-wording table has one row per (language, wording) the results hold, the held-out
wordings pooled per language, and each measure's gap to the tuned English wording 0 on
the same tasks; it is left out when the results hold a single wording in a single language.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table


def print_axes(console: Console, results: Iterable[Any], measures: dict[str, Callable[[Any], float]], title: str, *,
               pair: Callable[[Any], Hashable] | None = None) -> None:
    """Print ``measures`` per language and wording of ``results`` (see the module docstring)."""
    from evaluation.wordings import axis_figures

    rs = list(results)
    if len({(r.language, r.wording) for r in rs}) < 2:
        return
    figures = axis_figures(rs, measures, **({"pair": pair} if pair is not None else {}))
    table = Table(title=escape(title))
    table.add_column("wording", no_wrap=True)
    for c in ("cells", "tasks", *measures, *(f"{m} − tuned" for m in measures), "paired tasks"):
        table.add_column(c, justify="right")
    for f in figures:
        gaps = ["–" if f.gaps[m] is None else f"{f.gaps[m]:+.2f}" for m in measures]
        paired = str(f.paired_tasks) if any(g is not None for g in f.gaps.values()) else "–"
        table.add_row(escape(f.label), str(f.cells), str(f.tasks), *(f"{f.means[m]:.2f}" for m in measures), *gaps,
                      paired)
    console.print(table)


def pct(v: float | None) -> str:
    return "–" if v is None else f"{100 * v:.1f}%"


def _planner_table(console: Console, results: list[Any]) -> None:
    from evaluation.metrics import summarise

    if not results:
        return
    table = Table(title="per planner")
    for c in ("planner", "episodes", "success", "partial", "strict stop", "premature stop", "steps", "s/step"):
        table.add_column(c, justify="left" if c == "planner" else "right")
    for s in summarise(results).values():
        table.add_row(s.planner, str(s.n), pct(s.success.estimate), pct(s.partial.estimate),
                      pct(s.strict_success.estimate), pct(s.premature_stop.estimate), f"{s.mean_steps:.1f}",
                      f"{s.wall_s_per_step:.1f}")
    console.print(table)
    from evaluation.metrics import attempts_per_cell, pass_at_k

    k = attempts_per_cell(results)
    if k > 1:
        one, many = pass_at_k(results, 1), pass_at_k(results, k)
        console.print("  ".join(f"{escape(p)}: pass@1 {pct(one[p])}, pass@{k} {pct(many.get(p))}" for p in one))


def print_online_summary(console: Console, results: Iterable[Any]) -> None:
    """Per planner: success, partial completion, stops, steps, pass@k; then per wording."""
    rs = list(results)
    _planner_table(console, rs)
    print_online_axes(console, rs)


def print_online_axes(console: Console, results: Iterable[Any]) -> None:
    """The online benchmark's success, partial completion and steps per wording, one table per planner."""
    from evaluation.wordings import ONLINE_MEASURES, online_pair

    rs = [r for r in results if r.error is None]
    for planner in sorted({r.planner for r in rs}):
        print_axes(console, [r for r in rs if r.planner == planner], ONLINE_MEASURES, f"{planner}, per wording",
                   pair=online_pair)
