"""Run benchmark cells (planner × task × seed × noise × the goal's wording and language) and keep the results, resumably.

This module knows nothing about the virtual phone or any LLM: it is handed a *worker*,
a picklable function ``worker(job) -> EpisodeResult`` (the application supplies one that
drives the virtual phone), and takes care of what every benchmark needs — skipping
cells a previous, interrupted invocation already finished, running cells in parallel
processes, turning a crashing cell into an error result instead of a crashed run, and
committing each result as soon as it arrives.
"""

from __future__ import annotations

import logging
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field, replace
from typing import Any

from evaluation.metrics import STOP_ERROR, EpisodeResult
from evaluation.results import ResultsDB

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Job:
    """One benchmark cell and the settings the worker needs to run it."""

    planner: str
    task_id: str
    seed: int = 0
    noise: str = "none"
    settings: dict[str, Any] = field(default_factory=dict)
    wording: int = 0  # which of the task's wordings in ``language`` the goal is (0: the tuned one)
    language: str = "en"  # the phone's UI language, and the goal's

    @property
    def key(self) -> tuple[str, str, int, str, int, str]:
        return (self.planner, self.task_id, self.seed, self.noise, self.wording, self.language)

    def label(self) -> str:
        asked = "" if (self.wording, self.language) == (0, "en") else f" · {self.language} w{self.wording}"
        return f"{self.planner} · {self.task_id}{asked} · seed {self.seed} · {self.noise}"


def plan_jobs(
    planners: Sequence[str],
    task_ids: Sequence[str],
    seeds: int | Sequence[int] = 1,
    noises: Sequence[str] = ("none",),
    settings: dict[str, Any] | None = None,
    asked: Mapping[str, Sequence[tuple[str, int]]] | None = None,
) -> list[Job]:
    """Every combination, ordered so that the planners of one cell run next to each other
    (an interrupted run then still holds complete pairs).  ``asked`` gives, per task id,
    the (language, wording) pairs to run; a task it does not name runs wording 0 in English."""
    if not planners:
        raise ValueError("name at least one planner")
    if not task_ids:
        raise ValueError("no tasks to run")
    seed_list = list(range(seeds)) if isinstance(seeds, int) else list(seeds)
    if not seed_list:
        raise ValueError("need at least one seed")
    return [
        Job(p, t, s, n, dict(settings or {}), wording, language)
        for n in noises
        for s in seed_list
        for t in task_ids
        for language, wording in (asked or {}).get(t, (("en", 0),))
        for p in planners
    ]


def error_result(job: Job, message: str) -> EpisodeResult:
    return EpisodeResult(
        planner=job.planner,
        task_id=job.task_id,
        seed=job.seed,
        noise=job.noise,
        wording=job.wording,
        language=job.language,
        model=str(job.settings.get("model", "")),
        stopped_by=STOP_ERROR,
        error=message,
    )


def safe_call(worker: Callable[[Job], EpisodeResult], job: Job) -> EpisodeResult:
    """Run ``worker`` and turn any exception into an error result (runs in the child)."""
    t0 = time.perf_counter()
    try:
        result = worker(job)
    except Exception as exc:  # a broken cell must not end the benchmark
        log.warning("cell %s failed: %s", job.label(), exc)
        tb = traceback.format_exception_only(type(exc), exc)[-1].strip()
        return replace(error_result(job, tb), wall_s=time.perf_counter() - t0)
    return result


ProgressFn = Callable[[EpisodeResult, int, int], None]


@dataclass(frozen=True)
class RunOutcome:
    total: int
    skipped: int
    ran: int
    errors: int
    interrupted: bool = False


def run_jobs(
    db: ResultsDB,
    run_id: str,
    jobs: Sequence[Job],
    worker: Callable[[Job], EpisodeResult],
    *,
    processes: int = 1,
    retry_errors: bool = False,
    on_result: ProgressFn | None = None,
    on_skip: Callable[[int], None] | None = None,
) -> RunOutcome:
    """Run the cells of ``jobs`` that ``run_id`` does not hold yet, saving each result.

    With ``processes > 1`` cells run in that many worker processes (``worker`` must then
    be a module-level function).  ``KeyboardInterrupt`` stops promptly, keeps what was
    saved, and is re-raised; running the same call again continues the run.
    """
    done = db.done_cells(run_id, include_errors=not retry_errors)
    todo = [j for j in jobs if j.key not in done]
    skipped = len(jobs) - len(todo)
    if on_skip is not None:
        on_skip(skipped)
    errors = 0
    finished = 0

    def record(result: EpisodeResult) -> None:
        nonlocal errors, finished
        db.save(run_id, result)
        finished += 1
        errors += result.error is not None
        if on_result is not None:
            on_result(result, skipped + finished, len(jobs))

    if processes <= 1 or len(todo) <= 1:
        for job in todo:
            record(safe_call(worker, job))
        return RunOutcome(len(jobs), skipped, finished, errors)

    pool = ProcessPoolExecutor(max_workers=processes)
    pending: dict[Future[EpisodeResult], Job] = {}
    queue = list(todo)
    try:
        while queue or pending:
            while queue and len(pending) < processes:
                job = queue.pop(0)
                pending[pool.submit(safe_call, worker, job)] = job
            ready, _ = wait(list(pending), return_when=FIRST_COMPLETED)
            for fut in ready:
                job = pending.pop(fut)
                try:
                    result = fut.result()
                except Exception as exc:  # the child process died
                    result = error_result(job, f"worker process failed: {exc}")
                record(result)
    except KeyboardInterrupt:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    return RunOutcome(len(jobs), skipped, finished, errors)
