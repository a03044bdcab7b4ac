"""The SQLite store keeps every step the moment it happens and refuses bad databases
without touching them."""

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from agent.macros.types import Macro, MacroStep
from agent.types import (
    Action,
    Decision,
    DecisionKind,
    Episode,
    EpisodeStatus,
    Proposal,
    Step,
)
from app.storage import Store, StoreCorrupt, StoreTooNew
from app.store_schema import SCHEMA_VERSION
from vision.types import Screen


def _screen(value: int = 30) -> Screen:
    img = np.full((64, 32, 3), value, dtype=np.uint8)
    img[5:10, 5:10] = (255, 0, 0)
    return Screen(image=img)


def test_episode_written_step_by_step_reads_back(tmp_path):
    store = Store(tmp_path / "t.sqlite")
    ep = Episode(goal="turn off data roaming", planner="zeroshot+")
    store.begin_episode(ep)
    stored = []
    for i in range(3):
        step = Step(
            index=i,
            proposal=Proposal(Action.tap(10 * i, 20)),
            decision=Decision(DecisionKind.APPROVE),
            executed=Action.tap(10 * i, 20),
        )
        stored.append(store.append_step(ep.id, step, _screen(i)))
    store.finish_episode(ep.id, EpisodeStatus.SUCCEEDED, "done")
    back = Store(tmp_path / "t.sqlite").load_episode(ep.id)
    assert back.goal == ep.goal
    assert back.status is EpisodeStatus.SUCCEEDED
    assert back.steps == tuple(stored)
    assert all(s.screenshot is not None for s in back.steps)


def test_screenshots_live_beside_the_database_with_their_hash(tmp_path):
    store = Store(tmp_path / "t.sqlite")
    ep = Episode(goal="g")
    store.begin_episode(ep)
    step = store.append_step(ep.id, Step(index=0), _screen())
    assert (tmp_path / "t-media" / step.screenshot.path).exists()
    again = store.load_screenshot(step.screenshot)
    assert np.array_equal(again.image, _screen().image)
    (tmp_path / "t-media" / step.screenshot.path).write_bytes(b"tampered")
    with pytest.raises(Exception, match="hash"):
        store.load_screenshot(step.screenshot)


def test_database_uses_wal(tmp_path):
    store = Store(tmp_path / "t.sqlite")
    assert store.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


WRITER = textwrap.dedent(
    """
    import sys, time
    import numpy as np
    from agent.types import Action, Episode, Step
    from app.storage import Store
    from vision.types import Screen
    store = Store(sys.argv[1])
    ep = Episode(goal="killed mid-episode", id="ep-killed")
    store.begin_episode(ep)
    i = 0
    while True:
        store.append_step(ep.id, Step(index=i, executed=Action.tap(i, i)),
                          Screen(image=np.full((16, 16, 3), i % 255, dtype=np.uint8)))
        print(i, flush=True)
        i += 1
        time.sleep(0.02)
    """
)


def test_steps_survive_a_killed_process(tmp_path):
    db = tmp_path / "killed.sqlite"
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(db)], stdout=subprocess.PIPE, text=True, cwd=os.getcwd()
    )
    try:
        reported = -1
        deadline = time.time() + 60
        while reported < 5 and time.time() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            reported = int(line)
        assert reported >= 5, "the writer did not get going"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    ep = Store(db).load_episode("ep-killed")
    assert ep.status is EpisodeStatus.INTERRUPTED, "a run whose process is gone is marked interrupted on open"
    assert ep.finished_at == max(s.finished_at for s in ep.steps), "with the time of its last step"
    assert len(ep.steps) >= reported + 1, "a step reported as written was lost"
    assert [s.index for s in ep.steps] == list(range(len(ep.steps)))


def test_a_file_that_is_not_a_database_is_refused_and_left_untouched(tmp_path):
    path = tmp_path / "t.sqlite"
    path.write_bytes(b"this is not sqlite at all" * 10)
    before = path.read_bytes()
    with pytest.raises(StoreCorrupt, match="left untouched"):
        Store(path)
    assert path.read_bytes() == before


def test_a_damaged_database_is_refused_and_left_untouched(tmp_path):
    path = tmp_path / "t.sqlite"
    store = Store(path)
    ep = Episode(goal="g")
    store.begin_episode(ep)
    store.close()
    data = bytearray(path.read_bytes())
    data[100:4096] = b"\xff" * (4096 - 100)  # wreck the schema page
    path.write_bytes(bytes(data))
    with pytest.raises(StoreCorrupt):
        Store(path)
    assert path.read_bytes() == bytes(data)


def test_a_database_from_a_newer_tapwise_is_refused_without_changes(tmp_path):
    path = tmp_path / "t.sqlite"
    Store(path).close()
    conn = sqlite3.connect(path)
    conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", [str(SCHEMA_VERSION + 5)])
    conn.commit()
    conn.close()
    with pytest.raises(StoreTooNew, match="Upgrade Tapwise"):
        Store(path)
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT value FROM meta").fetchone()[0] == str(SCHEMA_VERSION + 5)


def test_an_old_database_is_migrated_forward_keeping_its_data(tmp_path):
    path = tmp_path / "t.sqlite"
    store = Store(path)
    ep = Episode(goal="kept across migration")
    store.begin_episode(ep)
    store.db.execute("DROP TABLE task_repository")
    store.db.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    store.db.conn.commit()
    store.close()
    store = Store(path)
    assert store.schema_version() == SCHEMA_VERSION
    assert "task_repository" in store.db.table_names()
    assert store.load_episode(ep.id).goal == "kept across migration"


def test_macros_keep_every_version(tmp_path):
    store = Store(tmp_path / "t.sqlite")
    m1 = store.save_macro(Macro(name="roaming off", steps=(MacroStep(Action.tap(1, 1), "tap Network"),)))
    m2 = store.save_macro(Macro(name="roaming off", id=m1.id, steps=(MacroStep(Action.tap(2, 2), "tap Network & internet"),)))
    assert (m1.version, m2.version) == (1, 2)
    assert store.macro_versions(m1.id) == [1, 2]
    assert store.load_macro(m1.id).steps[0].description == "tap Network & internet"
    assert store.load_macro(m1.id, 1).steps[0].description == "tap Network"
    assert store.find_macro("roaming off").version == 2
    assert store.list_macros()[0]["version"] == 2


def test_missing_episode_is_a_key_error_naming_it(tmp_path):
    with pytest.raises(KeyError, match="nope"):
        Store(tmp_path / "t.sqlite").load_episode("nope")
