"""Table 3 measures from episode results, paired comparisons, and the written report."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import pytest

from evaluation.metrics import EpisodeResult, compare, latent_pairs, summarise
from evaluation.report import ReportInput, write_report


def ep(planner: str, task: str, **kw) -> EpisodeResult:
    return EpisodeResult(planner, task, **kw)


def test_stopping_right_after_success_is_a_strict_stop() -> None:
    r = ep("p", "t", success=True, stopped_by="complete", actions=3, first_success_action=3)
    assert r.strict_success and r.stop_verdict == "right_time" and not r.premature_stop


def test_extra_actions_after_success_are_success_but_not_strict() -> None:
    r = ep("p", "t", success=True, stopped_by="complete", actions=5, first_success_action=3)
    assert r.success and not r.strict_success and r.stop_verdict == "extra_steps"


def test_declaring_complete_before_success_is_a_premature_stop() -> None:
    r = ep("p", "t", success=False, stopped_by="complete", actions=2, checkpoints_total=4, checkpoints_reached=1)
    assert r.premature_stop and r.stop_verdict == "premature" and r.partial == 0.25


def test_declaring_impossible_on_an_unfinished_task_is_premature_too() -> None:
    assert ep("p", "t", stopped_by="impossible").premature_stop


def test_running_out_of_steps_is_not_stopping() -> None:
    r = ep("p", "t", success=True, stopped_by="max_steps", actions=10, first_success_action=4)
    assert r.success and not r.stopped and not r.strict_success and r.stop_verdict == "did_not_stop"


def test_success_counts_as_full_partial_completion() -> None:
    assert ep("p", "t", success=True, checkpoints_total=3, checkpoints_reached=1).partial == 1.0


def test_summary_rates_and_costs_per_step() -> None:
    rs = [
        ep("a", "t1", success=True, stopped_by="complete", actions=2, first_success_action=2, steps=3,
           llm_calls=6, prompt_tokens=100, completion_tokens=20, wall_s=3.0, stage_ms={"plan": 900.0}),
        ep("a", "t2", success=False, stopped_by="complete", steps=1, llm_calls=2, wall_s=1.0),
    ]
    s = summarise(rs)["a"]
    assert s.success.estimate == 0.5 and s.strict_success.estimate == 0.5 and s.premature_stop.estimate == 0.5
    assert s.mean_steps == 2.0
    assert s.llm_calls_per_step == 2.0 and s.tokens_per_step == 30.0 and s.wall_s_per_step == 1.0
    assert s.stage_ms_per_step == {"plan": 225.0}


def test_comparison_pairs_the_same_cells_only() -> None:
    rs = [ep("z+", f"t{i}", success=True) for i in range(6)] + [ep("z-", f"t{i}", success=False) for i in range(5)]
    c = compare(rs, "z+", "z-")
    assert c is not None and c.pairs == 5
    assert c.tests["success"].mean_diff == 1.0
    assert c.tests["success"].p_value == pytest.approx(2 / 32)


def test_latent_pairs_finds_with_and_without_latent_state() -> None:
    assert latent_pairs(["zero_shot+", "zero_shot-", "react+", "react"]) == [
        ("zero_shot+", "zero_shot-"),
        ("react+", "react"),
    ]
    assert latent_pairs(["a", "b"]) == [("a", "b")]


def test_report_has_table3_comparisons_and_embedded_figures(tmp_path: Path) -> None:
    rs = []
    for i in range(4):
        rs.append(ep("z+", f"t{i}", success=i < 3, stopped_by="complete", actions=2,
                     first_success_action=2 if i < 3 else None, steps=3, stage_ms={"plan": 100.0, "estimate": 50.0},
                     wall_s=0.6))
        rs.append(ep("z-", f"t{i}", success=i < 1, stopped_by="max_steps", steps=5, wall_s=0.5,
                     error="boom" if i == 3 else None))
    md_path, html_path = write_report(
        tmp_path / "rep",
        ReportInput("Bench", rs, {"model": "SmolLM2-135M", "base_url": "http://127.0.0.1:1"},
                    problems=[("tasks/bad.yaml", "line 3: unknown app 'foo'")]),
    )
    md = md_path.read_text()
    assert "SmolLM2-135M" in md
    assert "| z+ | 4 | 75.0 [" in md
    assert "| z- | 4 (1 errors) | 25.0 [" in md
    assert "z+ vs z- | 4 | success | +50.0 pts" in md
    assert "tasks/bad.yaml" in md and "boom" in md
    assert (tmp_path / "rep" / "success.png").read_bytes()[:4] == b"\x89PNG"
    page = html_path.read_text()
    imgs = re.findall(r'src="data:image/png;base64,([^"]+)"', page)
    assert len(imgs) == 3
    assert base64.b64decode(imgs[0])[:4] == b"\x89PNG"
    assert "<table>" in page and "src=\"success.png\"" not in page


def test_an_empty_run_still_writes_a_report(tmp_path: Path) -> None:
    md, html = write_report(tmp_path, ReportInput("Empty", []))
    assert "No results yet" in md.read_text() and html.exists()
