"""Online benchmark measures (latent-state paper §6.2, Table 3) from episode results.

An ``EpisodeResult`` is what one planner did on one task with one seed, judged by the
virtual phone's oracle rather than by annotators:

* **task success** — the task's success condition holds when the episode ends,
  whether or not the agent stopped at the right time;
* **partial completion** — the fraction of the task's checkpoints reached at any
  point of the episode (1.0 when the task succeeded);
* **success with strict stop** — success, and the agent stopped right after the action
  that first made the task succeed (no extra actions);
* **premature stop** — the agent declared ``complete`` or ``impossible`` while the
  task was not done.

``summarise`` aggregates per planner with confidence intervals; ``compare`` pairs two
planners on the same (task, seed, noise) cells and runs a two-sided paired
permutation test.  Pure computation, no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from evaluation.stats import (
    Interval,
    PermutationResult,
    bootstrap_interval,
    paired_permutation_test,
    wilson_interval,
)

STOP_COMPLETE = "complete"
STOP_IMPOSSIBLE = "impossible"
STOP_MAX_STEPS = "max_steps"
STOP_REPEAT = "repeated_action"
STOP_ERROR = "error"
STOP_AGENT_ERROR = "agent_error"


@dataclass(frozen=True)
class EpisodeResult:
    """One benchmark cell: ``planner`` on ``task_id`` with ``seed`` under ``noise``."""

    planner: str
    task_id: str
    seed: int = 0
    noise: str = "none"
    model: str = ""
    success: bool = False
    checkpoints_total: int = 0
    checkpoints_reached: int = 0
    stopped_by: str = STOP_MAX_STEPS
    actions: int = 0
    first_success_action: int | None = None
    steps: int = 0
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    wall_s: float = 0.0
    stage_ms: dict[str, float] = field(default_factory=dict)
    error: str | None = None
    step_records: tuple[dict[str, Any], ...] = ()
    note: str = ""
    goal: str = ""
    aitw_match: float | None = None
    """Share of the reference solution's steps the episode's actions matched, step by
    step, under the AITW rule (``None`` when not computed)."""
    unparseable_replies: int = 0
    """LLM replies the agent could not read (each one re-asked, or failing its step)."""
    wording: int = 0
    """Which of the task's wordings (in ``language``) the goal was; 0 is the tuned one."""
    language: str = "en"
    """The phone's UI language, and the goal's."""

    @property
    def key(self) -> tuple[str, int, str, int, str]:
        return (self.task_id, self.seed, self.noise, self.wording, self.language)

    @property
    def partial(self) -> float:
        if self.success:
            return 1.0
        if self.checkpoints_total <= 0:
            return 0.0
        return min(1.0, self.checkpoints_reached / self.checkpoints_total)

    @property
    def stopped(self) -> bool:
        return self.stopped_by in (STOP_COMPLETE, STOP_IMPOSSIBLE)

    @property
    def premature_stop(self) -> bool:
        return self.stopped and not self.success

    @property
    def strict_success(self) -> bool:
        return (
            self.success
            and self.stopped
            and self.first_success_action is not None
            and self.actions == self.first_success_action
        )

    @property
    def stop_verdict(self) -> str:
        """The paper's four answers: right time, premature, extra steps, did not stop."""
        if not self.stopped:
            return "did_not_stop"
        if not self.success:
            return "premature"
        return "right_time" if self.strict_success else "extra_steps"


@dataclass(frozen=True)
class PlannerSummary:
    planner: str
    n: int
    errors: int
    success: Interval
    partial: Interval
    strict_success: Interval
    premature_stop: Interval
    stopped: float
    mean_steps: float
    llm_calls_per_step: float
    tokens_per_step: float
    wall_s_per_step: float
    stage_ms_per_step: dict[str, float]
    aitw_match: float | None = None

    def row(self) -> dict[str, Any]:
        return {
            "planner": self.planner,
            "episodes": self.n,
            "errors": self.errors,
            "success": self.success.estimate,
            "success_ci": (self.success.low, self.success.high),
            "partial": self.partial.estimate,
            "partial_ci": (self.partial.low, self.partial.high),
            "strict_success": self.strict_success.estimate,
            "premature_stop": self.premature_stop.estimate,
            "stopped": self.stopped,
            "steps": self.mean_steps,
            "llm_calls_per_step": self.llm_calls_per_step,
            "tokens_per_step": self.tokens_per_step,
            "wall_s_per_step": self.wall_s_per_step,
            "aitw_match": self.aitw_match,
        }


def summarise(results: Sequence[EpisodeResult], *, seed: int = 0) -> dict[str, PlannerSummary]:
    """Per-planner Table 3 columns with 95% intervals (Wilson for rates, bootstrap for
    partial completion) and cost per step.  Episodes that errored count as failures
    (they are also counted in ``errors``)."""
    by_planner: dict[str, list[EpisodeResult]] = {}
    for r in results:
        by_planner.setdefault(r.planner, []).append(r)
    out: dict[str, PlannerSummary] = {}
    for planner, rs in sorted(by_planner.items()):
        n = len(rs)
        steps = sum(r.steps for r in rs)
        per_step = max(steps, 1)
        stages: dict[str, float] = {}
        for r in rs:
            for k, v in r.stage_ms.items():
                stages[k] = stages.get(k, 0.0) + v
        out[planner] = PlannerSummary(
            planner=planner,
            n=n,
            errors=sum(r.error is not None for r in rs),
            success=wilson_interval(sum(r.success for r in rs), n),
            partial=bootstrap_interval([r.partial for r in rs], seed=seed),
            strict_success=wilson_interval(sum(r.strict_success for r in rs), n),
            premature_stop=wilson_interval(sum(r.premature_stop for r in rs), n),
            stopped=sum(r.stopped for r in rs) / n,
            mean_steps=steps / n,
            llm_calls_per_step=sum(r.llm_calls for r in rs) / per_step,
            tokens_per_step=sum(r.prompt_tokens + r.completion_tokens for r in rs) / per_step,
            wall_s_per_step=sum(r.wall_s for r in rs) / per_step,
            stage_ms_per_step={k: v / per_step for k, v in sorted(stages.items())},
            aitw_match=_mean([r.aitw_match for r in rs if r.aitw_match is not None]),
        )
    return out


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


MEASURES = {
    "success": lambda r: float(r.success),
    "partial": lambda r: r.partial,
    "strict_success": lambda r: float(r.strict_success),
    "premature_stop": lambda r: float(r.premature_stop),
}


@dataclass(frozen=True)
class Comparison:
    a: str
    b: str
    pairs: int
    tests: dict[str, PermutationResult]


def compare(
    results: Sequence[EpisodeResult], a: str, b: str, *, seed: int = 0, resamples: int = 20000
) -> Comparison | None:
    """Pair planner ``a`` with ``b`` on shared (task, seed, noise, wording, language) cells and test each
    measure; ``None`` when they share no cell."""
    ra = {r.key: r for r in results if r.planner == a}
    rb = {r.key: r for r in results if r.planner == b}
    keys = sorted(set(ra) & set(rb))
    if not keys:
        return None
    tests = {
        name: paired_permutation_test(
            [f(ra[k]) for k in keys], [f(rb[k]) for k in keys], seed=seed, resamples=resamples
        )
        for name, f in MEASURES.items()
    }
    return Comparison(a, b, len(keys), tests)


def latent_pairs(planners: Sequence[str]) -> list[tuple[str, str]]:
    """Planner pairs that differ only by latent state: ``zero_shot+``/``zero_shot-``,
    ``react+``/``react``, ``x_latent``/``x``.  Other planners are compared pairwise
    in the order given when exactly two are present."""
    names = list(dict.fromkeys(planners))
    pairs: list[tuple[str, str]] = []
    for p in names:
        for suffix_with, suffix_without in (("+", "-"), ("+", ""), ("_latent", ""), ("-latent", "")):
            if p.endswith(suffix_with):
                base = p[: -len(suffix_with)]
                other = base + suffix_without
                if other in names and other != p:
                    pairs.append((p, other))
                    break
    if not pairs and len(names) == 2:
        pairs.append((names[0], names[1]))
    return pairs


# ---- pass@k -----------------------------------------------------------------------------


def pass_at_k(results: Sequence[EpisodeResult], k: int) -> dict[str, float | None]:
    """Per planner, the chance that at least one of ``k`` attempts at a task succeeds.

    Attempts are the seeds of one (task, noise, wording, language) cell.  With ``n >= k`` attempts of which
    ``c`` succeeded, a cell scores ``1 - C(n-c, k) / C(n, k)`` (the unbiased estimate from
    the HumanEval paper; with ``n == k`` it is simply "any succeeded"); cells with fewer
    than ``k`` attempts are left out.  ``None`` when a planner has no cell with ``k``
    attempts.  ``pass_at_k(results, 1)`` is the mean success rate over cells.
    """
    if k < 1:
        raise ValueError("k must be at least 1")
    cells: dict[str, dict[tuple[str, str, int, str], list[bool]]] = {}
    for r in results:
        cells.setdefault(r.planner, {}).setdefault((r.task_id, r.noise, r.wording, r.language), []).append(
            bool(r.success))
    out: dict[str, float | None] = {}
    for planner, by_cell in sorted(cells.items()):
        scores = [_pass_estimate(len(v), sum(v), k) for v in by_cell.values() if len(v) >= k]
        out[planner] = sum(scores) / len(scores) if scores else None
    return out


def _pass_estimate(n: int, c: int, k: int) -> float:
    from math import comb

    if n - c < k:
        return 1.0
    return 1.0 - comb(n - c, k) / comb(n, k)


def attempts_per_cell(results: Sequence[EpisodeResult]) -> int:
    """The largest number of seeds any (planner, task, noise, wording, language) cell has."""
    counts: dict[tuple[str, str, str, int, str], int] = {}
    for r in results:
        key = (r.planner, r.task_id, r.noise, r.wording, r.language)
        counts[key] = counts.get(key, 0) + 1
    return max(counts.values(), default=0)
