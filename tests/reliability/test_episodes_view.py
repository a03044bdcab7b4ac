"""Item 6 in the window: the Episodes view says a run was interrupted and when its last
step was (rows as ``Store.list_episodes`` gives them, after a killed run)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

pytest.importorskip("PySide6")

from app.storage import Store
from tests.reliability.support import alternating, cli_env, run_args, scripted

pytestmark = pytest.mark.gui


def test_the_episodes_view_shows_a_killed_run_as_interrupted_with_its_last_step(qtbot, tmp_path):
    from widgets.episodes_panel import EpisodesPanel

    db = tmp_path / "t.sqlite"
    with scripted(alternating("scroll down", "scroll up", delay_s=0.3)) as llm:
        proc = subprocess.Popen([sys.executable, "-m", "app.cli", *run_args(llm.url, "walk the list", steps=20, db=db)],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=cli_env(),
                                stdin=subprocess.DEVNULL)
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith("done:"):
                break
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(30)
    with Store(db) as store:
        rows = store.list_episodes()
    panel = EpisodesPanel()
    qtbot.addWidget(panel)
    panel.set_episodes(rows)
    item = panel.tree.topLevelItem(0)
    assert item is not None
    last = time.strftime("%H:%M", time.localtime(rows[0]["finished_at"]))
    assert item.text(1).startswith("interrupted") and last in item.text(1)
    assert "interrupted" in item.toolTip(1) and f"pid {proc.pid}" in item.toolTip(1)
    if os.environ.get("TAPWISE_SHOTS"):
        panel.resize(1024, 300)
        panel.grab().save(os.environ["TAPWISE_SHOTS"])
