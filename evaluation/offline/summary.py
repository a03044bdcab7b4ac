"""Figures of an offline run: action accuracy and completion per planner label, per app,
the kinds of step each gets wrong, and paired comparisons between labels.

Action accuracy is over steps (the recorded "task is done" steps included, as AutoDroid
counts them; ``element accuracy`` leaves them out); completion is the share of tasks with
every step right.  Comparisons pair two labels on the tasks both ran and test the
per-task action accuracy and completion with the two-sided paired permutation test of
``evaluation.stats``.  Pure computation and Markdown text; no I/O.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

from evaluation.metrics import EpisodeResult
from evaluation.offline.scoring import KINDS, RIGHT
from evaluation.stats import Interval, PermutationResult, paired_permutation_test, wilson_interval


@dataclass(frozen=True, slots=True)
class LabelFigures:
    label: str
    tasks: int
    errors: int  # tasks whose recording could not be replayed
    steps: int
    right: int
    accuracy: Interval | None
    completed: int
    completion: Interval | None
    element_steps: int
    element_right: int
    kinds: dict[str, int]
    llm_calls: int
    wall_s: float

    @property
    def element_accuracy(self) -> float | None:
        return self.element_right / self.element_steps if self.element_steps else None

    @property
    def s_per_step(self) -> float:
        return self.wall_s / self.steps if self.steps else 0.0


def _figures(label: str, rs: Sequence[EpisodeResult]) -> LabelFigures:
    recs = [x for r in rs for x in r.step_records]
    right = sum(1 for x in recs if x.get("correct"))
    elem = [x for x in recs if x.get("gold_kind") != "finish"]
    ok = [r for r in rs if r.error is None]
    done = sum(1 for r in ok if r.success)
    return LabelFigures(
        label, len(rs), len(rs) - len(ok), len(recs), right,
        wilson_interval(right, len(recs)) if recs else None, done,
        wilson_interval(done, len(ok)) if ok else None, len(elem), sum(1 for x in elem if x.get("correct")),
        dict(Counter(str(x.get("kind")) for x in recs if not x.get("correct"))),
        sum(r.llm_calls for r in rs), sum(r.wall_s for r in rs),
    )


def by_label(results: Sequence[EpisodeResult]) -> dict[str, LabelFigures]:
    labels = sorted({r.planner for r in results})
    return {lab: _figures(lab, [r for r in results if r.planner == lab]) for lab in labels}


def by_app(results: Sequence[EpisodeResult]) -> dict[tuple[str, str], LabelFigures]:
    keys = sorted({(r.planner, r.note) for r in results})
    return {k: _figures(k[0], [r for r in results if (r.planner, r.note) == k]) for k in keys}


@dataclass(frozen=True, slots=True)
class Comparison:
    first: str
    second: str
    tasks: int
    accuracy: PermutationResult
    completion: PermutationResult


def compare_labels(results: Sequence[EpisodeResult], first: str, second: str, seed: int = 0) -> Comparison | None:
    """``first`` vs ``second`` on the tasks both replayed without error (None when none)."""
    a = {r.task_id: r for r in results if r.planner == first and r.error is None}
    b = {r.task_id: r for r in results if r.planner == second and r.error is None}
    common = sorted(set(a) & set(b))
    if not common:
        return None
    return Comparison(
        first, second, len(common),
        paired_permutation_test([a[t].partial for t in common], [b[t].partial for t in common], seed=seed),
        paired_permutation_test([float(a[t].success) for t in common], [float(b[t].success) for t in common],
                                seed=seed),
    )


def comparisons(results: Sequence[EpisodeResult]) -> list[Comparison]:
    labels = sorted({r.planner for r in results})
    return [c for a, b in combinations(labels, 2) if (c := compare_labels(results, a, b)) is not None]


def _pct(v: float | None) -> str:
    return "–" if v is None else f"{100 * v:.1f}"


def _ci(iv: Interval | None) -> str:
    return "–" if iv is None else f"{100 * iv.estimate:.1f} [{100 * iv.low:.0f}–{100 * iv.high:.0f}]"


def markdown(results: Sequence[EpisodeResult], title: str = "Offline step evaluation") -> str:
    """The whole summary as Markdown: per label, per app, error kinds, comparisons."""
    figs = by_label(results)
    out = [f"## {title}", "",
           "| planner:replies | tasks | steps | action accuracy % [95% CI] | element steps % | "
           "completion % [95% CI] | LLM calls/step | s/step |",
           "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for f in figs.values():
        errs = f" ({f.errors} unreadable)" if f.errors else ""
        out.append(f"| {f.label} | {f.tasks}{errs} | {f.steps} | {_ci(f.accuracy)} | {_pct(f.element_accuracy)} | "
                   f"{_ci(f.completion)} | {f.llm_calls / max(1, f.steps):.2f} | {f.s_per_step:.1f} |")
    apps = by_app(results)
    if len({k[1] for k in apps}) > 1:
        out += ["", "### Per app (action accuracy % / completion %)", "",
                "| planner:replies | app | tasks | steps | action accuracy % | completion % |",
                "|---|---|---:|---:|---:|---:|"]
        for (lab, app), f in apps.items():
            out.append(f"| {lab} | {app} | {f.tasks} | {f.steps} | {_pct(f.accuracy.estimate if f.accuracy else None)} "
                       f"| {_pct(f.completion.estimate if f.completion else None)} |")
    out += ["", "### What the wrong steps were", "",
            "| planner:replies | " + " | ".join(k for k in KINDS if k != RIGHT) + " |",
            "|---|" + "---:|" * (len(KINDS) - 1)]
    for f in figs.values():
        out.append(f"| {f.label} | " + " | ".join(str(f.kinds.get(k, 0)) for k in KINDS if k != RIGHT) + " |")
    comps = comparisons(results)
    if comps:
        out += ["", "### Paired comparisons (same tasks; two-sided paired permutation test)", "",
                "| first vs second | tasks | Δ action accuracy (pts) | p | Δ completion (pts) | p |",
                "|---|---:|---:|---:|---:|---:|"]
        for c in comps:
            out.append(f"| {c.first} vs {c.second} | {c.tasks} | {100 * c.accuracy.mean_diff:+.1f} | "
                       f"{c.accuracy.p_value:.4f} | {100 * c.completion.mean_diff:+.1f} | {c.completion.p_value:.4f} |")
    return "\n".join(out) + "\n"
