"""Choosing benchmark tasks (including a task file with an error) and exporting the
virtual phone's reference solutions as AITW gold trajectories."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from app.cli.bench import bench_app
from evaluation import online_bench as bench_online
from evaluation.aitw import Category, score
from evaluation.loaders import load_trajectories


def test_a_task_file_with_an_error_is_reported_and_the_others_still_run(task_dir: Path) -> None:
    ids, problems = bench_online.select_tasks(str(task_dir))
    assert ids == ["t.network_page", "t.network_page_again"]
    [(src, msg)] = problems
    assert src.endswith("bad.yaml") and "t.broken" in msg


def test_unknown_task_ids_are_refused_with_the_known_ones(task_dir: Path) -> None:
    with pytest.raises(ValueError, match="unknown task id"):
        bench_online.select_tasks("no.such_task")


def test_builtin_tasks_are_enough_for_a_full_benchmark() -> None:
    ids, problems = bench_online.select_tasks("all")
    assert len(ids) >= 20 and not problems


def test_gold_trajectory_follows_the_reference_solution(task_dir: Path) -> None:
    [gold], failures = bench_online.gold_trajectories(str(task_dir), ["t.network_page"])
    assert not failures
    cats = [s.action.category for s in gold.steps]
    assert cats == [Category.OPEN_APP, Category.CLICK, Category.COMPLETE]
    assert gold.steps[1].boxes  # the screen's element boxes travel with the step
    assert score([gold], [gold]).step_accuracy == 1.0


def test_export_gold_command_writes_aitw_json_that_reads_back(task_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "gold.json"
    res = CliRunner().invoke(bench_app, ["export-gold", str(out), "--tasks", str(task_dir)])
    assert res.exit_code == 0, res.output
    assert "bad.yaml" in res.output
    assert json.loads(out.read_text())["format"] == "aitw"
    first, again = load_trajectories(out)
    assert first.episode_id == "t.network_page" and len(first.steps) == 3
    assert again.episode_id == "t.network_page_again" and len(again.steps) == 3


def test_checkpoints_are_described_in_words() -> None:
    assert bench_online.describe_condition({"visited": "com.android.settings/network"}) == "network"
    assert bench_online.describe_condition({"path": "settings.data_roaming", "eq": False}) == "data roaming"
    assert bench_online.describe_condition({"path": "ui.foreground", "eq": "com.android.settings"}) == "settings"
    assert bench_online.describe_condition({"path": "notes.items.0.title", "icontains": "milk"}) == "items title milk"
