"""The agent benchmark runs and reports overhead, calls and tokens per step."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path


def test_bench_reports_per_planner_cost(tmp_path):
    path = Path(__file__).resolve().parents[2] / "bench" / "bench_agent.py"
    spec = importlib.util.spec_from_file_location("bench_agent", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    out = tmp_path / "r.json"
    assert bench.main(["--tasks", "settings.wifi_off", "--planners", "zeroshot-", "cotsc+", "--samples", "2",
                       "--out", str(out)]) == 0
    summary = json.loads(out.read_text())["summary"]
    assert summary["zeroshot-"]["succeeded"] == 1 and summary["zeroshot-"]["calls_per_step"] == 1.0
    # CoT-SC with latent state: 4 latent calls (3 on the first step) + 2 samples + completion per step
    assert summary["cotsc+"]["calls_per_step"] > 5
    assert summary["zeroshot-"]["overhead_ms"] >= 0
