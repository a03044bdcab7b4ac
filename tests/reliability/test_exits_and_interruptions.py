"""Items 6 and 9: how ``tapwise run`` ends is its exit status (succeeded 0, failed or
impossible 1, error 2, steps not stored 3, interrupted 130), checked on the real CLI as a
subprocess; and a run whose process is killed, interrupted (Ctrl-C) or loses its
terminal input at an approval prompt is stored as ``interrupted`` with the time of its
last step, never left ``running``."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

from agent.types import EpisodeStatus
from app.storage import Store
from tests.reliability.support import alternating, cli_env, done_lines, run_args, scripted, tapwise


def _only_episode(db):
    with Store(db) as store:
        (row,) = store.list_episodes()
        return store.load_episode(row["id"])


@pytest.mark.parametrize("replies, code, status", [
    (("done",), 0, EpisodeStatus.SUCCEEDED),
    (("scroll down", "scroll up"), 1, EpisodeStatus.FAILED),
    (("impossible",), 1, EpisodeStatus.IMPOSSIBLE),
    (("I cannot read this screen at all",), 2, EpisodeStatus.ERROR),
])
def test_the_exit_status_says_how_the_run_ended(tmp_path, replies, code, status):
    db = tmp_path / "t.sqlite"
    with scripted(alternating(*replies)) as llm:
        out = tapwise(*run_args(llm.url, steps=3, db=db))
    assert out.returncode == code, out.stdout[-2000:] + out.stderr[-2000:]
    assert _only_episode(db).status is status


def test_quitting_at_the_approval_prompt_exits_130(tmp_path):
    db = tmp_path / "t.sqlite"
    with scripted(alternating("scroll down")) as llm:
        args = run_args(llm.url, steps=3, db=db)
        args[args.index("auto")] = "approve"
        out = tapwise(*args, input="q\n")
    assert out.returncode == 130, out.stdout[-2000:]
    assert _only_episode(db).status is EpisodeStatus.ABORTED


def test_input_ending_at_the_approval_prompt_is_an_interrupted_run(tmp_path):
    db = tmp_path / "t.sqlite"
    with scripted(alternating("scroll down", "scroll up")) as llm:
        args = run_args(llm.url, steps=5, db=db)
        args[args.index("auto")] = "approve"
        out = tapwise(*args, input="a\na\n")  # two approvals, then the input ends
    assert out.returncode == 130, out.stdout[-2000:]
    assert "Traceback" not in out.stdout + out.stderr
    episode = _only_episode(db)
    assert episode.status is EpisodeStatus.INTERRUPTED
    assert len(episode.steps) == done_lines(out.stdout) == 2
    assert episode.finished_at == max(s.finished_at for s in episode.steps)
    assert "interrupted" in episode.note


def _start_and_wait_for_step(db, url, step: int) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([sys.executable, "-m", "app.cli", *run_args(url, steps=200, db=db)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=cli_env(PYTHONUNBUFFERED="1"),  # each step's lines arrive as printed, not at exit
                            stdin=subprocess.DEVNULL)
    assert proc.stdout is not None
    seen = []
    for line in proc.stdout:
        seen.append(line)
        if line.strip().startswith("─") and f"step {step}" in line:
            break
    return proc, "".join(seen)


def test_ctrl_c_stores_the_run_as_interrupted_and_exits_130(tmp_path):
    db = tmp_path / "t.sqlite"
    with scripted(alternating("scroll down", "scroll up", delay_s=0.5)) as llm:
        proc, seen = _start_and_wait_for_step(db, llm.url, 3)
        proc.send_signal(signal.SIGINT)
        rest, _ = proc.communicate(timeout=60)
    assert proc.returncode == 130, (seen + rest)[-2000:]
    episode = _only_episode(db)
    assert episode.status is EpisodeStatus.INTERRUPTED
    assert len(episode.steps) == done_lines(seen + rest)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # the drop is the point
def test_a_ctrl_c_that_python_drops_in_a_finalizer_is_raised_again_at_the_runs_next_event():
    from app.cli.run import _CtrlC

    class RaisesInFinalizer:
        def __del__(self) -> None:
            signal.raise_signal(signal.SIGINT)  # Python prints the interrupt as ignored here

    ctrl_c = _CtrlC()
    try:
        RaisesInFinalizer()
        with pytest.raises(KeyboardInterrupt):
            ctrl_c.check()
    finally:
        ctrl_c.restore()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_killed_run_is_marked_interrupted_at_the_next_start_with_its_last_step_time(tmp_path):
    db = tmp_path / "t.sqlite"
    with scripted(alternating("scroll down", "scroll up", delay_s=0.3)) as llm:
        proc, seen = _start_and_wait_for_step(db, llm.url, 4)
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    episode = _only_episode(db)  # opening the store is the next start
    assert episode.status is EpisodeStatus.INTERRUPTED
    assert len(episode.steps) >= done_lines(seen) == 3
    assert episode.finished_at == max(s.finished_at for s in episode.steps)
    assert f"pid {proc.pid}" in episode.note


def test_the_episodes_listing_says_a_killed_run_was_interrupted(tmp_path):
    from app.settings import load_settings

    db = load_settings()[0].database_path
    with scripted(alternating("scroll down", "scroll up", delay_s=0.3)) as llm:
        proc, _ = _start_and_wait_for_step(db, llm.url, 2)
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    out = tapwise("episodes")
    assert out.returncode == 0, out.stderr
    assert "interrupted" in out.stdout and f"pid {proc.pid}" in out.stdout


def test_a_run_whose_process_is_alive_is_left_running(tmp_path):
    from agent.types import Episode

    db = tmp_path / "t.sqlite"
    runner = Store(db)
    episode = Episode(goal="still going")
    runner.begin_episode(episode)
    with Store(db) as other:  # another window or command opening the database meanwhile
        assert other.load_episode(episode.id).status is EpisodeStatus.RUNNING
    runner.finish_episode(episode.id, EpisodeStatus.SUCCEEDED)
    runner.close()
    with Store(db) as again:
        assert again.load_episode(episode.id).status is EpisodeStatus.SUCCEEDED, "a finished run stays finished"
