"""`tapwise bench online` end to end on the virtual phone with a scripted model server:
results, resuming an interrupted run, a task file with an error, the report and the
latent-state scores."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from app.cli.bench import bench_app
from evaluation import online_bench as bench_online
from evaluation.online import Job
from evaluation.results import ResultsDB
from tests.evaluation.scripted_llm import scripted_server

runner = CliRunner()


@pytest.fixture
def fake():
    with scripted_server() as server:
        yield server


def _job(planner: str, task_dir: Path, url: str, **extra) -> Job:
    settings = {"tasks_source": str(task_dir), "model": "fake-model:latest", "base_url": url, "backend": "ollama",
                "max_steps": 6, **extra}
    return Job(planner, "t.network_page", 0, extra.pop("noise", "none"), settings)


def test_a_planner_without_latent_state_succeeds_and_stops_at_the_right_time(task_dir: Path, fake) -> None:
    r = bench_online.run_cell(_job("zeroshot-", task_dir, fake.url))
    assert r.error is None, r.error
    assert r.success and r.stopped_by == "complete"
    assert r.actions == 2 and r.first_success_action == 2 and r.strict_success
    assert r.checkpoints_reached == 2 and r.partial == 1.0
    assert r.llm_calls >= 3 and r.prompt_tokens > 0 and r.stage_ms.get("plan", 0) > 0
    # open Settings, tap Network & internet, complete: the reference solution exactly.
    assert r.aitw_match == 1.0


def test_a_latent_planner_records_estimates_with_the_phone_truth(task_dir: Path, fake) -> None:
    r = bench_online.run_cell(_job("zeroshot+", task_dir, fake.url))
    assert r.error is None, r.error
    assert r.success and r.stopped_by == "complete" and r.strict_success
    first, second, last = r.step_records
    assert first["performed"] is None and first["estimate"]["progression"].startswith("You have")
    assert second["performed_kind"] == "open_app" and second["performed_matches_commanded"]
    assert last["performed_target"] == "Network & internet" and last["truth_complete"] is True
    assert last["estimate"]["completion"] is True


def test_grounding_noise_is_recorded_as_what_really_happened(task_dir: Path, fake) -> None:
    job = _job("zeroshot-", task_dir, fake.url)
    job = Job(job.planner, job.task_id, 3, "grounding", job.settings)
    r = bench_online.run_cell(job)
    assert r.error is None
    taps = [rec for rec in r.step_records if rec["performed_kind"] == "tap"]
    assert all("performed_matches_commanded" in rec for rec in taps)


def _online(args: list[str], task_dir: Path, db: Path, url: str):
    return runner.invoke(bench_app, [
        "online", "--planners", "zeroshot-,zeroshot+", "--tasks", str(task_dir), "--model", "fake-model:latest",
        "--base-url", url, "--backend", "ollama", "--db", str(db), "--run", "t", "--max-steps", "6", *args,
    ])


def test_online_run_skips_a_broken_task_file_and_reports_it(task_dir: Path, fake, tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    res = _online(["--out", str(tmp_path / "rep")], task_dir, db, fake.url)
    assert res.exit_code == 0, res.output
    assert "c_bad.yaml" in res.output and "t.broken" in res.output
    with ResultsDB(db) as store:
        results = store.results("t")
        assert len(results) == 4 and all(r.success for r in results)
        assert any("c_bad.yaml" in src for src, _ in store.problems("t"))
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "fake-model:latest" in md and "c_bad.yaml" in md
    assert "Latent-state accuracy" in md
    assert "zeroshot+ vs zeroshot-" in md


def test_an_interrupted_online_run_continues_with_the_missing_episodes(task_dir: Path, fake, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "r.sqlite"
    real = bench_online.run_cell
    calls: list[str] = []

    def interrupted_after_one(job):
        if calls:
            raise KeyboardInterrupt
        calls.append(job.planner)
        return real(job)

    monkeypatch.setattr(bench_online, "run_cell", interrupted_after_one)
    res = _online([], task_dir, db, fake.url)
    assert res.exit_code == 130 and "run the same command again" in res.output
    with ResultsDB(db) as store:
        assert len(store.results("t")) == 1

    monkeypatch.setattr(bench_online, "run_cell", real)
    res = _online([], task_dir, db, fake.url)
    assert res.exit_code == 0, res.output
    assert "1 episodes already done" in res.output and "ran 3 episodes" in res.output
    with ResultsDB(db) as store:
        assert len(store.results("t")) == 4


def test_continuing_with_another_model_is_refused(task_dir: Path, fake, tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    with ResultsDB(db) as store:
        store.open_run("t", {"model": "other-model", "base_url": fake.url, "backend": "ollama", "max_steps": 6})
    res = _online([], task_dir, db, fake.url)
    assert res.exit_code == 2 and "different settings" in res.output


def test_bench_latent_scores_the_recorded_estimates(task_dir: Path, fake, tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    assert _online([], task_dir, db, fake.url).exit_code == 0
    out = tmp_path / "latent.json"
    res = runner.invoke(bench_app, ["latent", "--db", str(db), "--run", "t", "--json", str(out)])
    assert res.exit_code == 0, res.output
    scores = json.loads(out.read_text())
    # The scripted model says "Yes" exactly on the network page: completion is always right.
    assert scores["completion"]["correct"] == scores["completion"]["judged"] > 0
    assert "screen_summary" in res.output  # what the rubric cannot judge is said


def test_unknown_planner_or_noise_is_a_clear_error(task_dir: Path, fake, tmp_path: Path) -> None:
    res = _online(["--noise", "earthquake"], task_dir, tmp_path / "r.sqlite", fake.url)
    assert res.exit_code == 2 and "unknown noise profile" in res.output
    res = runner.invoke(bench_app, ["online", "--planners", "genius", "--tasks", str(task_dir)])
    assert res.exit_code == 2 and "unknown planner" in res.output


def test_an_unreachable_server_is_reported_before_any_episode_runs(task_dir: Path, tmp_path: Path) -> None:
    res = _online([], task_dir, tmp_path / "r.sqlite", "http://127.0.0.1:9")
    assert res.exit_code == 2 and "does not answer" in res.output
    assert not (tmp_path / "r.sqlite").exists()


def test_cells_run_in_parallel_processes_from_the_command_line(task_dir: Path, fake, tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    res = _online(["--processes", "2"], task_dir, db, fake.url)
    assert res.exit_code == 0, res.output
    with ResultsDB(db) as store:
        assert len(store.results("t")) == 4


def test_estimates_are_kept_even_when_planning_then_fails(task_dir: Path) -> None:
    from tests.agent.fake_ollama import FakeLLMServer, Reply

    confused = FakeLLMServer(default=Reply("No mistakes."))
    confused.on("Decide the single next action", "the weather is lovely today")
    confused.on("fully achieved", "No.")
    with confused:
        r = bench_online.run_cell(_job("zeroshot+", task_dir, confused.url, max_steps=2))
    assert r.error is None and not r.success and r.actions == 0
    assert len(r.step_records) == 2
    assert all(rec["estimate"] is not None and rec["proposed"] == "" for rec in r.step_records)
