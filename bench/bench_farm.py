"""Device-farm scaling: the same benchmark cells on 1 and on 2 farm phones, one run.

For each phone count N it starts `tapwise farm serve --phones N --loopback` (N served
virtual phones in their own processes, a Ray head on loopback, an isolated adb server),
runs the same cells through `run_on_ray` against a scripted model server over HTTP, and
prints the wall time; then the ratio.  The cells are `zeroshot-` on the two "open the
network settings" tasks of the benchmark tests, seeds 0..S-1 (16 cells by default).

    .venv/bin/python bench/bench_farm.py [--cells 16] [--phones 1,2]
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evaluation.farm.driver import FarmOptions, run_on_ray  # noqa: E402
from evaluation.online import plan_jobs  # noqa: E402
from evaluation.results import ResultsDB  # noqa: E402
from phone.ports import free_port  # noqa: E402
from tests.evaluation.scripted_llm import GOOD_TASK, SECOND_TASK, scripted_server  # noqa: E402


def start_farm(phones: int, env: dict[str, str]) -> tuple[subprocess.Popen[str], str]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "farm", "serve", "--phones", str(phones), "--loopback", "--port", str(port),
         "--base-port", "0", "--no-adb-phones", "--num-cpus", "2"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True, cwd=ROOT,
    )
    ready = threading.Event()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith("farm ready"):
                ready.set()

    threading.Thread(target=read, daemon=True).start()
    if not ready.wait(180):
        os.killpg(proc.pid, signal.SIGKILL)
        raise SystemExit("farm serve did not get ready in 180 s")
    return proc, f"127.0.0.1:{port}"


def stop_farm(proc: subprocess.Popen[str]) -> None:
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cells", type=int, default=16, help="cells per measurement (even)")
    ap.add_argument("--phones", default="1,2", help="phone counts to measure")
    args = ap.parse_args()
    counts = [int(x) for x in args.phones.split(",")]
    work = Path(tempfile.mkdtemp(prefix="bench-farm-"))
    home = work / "home"
    home.mkdir()
    adb_port = free_port()
    env = dict(os.environ, HOME=str(home), ANDROID_ADB_SERVER_PORT=str(adb_port), RAY_AUTH_MODE="disabled",
               TMPDIR=str(home), PYTHONUNBUFFERED="1")
    os.environ.update(ANDROID_ADB_SERVER_PORT=str(adb_port), RAY_AUTH_MODE="disabled")
    subprocess.run(["adb", "start-server"], env=env, check=True, capture_output=True)
    tasks = work / "tasks"
    tasks.mkdir()
    (tasks / "a.yaml").write_text(GOOD_TASK)
    (tasks / "b.yaml").write_text(SECOND_TASK)
    walls: dict[int, float] = {}
    try:
        with scripted_server() as fake:
            settings = {"tasks_source": str(tasks), "model": "fake-model:latest", "base_url": fake.url,
                        "backend": "ollama", "max_steps": 6}
            jobs = plan_jobs(["zeroshot-"], ["t.network_page", "t.network_page_again"], args.cells // 2,
                             ["none"], settings)
            for n in counts:
                proc, address = start_farm(n, env)
                try:
                    with ResultsDB(work / f"r{n}.sqlite") as db:
                        db.open_run("bench", settings)
                        t0 = time.perf_counter()
                        out = run_on_ray(db, "bench", jobs, FarmOptions(address=address))
                        walls[n] = time.perf_counter() - t0
                        ok = sum(r.success for r in db.results("bench"))
                    print(f"{n} phone(s): {len(jobs)} cells in {walls[n]:.1f} s "
                          f"({out.errors} errors, {ok} successes)", flush=True)
                finally:
                    stop_farm(proc)
                    import ray

                    if ray.is_initialized():
                        ray.shutdown()
    finally:
        subprocess.run(["adb", "kill-server"], env=env, capture_output=True)
        shutil.rmtree(work, ignore_errors=True)
    if len(walls) >= 2:
        a, b = counts[0], counts[1]
        print(f"speed-up {a} -> {b} phones: {walls[a] / walls[b]:.2f}x (wall {walls[a]:.1f} s / {walls[b]:.1f} s)")


if __name__ == "__main__":
    main()
