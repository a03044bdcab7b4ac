"""Running benchmark cells: resuming an interrupted run, errors as results, parallel workers."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaluation.metrics import EpisodeResult
from evaluation.online import Job, plan_jobs, run_jobs
from evaluation.results import ResultsDB, SettingsMismatch


def scripted_worker(job: Job) -> EpisodeResult:
    """Succeeds on even-numbered tasks, fails on odd ones, crashes on 'boom'."""
    if job.task_id == "boom":
        raise RuntimeError("the task oracle crashed")
    ok = int(job.task_id[-1]) % 2 == 0
    return EpisodeResult(job.planner, job.task_id, job.seed, job.noise, success=ok, steps=3, actions=2)


class Interrupting:
    """Works for ``n`` cells, then behaves like Ctrl-C."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.calls: list[tuple] = []

    def __call__(self, job: Job) -> EpisodeResult:
        if len(self.calls) >= self.n:
            raise KeyboardInterrupt
        self.calls.append(job.key)
        return scripted_worker(job)


def test_plan_jobs_covers_every_combination_with_planners_adjacent() -> None:
    jobs = plan_jobs(["a", "b"], ["t0", "t1"], seeds=2)
    assert len(jobs) == 8
    assert [j.planner for j in jobs[:2]] == ["a", "b"]
    assert jobs[0].task_id == jobs[1].task_id


def test_an_interrupted_run_continues_where_it_stopped(tmp_path: Path) -> None:
    jobs = plan_jobs(["a", "b"], ["t0", "t1", "t2"], seeds=1)
    db = ResultsDB(tmp_path / "r.sqlite")
    db.open_run("run1", {"model": "m"})
    first = Interrupting(4)
    with pytest.raises(KeyboardInterrupt):
        run_jobs(db, "run1", jobs, first)
    assert len(db.results("run1")) == 4
    db.close()

    db = ResultsDB(tmp_path / "r.sqlite")  # a new process would reopen the file
    assert db.open_run("run1", {"model": "m"}) is True
    second = Interrupting(100)
    outcome = run_jobs(db, "run1", jobs, second)
    assert outcome.skipped == 4 and outcome.ran == 2
    assert set(second.calls).isdisjoint(first.calls)
    assert {r.task_id for r in db.results("run1")} == {"t0", "t1", "t2"}
    assert len(db.results("run1")) == 6


def test_a_crashing_cell_becomes_an_error_result_and_the_run_goes_on(tmp_path: Path) -> None:
    db = ResultsDB(tmp_path / "r.sqlite")
    db.open_run("r", {})
    outcome = run_jobs(db, "r", plan_jobs(["a"], ["t0", "boom", "t2"]), scripted_worker)
    assert outcome.errors == 1 and outcome.ran == 3
    [bad] = [r for r in db.results("r") if r.task_id == "boom"]
    assert "the task oracle crashed" in (bad.error or "") and not bad.success


def test_errored_cells_are_retried_only_when_asked(tmp_path: Path) -> None:
    db = ResultsDB(tmp_path / "r.sqlite")
    db.open_run("r", {})
    jobs = plan_jobs(["a"], ["t0", "boom"])
    run_jobs(db, "r", jobs, scripted_worker)
    assert run_jobs(db, "r", jobs, scripted_worker).ran == 0
    assert run_jobs(db, "r", jobs, scripted_worker, retry_errors=True).ran == 1


def test_continuing_a_run_with_another_model_is_refused(tmp_path: Path) -> None:
    db = ResultsDB(tmp_path / "r.sqlite")
    db.open_run("r", {"model": "smollm2"})
    with pytest.raises(SettingsMismatch, match="model"):
        db.open_run("r", {"model": "llama3"})


def test_cells_can_run_in_parallel_processes(tmp_path: Path) -> None:
    db = ResultsDB(tmp_path / "r.sqlite")
    db.open_run("r", {})
    seen: list[int] = []
    outcome = run_jobs(
        db, "r", plan_jobs(["a", "b"], ["t0", "t1"]), scripted_worker, processes=2,
        on_result=lambda r, done, total: seen.append(done),
    )
    assert outcome.ran == 4 and sorted(seen) == [1, 2, 3, 4]
    assert sum(r.success for r in db.results("r")) == 2


def test_a_file_that_is_not_a_database_is_a_clear_error(tmp_path: Path) -> None:
    from evaluation.results import ResultsError

    f = tmp_path / "x.sqlite"
    f.write_text("this is not sqlite" * 100)
    with pytest.raises(ResultsError, match="not a usable results database"):
        ResultsDB(f)
