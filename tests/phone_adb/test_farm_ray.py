"""The device farm end to end: a Ray head on loopback started by `tapwise farm serve` with
two served virtual phones (separate processes, reached through the real adb), a scripted
model server over HTTP, and 8 benchmark cells driven from `run_on_ray`.  One Ray worker is
killed with SIGKILL mid-cell: the run still ends with each of the 8 cells recorded exactly
once, and the report gives pass@1 and pass@k."""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from evaluation.online import plan_jobs
from evaluation.report import ReportInput, render_markdown
from evaluation.results import ResultsDB
from tests.evaluation.scripted_llm import GOOD_TASK, SECOND_TASK, scripted_server
from tests.phone_adb.conftest import free_port

pytestmark = [
    pytest.mark.adb,
    pytest.mark.slow,
    # Ray is not imported here: the driver must decide on loopback before Ray's first import
    pytest.mark.skipif(importlib.util.find_spec("ray") is None,
                       reason="the farm extra (Ray) is not installed: pip install -e '.[farm]'"),
]


def _cell_worker_pids() -> list[int]:
    """Ray workers that are running a farm cell right now (Ray titles them by task)."""
    out = subprocess.run(["ps", "-eo", "pid=,args="], capture_output=True, text=True).stdout
    return [int(line.split(None, 1)[0]) for line in out.splitlines() if "ray::cell " in line]


@pytest.fixture
def farm_node(adb_env, tmp_path: Path):
    ray_port = free_port()
    env = dict(adb_env.env, RAY_AUTH_MODE="disabled", HOME=str(tmp_path / "home"), PYTHONUNBUFFERED="1")
    (tmp_path / "home").mkdir()
    proc = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "farm", "serve", "--phones", "2", "--loopback", "--port", str(ray_port),
         "--base-port", "0", "--no-adb-phones", "--num-cpus", "2"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )
    lines: list[str] = []
    ready = threading.Event()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if line.startswith("farm ready"):
                ready.set()

    threading.Thread(target=read, daemon=True).start()
    try:
        assert ready.wait(150), "farm serve did not get ready:\n" + "".join(lines[-40:])
        yield f"127.0.0.1:{ray_port}", lines
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)


def test_eight_cells_on_two_served_phones_survive_a_killed_worker(farm_node, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from evaluation.farm.driver import FarmOptions, run_on_ray

    address, lines = farm_node
    assert sum("advertises tapwise_phone:served:127.0.0.1:" in line for line in lines) == 2
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    (tasks / "a.yaml").write_text(GOOD_TASK)
    (tasks / "b.yaml").write_text(SECOND_TASK)
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    with scripted_server() as fake:
        settings = {"tasks_source": str(tasks), "model": "fake-model:latest", "base_url": fake.url,
                    "backend": "ollama", "max_steps": 6}
        jobs = plan_jobs(["zeroshot-"], ["t.network_page", "t.network_page_again"], 4, ["none"], settings)
        assert len(jobs) == 8
        killed: list[int] = []

        def kill_one_worker() -> None:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and not killed:
                pids = _cell_worker_pids()
                if pids:
                    os.kill(pids[0], signal.SIGKILL)
                    killed.append(pids[0])
                time.sleep(0.05)

        killer = threading.Thread(target=kill_one_worker, daemon=True)
        killer.start()
        seen_phones: list[int] = []
        with ResultsDB(tmp_path / "results.sqlite") as db:
            db.open_run("farm", settings)
            outcome = run_on_ray(db, "farm", jobs, FarmOptions(address=address),
                                 on_phones=lambda slots: seen_phones.append(len(slots)))
            results = db.results("farm")
        killer.join(5)

    assert killed, "no farm cell was ever seen running, so none could be killed"
    assert seen_phones and seen_phones[0] == 2
    assert outcome.total == 8 and outcome.ran == 8 and outcome.errors == 0, [r.error for r in results][:2]
    assert len(results) == 8
    assert len({r.key + (r.planner,) for r in results}) == 8, "a cell was recorded twice"
    assert all(r.error is None for r in results), [r.error for r in results]
    assert all(r.success for r in results), [(r.task_id, r.seed, r.note) for r in results]
    # both phones did work: each result names the phone it ran on
    phones = {r.note.rsplit("[", 1)[-1] for r in results}
    assert len(phones) == 2, phones
    report = render_markdown(ReportInput(title="farm", results=results, settings=settings))
    assert "8 episodes" in report
    assert "| zeroshot- | 100.0 | 100.0 | 100.0 |" in report  # pass@1, pass@3, pass@4


def test_without_the_extra_or_a_cluster_the_driver_says_what_to_do(tmp_path: Path) -> None:
    from evaluation.farm.driver import FarmError, FarmOptions, run_on_ray

    with ResultsDB(tmp_path / "r.sqlite") as db:
        db.open_run("x", {})
        with pytest.raises(FarmError, match="nothing answers .* farm serve"):
            run_on_ray(db, "x", plan_jobs(["zeroshot-"], ["t"], 1, ["none"], {}),
                       FarmOptions(address=f"127.0.0.1:{free_port()}"))
