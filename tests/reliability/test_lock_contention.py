"""Item 1: a step that cannot be stored is never reported as done.  Another real process
holds the database with ``BEGIN EXCLUSIVE`` while ``tapwise run`` works: a short hold is
waited out and every step is stored; a hold longer than ``--db-wait`` stops the run with
a clear message and exit status 3, and the steps it printed as done are exactly the
steps stored."""

from __future__ import annotations

import subprocess
import sys

import pytest

from agent.types import EpisodeStatus
from app.storage import Store, StoreBusy
from tests.reliability.support import alternating, cli_env, done_lines, lock_held, run_args, scripted, tapwise


def _episodes(db) -> list:
    with Store(db) as store:
        return [store.load_episode(r["id"]) for r in store.list_episodes()]


def test_a_short_lock_is_waited_out_and_every_printed_step_is_stored(tmp_path):
    db = tmp_path / "t.sqlite"
    Store(db).close()
    with scripted(alternating("scroll down", "scroll up")) as llm, lock_held(db, 4):
        out = tapwise(*run_args(llm.url, steps=5, db=db), "--db-wait", "60")
    assert "Traceback" not in out.stdout + out.stderr
    assert out.returncode == 1, out.stdout[-2000:]  # the step budget ran out: failed
    (episode,) = _episodes(db)
    assert done_lines(out.stdout) == len(episode.steps) == 5
    assert episode.status is EpisodeStatus.FAILED


def test_a_lock_held_past_the_wait_stops_the_run_with_exit_3_and_nothing_printed_is_lost(tmp_path):
    db = tmp_path / "t.sqlite"
    Store(db).close()
    with scripted(alternating("scroll down", "scroll up", delay_s=0.7)) as llm:
        proc = subprocess.Popen([sys.executable, "-m", "app.cli", *run_args(llm.url, steps=8, db=db),
                                 "--db-wait", "2"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                env=cli_env(), stdin=subprocess.DEVNULL)
        assert proc.stdout is not None
        lines: list[str] = []
        for line in proc.stdout:  # take the lock once step 3 is under way
            lines.append(line)
            if line.strip().startswith("─") and "step 3" in line:
                break
        with lock_held(db, 60):
            rest, _ = proc.communicate(timeout=120)
        output = "".join(lines) + rest
    assert proc.returncode == 3, output[-2000:]
    assert "Traceback" not in output
    assert "could not be stored" in output and "locked" in output
    (episode,) = _episodes(db)
    assert done_lines(output) == len(episode.steps) == 2, "every step printed as done is stored, and no other"
    assert episode.status is not EpisodeStatus.RUNNING


def test_the_store_waits_retries_and_then_raises_store_busy(tmp_path):
    db = tmp_path / "t.sqlite"
    store = Store(db, busy_timeout_s=0.3, write_retries=1)
    from agent.types import Episode

    with lock_held(db, 30), pytest.raises(StoreBusy, match="locked by another program"):
        store.begin_episode(Episode(goal="g"))
    store.close()


def test_forgetting_a_decision_or_a_map_waits_out_a_lock_like_storing_one(tmp_path):
    """Deletes go through the store's locked, retried write: a short hold by another
    process is waited out; a long one ends in ``StoreBusy``'s message, not sqlite's error."""
    from agent.macros.recorder import Observation, make_step
    from agent.memory.types import Remembered
    from agent.types import Action
    from app.knowledge_store import SqliteKnowledgeStore
    from tests.agent.screens import settings_parse

    db = tmp_path / "t.sqlite"
    step = make_step(Action.tap(540, 300), Observation(settings_parse(), None, "com.android.settings"))
    store = Store(db, busy_timeout_s=0.5, write_retries=10)
    ks = SqliteKnowledgeStore(store)
    first, second = (Remembered(g, "com.android.settings", "abc", step) for g in ("Turn off Wi-Fi", "Open Display"))
    ks.save_decision(first)
    ks.save_decision(second)
    ks.save_app_map("com.android.settings", {"package": "com.android.settings"})
    with lock_held(db, 1):
        ks.delete_decision(first.id)
        ks.delete_app_map("com.android.settings")
    assert [d.id for d in ks.decisions()] == [second.id] and ks.app_map_packages() == []
    store.close()
    impatient = Store(db, busy_timeout_s=0.3, write_retries=1)
    with lock_held(db, 30), pytest.raises(StoreBusy, match="locked by another program"):
        SqliteKnowledgeStore(impatient).delete_decision(second.id)
    impatient.close()
