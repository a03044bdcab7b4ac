"""Specification of the task data: every reference solution solves its task through
the public input API, nothing starts solved, checkpoints fire in order, and bad task
files are rejected with the file and field named."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.types import ActionType
from phone.virtual.phone import VirtualPhone
from phone.virtual.tasks import Task, TaskError, load_task_file, load_tasks, replay
from tests.phone_virtual.task_cli import sim_tasks, write_airplane_task

TASKS = load_tasks()


def test_there_are_at_least_sixty_tasks_with_unique_ids():
    assert len(TASKS) >= 60
    assert len({t.id for t in TASKS}) == len(TASKS)


def test_tasks_span_short_and_long_solutions_and_include_impossible_ones():
    lengths = [len(t.solution) for t in TASKS]
    assert min(lengths) == 1
    assert max(lengths) >= 12
    assert sum(t.impossible for t in TASKS) >= 3
    kinds = {s.kind for t in TASKS for s in t.solution}
    assert {"tap", "long_press", "scroll", "swipe", "type", "back", "enter", "open_app", "impossible"} <= kinds
    assert any("dialog" in t.tags for t in TASKS)


def test_tasks_cover_at_least_eight_apps():
    assert len({t.app for t in TASKS if not t.app.endswith("nexuslauncher")}) >= 8


@pytest.fixture(scope="module")
def phone():
    return VirtualPhone()


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.id)
def test_reference_solution_reaches_success_and_checkpoints_fire_in_order(task: Task, phone: VirtualPhone):
    task.setup(phone)
    assert not task.is_success(phone), f"{task.id} is already solved at its start"
    assert task.checkpoints_done(phone) < max(1, len(task.checkpoints)) or not task.checkpoints
    first_fired: list[int | None] = [None] * len(task.checkpoints)
    last = None
    for i, step in enumerate(task.solution):
        last = step.execute(phone)
        for j, flag in enumerate(task.checkpoint_flags(phone)):
            if flag and first_fired[j] is None:
                first_fired[j] = i
    assert task.is_success(phone, last), f"{task.id}: reference solution did not succeed"
    assert all(f is not None for f in first_fired), f"{task.id}: checkpoints never fired: {first_fired}"
    assert first_fired == sorted(first_fired), f"{task.id}: checkpoints fired out of order: {first_fired}"
    assert len(task.solution) <= task.step_budget


def test_impossible_tasks_succeed_only_by_declaring_impossible(phone: VirtualPhone):
    task = next(t for t in TASKS if t.impossible)
    acts = replay(task, phone)
    assert acts[-1] is not None and acts[-1].type is ActionType.IMPOSSIBLE
    assert task.is_success(phone, acts[-1])
    assert not task.is_success(phone, None)


def test_a_normal_task_ending_in_impossible_is_a_failure(phone: VirtualPhone):
    from agent.types import Action

    task = next(t for t in TASKS if t.id == "settings.roaming_off")
    replay(task, phone)
    assert task.is_success(phone)
    assert not task.is_success(phone, Action.simple("impossible"))


def test_checkpoints_count_in_order_from_the_first(phone: VirtualPhone):
    task = next(t for t in TASKS if t.id == "settings.roaming_off")
    task.setup(phone)
    assert task.checkpoints_done(phone) == 0
    phone.open_app("Settings")
    task.solution[1].execute(phone)
    assert task.checkpoints_done(phone) == 1


def test_extra_task_folder_is_loaded_next_to_the_builtin_ones(tmp_path: Path):
    (tmp_path / "mine.yaml").write_text(
        "id: extra.wifi_off\ngoals: [Turn off wifi]\napp: com.android.settings\n"
        "success: {path: settings.wifi, eq: false}\nsolution:\n  - open_app: Settings\n"
        "  - tap: Network & internet\n  - tap: Internet\n  - tap: {id: switch_widget, near: Wi-Fi}\n"
    )
    tasks = load_tasks([tmp_path])
    assert len(tasks) == len(TASKS) + 1
    extra = next(t for t in tasks if t.id == "extra.wifi_off")
    phone = VirtualPhone()
    replay(extra, phone)
    assert extra.is_success(phone)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ("goals: [x]\napp: a\nsuccess: {path: a, eq: 1}\nsolution: [back]\n", "'id'"),
        ("id: t1\napp: a\nsuccess: {path: a, eq: 1}\nsolution: [back]\n", "'goals'"),
        ("id: t1\ngoals: [x]\napp: a\nsolution: [back]\n", "'success'"),
        ("id: t1\ngoals: [x]\napp: a\nsuccess: {path: a, eq: 1}\nsolution: []\n", "'solution'"),
        ("id: t1\ngoals: [x]\napp: a\nsuccess: {path: a, frob: 1}\nsolution: [back]\n", "'success'"),
        ("id: t1\ngoals: [x]\napp: a\nsuccess: {path: a, eq: 1}\nsolution: [{tap: {colour: red}}]\n", "solution[0]"),
        ("id: t1\ngoals: [x]\napp: a\nsuccess: {path: a, eq: 1}\nsolution: [fly]\n", "solution[0]"),
        ("id: t1\ngoals: [x]\napp: a\nsuccess: {path: a, eq: 1}\nsolution: [back, back]\nstep_budget: 1\n",
         "'step_budget'"),
        ("id: t1\ngoals: [x]\napp: a\nsuccess: {path: a, eq: 1}\nsolution: [back]\nwhen: now\n", "unknown field"),
        ("id: t1\ngoals: [x]\napp: a\nsuccess: {path: a, eq: 1}\nsolution: [back]\ncheckpoints: [{all: []}]\n",
         "checkpoints[0]"),
    ],
)
def test_malformed_task_file_names_the_file_and_the_field(tmp_path: Path, body: str, field: str):
    path = tmp_path / "bad.yaml"
    path.write_text(body)
    with pytest.raises(TaskError) as err:
        load_task_file(path)
    assert str(path) in str(err.value)
    assert field in str(err.value)


def test_invalid_yaml_and_duplicate_ids_are_reported(tmp_path: Path):
    (tmp_path / "broken.yaml").write_text("id: [unclosed\n")
    with pytest.raises(TaskError, match="broken.yaml: not valid YAML"):
        load_tasks([tmp_path], builtin=False)
    (tmp_path / "broken.yaml").unlink()
    (tmp_path / "dup.yaml").write_text(
        "id: settings.roaming_off\ngoals: [x]\napp: a\nsuccess: {path: a, eq: 1}\nsolution: [back]\n")
    with pytest.raises(TaskError, match="already defined"):
        load_tasks([tmp_path])


def test_missing_task_folder_is_a_clear_error(tmp_path: Path):
    with pytest.raises(TaskError, match="not a folder"):
        load_tasks([tmp_path / "nope"])


def test_cli_lists_and_validates_an_extra_folder_and_reports_bad_files(tmp_path: Path):
    write_airplane_task(tmp_path)
    res = sim_tasks(str(tmp_path), "--only-extra", "--validate")
    assert res.exit_code == 0, res.output
    assert "ok   extra.airplane" in res.output
    (tmp_path / "bad.yaml").write_text("id: extra.bad\ngoals: [x]\napp: a\nsolution: [back]\n")
    res = sim_tasks(str(tmp_path), "--only-extra")
    assert res.exit_code == 2
    assert "bad.yaml" in res.output and "'success'" in res.output
