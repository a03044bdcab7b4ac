"""pass@k over a task's seeds: the unbiased estimate, cells with too few attempts, and the
report's table."""

from __future__ import annotations

import pytest

from evaluation.metrics import EpisodeResult, attempts_per_cell, pass_at_k
from evaluation.report import pass_at_k_table


def _r(planner: str, task: str, seed: int, success: bool) -> EpisodeResult:
    return EpisodeResult(planner=planner, task_id=task, seed=seed, noise="none", model="m", success=success)


def test_pass_at_k_is_any_success_when_k_equals_the_attempts() -> None:
    rs = [_r("p", "a", s, s == 2) for s in range(3)] + [_r("p", "b", s, False) for s in range(3)]
    assert pass_at_k(rs, 3) == {"p": 0.5}
    assert pass_at_k(rs, 1) == {"p": pytest.approx((1 / 3 + 0) / 2)}


def test_pass_at_k_uses_the_unbiased_estimate_with_more_attempts_than_k() -> None:
    # 4 attempts, 1 success: P(at least one of 2 drawn succeeds) = 1 - C(3,2)/C(4,2) = 0.5
    rs = [_r("p", "a", s, s == 0) for s in range(4)]
    assert pass_at_k(rs, 2)["p"] == pytest.approx(0.5)
    assert pass_at_k(rs, 4)["p"] == 1.0


def test_cells_with_fewer_attempts_than_k_are_left_out() -> None:
    rs = [_r("p", "a", 0, True), _r("q", "a", 0, True), _r("q", "a", 1, False)]
    assert pass_at_k(rs, 2) == {"p": None, "q": 1.0}
    assert attempts_per_cell(rs) == 2
    with pytest.raises(ValueError):
        pass_at_k(rs, 0)


def test_the_report_table_shows_pass_at_1_and_pass_at_k_only_with_several_seeds() -> None:
    one_seed = [_r("p", "a", 0, True)]
    assert pass_at_k_table(one_seed) == ""
    rs = [_r("p", "a", s, s == 0) for s in range(5)]
    table = pass_at_k_table(rs)
    assert "| planner | pass@1 % | pass@3 % | pass@5 % |" in table
    assert "| p | 20.0 | 60.0 | 100.0 |" in table
