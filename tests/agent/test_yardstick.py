"""The yardstick: a fixed, named set of short virtual-phone tasks that real models are
measured on.  It must stay short, varied and solvable by its own reference solutions."""

from __future__ import annotations

import pytest

from evaluation import online_bench as bench_online
from phone.virtual.phone import VirtualPhone
from phone.virtual.task_sets import TASK_SETS, expand_task_set
from phone.virtual.tasks import replay


def test_the_benchmark_accepts_the_yardstick_by_name() -> None:
    ids, problems = bench_online.select_tasks("yardstick")
    assert not problems
    assert ids == list(TASK_SETS["yardstick"])
    assert expand_task_set("Yardstick") == TASK_SETS["yardstick"]
    assert expand_task_set("no-such-set") is None


def test_the_yardstick_has_twelve_short_tasks_over_several_apps() -> None:
    ids, _ = bench_online.select_tasks("yardstick")
    tasks = [bench_online.find_task("yardstick", i) for i in ids]
    assert len(tasks) >= 12
    assert all(1 <= len(t.solution) <= 4 for t in tasks), [(t.id, len(t.solution)) for t in tasks]
    assert len({t.app for t in tasks}) >= 6
    assert any(t.impossible for t in tasks)


@pytest.mark.parametrize("task_id", TASK_SETS["yardstick"])
def test_each_yardstick_task_is_solved_by_its_reference_solution(task_id: str) -> None:
    task = bench_online.find_task("yardstick", task_id)
    phone = VirtualPhone(seed=0)
    try:
        done = replay(task, phone)
        final = done[-1] if done else None
        assert task.is_success(phone, final)
    finally:
        phone.close()


def test_a_yardstick_id_can_be_mixed_with_a_single_task() -> None:
    ids, _ = bench_online.select_tasks("yardstick,settings.roaming_off")
    assert ids[-1] == "settings.roaming_off" and len(ids) == len(TASK_SETS["yardstick"]) + 1
