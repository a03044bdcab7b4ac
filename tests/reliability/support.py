"""Helpers for the fault-injection suite: the real ``tapwise`` CLI run as a subprocess
against the scripted model server (real loopback HTTP), and a second process that holds
the database with ``BEGIN EXCLUSIVE``."""

from __future__ import annotations

import itertools
import os
import re
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from evaluation.scripted_model import Reply, ScriptedLLMServer

REPO = Path(__file__).resolve().parents[2]
MODEL = "scripted-model:latest"

#: Replies that name points off any screen (infinite, NaN, negative, huge, not numbers):
#: the action parser must refuse every one (the test and bench/bench_reliability.py).
HOSTILE = [
    '{"action_type":"click","x":Infinity,"y":1e999}',
    '{"action_type":"click","x":-Infinity,"y":5}',
    '{"action_type":"click","x":NaN,"y":5}',
    '{"action_type":"click","x":-50,"y":-7}',
    '{"action_type":"click","x":99999,"y":123456}',
    '{"action_type":"long_press","x":1e308,"y":1e308}',
    '{"action_type":"input_text","text":"hi","x":-1,"y":10}',
    '{"action_type":"click","x":"1e999","y":"2"}',
    '{"action_type":"click","x":true,"y":false}',
    "tap (-50, -7)",
    "tap at (99999, 123456)",
    "Action: tap (-1000000000000, 10000000000000000000000000000000000000000)",
]


def cli_env(**extra: str) -> dict[str, str]:
    """The test's environment (its own config and data folders, see tests/conftest.py)
    with the repository importable."""
    path = os.pathsep.join(p for p in (os.environ.get("PYTHONPATH", ""), str(REPO)) if p)
    env = {**os.environ, "PYTHONPATH": path, "COLUMNS": "200", "NO_COLOR": "1", "TERM": "dumb"}
    env.update(extra)
    return env


def tapwise(*args: str, input: str | None = "", timeout: float = 180, prefix: tuple[str, ...] = (),
            **env: str) -> subprocess.CompletedProcess[str]:
    """Run ``tapwise ARGS`` (``python -m app.cli``) and wait for it."""
    return subprocess.run([*prefix, sys.executable, "-m", "app.cli", *args], capture_output=True, text=True,
                          input=input, timeout=timeout, cwd=REPO, env=cli_env(**env))


def run_args(url: str, goal: str = "look around", *extra: str, steps: int = 4, db: Path | None = None) -> list[str]:
    """Arguments for an auto-mode ``tapwise run`` on the virtual phone against ``url``."""
    args = ["run", goal, "--mode", "auto", "--planner", "zeroshot-", "--backend", "ollama", "--model", MODEL,
            "--base-url", url, "--max-steps", str(steps), "--parse", "tree", "--no-llm-grounder"]
    if db is not None:
        args += ["--db", str(db)]
    return [*args, *extra]


def alternating(*texts: str, delay_s: float = 0.0) -> Callable[[str], Reply]:
    """A responder answering every prompt with the next of ``texts``, round and round."""
    cycle = itertools.cycle(texts)
    return lambda prompt: Reply(next(cycle), delay_s=delay_s)


@contextmanager
def scripted(responder: Callable[[str], Reply]) -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer(responder=responder) as server:
        yield server


HOLDER = textwrap.dedent(
    """
    import sqlite3, sys, time
    conn = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)
    conn.execute("BEGIN EXCLUSIVE")
    print("locked", flush=True)
    time.sleep(float(sys.argv[2]))
    conn.execute("COMMIT")
    print("released", flush=True)
    """
)


@contextmanager
def lock_held(db: Path, seconds: float) -> Iterator[subprocess.Popen[str]]:
    """Another process holds ``db`` with ``BEGIN EXCLUSIVE`` for ``seconds`` (from when
    this returns); it is killed on exit if still running."""
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(db), str(seconds)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.strip() == "locked", f"the lock holder did not start: {line!r}"
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(10)


def done_lines(stdout: str) -> int:
    """How many steps the CLI printed as done (a line may start with the answered prompt)."""
    return len(re.findall(r"(?m)(?:^|\(a\): )done: ", stdout))
