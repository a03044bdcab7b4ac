"""Reliability benchmark: nothing lost, nothing crashes (issue 28), in one run.

    .venv/bin/python bench/bench_reliability.py                      # everything
    .venv/bin/python bench/bench_reliability.py --kills 5 --parse-limit 30   # shorter

Prints four tables, each from the real ``tapwise`` CLI run as a subprocess against the
scripted model server (real loopback HTTP; ``evaluation.scripted_model``) on the
virtual phone:

* SIGKILL soak: ``--kills`` runs, each killed (SIGKILL) after a random number of printed
  steps; per kill the steps printed as done, the steps stored, whether the stored run is
  marked ``interrupted`` at the next start, and SQLite's ``integrity_check``.
* Lock contention: another process holds the database with ``BEGIN EXCLUSIVE`` while a
  run works: a hold shorter than ``--db-wait`` (the run waits, every step is stored) and
  one longer (the run stops with exit status 3); steps reported vs stored must be equal.
* Hostile replies: every reply of ``HOSTILE`` read by the action parser (handled = a
  clear ``CommandError``), and a run fed only such replies (handled = no traceback, no
  tap executed, the episode closed, a non-zero exit).
* Parse time: ``vision.pipeline.ScreenParser`` in tree and auto mode on generated
  accessibility trees of 2k / 20k / 50k nodes, each in its own process with a time limit
  (``--parse-limit``); wall seconds and peak memory, or "not done" at the limit.

The machine may be shared: wall times depend on its load (the 1-minute load average is
printed).  Timings are figures, never pass/fail; the correctness columns are.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agent.commands import CommandError, parse_lenient  # noqa: E402
from agent.types import EpisodeStatus  # noqa: E402
from app.storage import Store  # noqa: E402
from tests.reliability.support import (  # noqa: E402
    HOSTILE,
    alternating,
    cli_env,
    done_lines,
    lock_held,
    run_args,
    scripted,
)
from vision.geometry import Size  # noqa: E402

CLI_HOSTILE = HOSTILE[:2] + HOSTILE[3:5]


def _say(text: str = "") -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def _popen_run(url: str, db: Path, steps: int, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "app.cli", *run_args(url, steps=steps, db=db), *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=cli_env(),
                            stdin=subprocess.DEVNULL, cwd=ROOT)


def soak(kills: int, seed: int) -> None:
    rng = random.Random(seed)
    _say(f"== SIGKILL soak: {kills} runs killed mid-run")
    _say(f"{'kill':>4} {'printed':>7} {'stored':>6} {'marked':>12} {'integrity':>9}")
    lost = bad = unmarked = 0
    with tempfile.TemporaryDirectory() as tmp, scripted(alternating("scroll down", "scroll up", delay_s=0.15)) as llm:
        db = Path(tmp) / "soak.sqlite"
        for k in range(1, kills + 1):
            target = rng.randint(1, 6)
            proc = _popen_run(llm.url, db, 50)
            assert proc.stdout is not None
            out = []
            for line in proc.stdout:
                out.append(line)
                if done_lines("".join(out)) >= target:
                    break
            time.sleep(rng.uniform(0.0, 0.3))  # land anywhere in the next step
            proc.send_signal(signal.SIGKILL)
            proc.wait(30)
            printed = done_lines("".join(out))
            with Store(db) as store:  # the next start
                row = store.list_episodes(1)[0]
                episode = store.load_episode(row["id"])
                integrity = store.integrity_check()
            stored = sum(1 for s in episode.steps if s.executed is not None)
            lost += stored < printed
            bad += integrity != "ok"
            unmarked += episode.status is not EpisodeStatus.INTERRUPTED
            _say(f"{k:>4} {printed:>7} {stored:>6} {episode.status.value:>12} {integrity:>9}")
    _say(f"kills {kills}: runs that lost a printed step {lost}; damaged databases {bad}; "
         f"left unmarked {unmarked}")


def contention(db_wait: float) -> None:
    _say("\n== lock contention: another process holds BEGIN EXCLUSIVE during a run")
    _say(f"{'when':>10} {'hold':>6} {'db-wait':>7} {'exit':>4} {'reported':>8} {'stored':>6} {'equal':>5}")
    # the case last: a 30 s hold during an 8-step run, with the default --db-wait (30 s)
    cases = [("before run", 0.5 * db_wait, 6, db_wait), ("mid-run", 0.5 * db_wait, 8, db_wait),
             ("mid-run", 10 * db_wait, 8, db_wait), ("mid-run", 30.0, 8, 30.0)]
    with scripted(alternating("scroll down", "scroll up", delay_s=0.5)) as llm:
        for when, hold, steps, db_wait in cases:
            with tempfile.TemporaryDirectory() as tmp:
                db = Path(tmp) / "t.sqlite"
                Store(db).close()
                if when == "before run":
                    with lock_held(db, hold):
                        proc = _popen_run(llm.url, db, steps, "--db-wait", str(db_wait))
                        out, _ = proc.communicate(timeout=600)
                else:
                    proc = _popen_run(llm.url, db, steps, "--db-wait", str(db_wait))
                    assert proc.stdout is not None
                    seen = []
                    for line in proc.stdout:
                        seen.append(line)
                        if line.strip().startswith("─") and "step 3" in line:
                            break
                    with lock_held(db, hold):
                        rest, _ = proc.communicate(timeout=600)
                    out = "".join(seen) + rest
                with Store(db) as store:
                    rows = store.list_episodes()
                    stored = len(store.load_episode(rows[0]["id"]).steps) if rows else 0
                reported = done_lines(out)
                _say(f"{when:>10} {f'{hold:.0f} s':>6} {f'{db_wait:.0f} s':>7} {proc.returncode:>4} {reported:>8} "
                     f"{stored:>6} {'yes' if reported == stored else 'NO':>5}")


def hostile() -> None:
    _say("\n== hostile replies")
    handled = 0
    for reply in HOSTILE:
        try:
            parse_lenient(reply, Size(1080, 2400))
        except CommandError:
            handled += 1
        except Exception as exc:  # what the benchmark counts as not handled
            _say(f"  not handled: {reply!r}: {type(exc).__name__}: {exc}")
    _say(f"parser: handled {handled} / tried {len(HOSTILE)}")
    handled = 0
    for mode in ("--free", "--constrained"):
        for reply in CLI_HOSTILE:
            with tempfile.TemporaryDirectory() as tmp, scripted(alternating(reply)) as llm:
                db = Path(tmp) / "t.sqlite"
                proc = _popen_run(llm.url, db, 5, mode)
                out, _ = proc.communicate(timeout=300)
                with Store(db) as store:
                    episode = store.load_episode(store.list_episodes()[0]["id"])
                ok = ("Traceback" not in out and done_lines(out) == 0 and proc.returncode != 0
                      and episode.status is not EpisodeStatus.RUNNING
                      and all(s.executed is None for s in episode.steps))
                handled += ok
                if not ok:
                    _say(f"  not handled ({mode}): {reply!r}: exit {proc.returncode}")
    _say(f"runs: handled {handled} / tried {2 * len(CLI_HOSTILE)} (no traceback, nothing tapped, episode closed, "
         "non-zero exit)")


PARSE = """
import resource, sys, time
import numpy as np
sys.path.insert(0, {root!r})
from tests.reliability.trees import big_tree
from vision.config import PipelineConfig
from vision.pipeline import ScreenParser
from vision.types import Screen
xml = big_tree({nodes})
parser = ScreenParser(PipelineConfig(mode={mode!r}))
image = np.full((2400, 1080, 3), 255, np.uint8)
t0 = time.perf_counter()
parse = parser.parse(Screen(image, hierarchy_xml=xml))
print(f"{{time.perf_counter() - t0:.2f}} {{len(parse.elements)}} "
      f"{{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f}}")
"""


def parse_times(sizes: list[int], modes: list[str], limit: float) -> None:
    _say(f"\n== parse time on generated trees (limit {limit:g} s each; load average {os.getloadavg()[0]:.1f})")
    _say(f"{'nodes':>7} {'mode':>5} {'seconds':>9} {'elements':>8} {'peak MB':>7}")
    for nodes in sizes:
        for mode in modes:
            code = PARSE.format(root=str(ROOT), nodes=nodes, mode=mode)
            try:
                done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=limit,
                                      cwd=ROOT)
            except subprocess.TimeoutExpired:
                _say(f"{nodes:>7} {mode:>5} {'> ' + format(limit, 'g'):>9} {'not done':>8}")
                continue
            if done.returncode != 0:
                _say(f"{nodes:>7} {mode:>5} failed: {done.stderr.strip().splitlines()[-1:]}")
                continue
            seconds, elements, peak = done.stdout.split()
            _say(f"{nodes:>7} {mode:>5} {seconds:>9} {elements:>8} {peak:>7}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kills", type=int, default=20)
    ap.add_argument("--db-wait", type=float, default=4.0)
    ap.add_argument("--parse-limit", type=float, default=120.0)
    ap.add_argument("--sizes", default="2000,20000,50000")
    ap.add_argument("--modes", default="tree,auto")
    ap.add_argument("--seed", type=int, default=28)
    ap.add_argument("--only", choices=("soak", "lock", "hostile", "parse"))
    args = ap.parse_args()
    sqlite3.connect(":memory:").close()
    started = time.time()
    _say(f"bench_reliability: python {sys.version.split()[0]}, {os.cpu_count()} CPUs, "
         f"load average {os.getloadavg()[0]:.1f}")
    if args.only in (None, "soak"):
        soak(args.kills, args.seed)
    if args.only in (None, "lock"):
        contention(args.db_wait)
    if args.only in (None, "hostile"):
        hostile()
    if args.only in (None, "parse"):
        parse_times([int(s) for s in args.sizes.split(",")], args.modes.split(","), args.parse_limit)
    _say(f"\ntotal {time.time() - started:.0f} s")


if __name__ == "__main__":
    main()
