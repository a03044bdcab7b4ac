"""Automatic exploration on the window's own virtual phone, the served one (its own
process, reached through Debian's adb like a phone on a cable): every app is explored on
a second served phone of the same configuration, never on the phone the user sees, and
the second phone's process ends once every app has its map."""

from __future__ import annotations

import pytest

import tests.phone_adb.window_over_adb as over_adb
from agent.knowledge.explore import ExploreBudget
from app.gui.devices import VIRTUAL_CHOICE
from app.gui.main import build_window
from app.settings import AgentSettings, DeviceSettings, Settings, VisionSettings
from phone.virtual.launcher import LaunchedDevice

pytestmark = [*over_adb.MARKS, pytest.mark.slow]


def test_the_served_virtual_phone_is_mapped_on_a_twin_and_never_touched(qtbot, adb_env, tmp_path):
    from agent.knowledge.guide import AppMaps
    from agent.knowledge.map_language import LanguageMaps
    from app.knowledge_store import SqliteKnowledgeStore

    settings = Settings(data_dir=tmp_path, device=DeviceSettings(virtual_phone="process"),
                        vision=VisionSettings(use_hierarchy="only"), agent=AgentSettings(explore_automatically=True))
    win = build_window(settings, "sim", discover=False, live_parse=False)
    qtbot.addWidget(win)
    auto = win.auto_explore
    auto.delay_ms, auto.quiet_ms, auto.budget = 0, 300, ExploreBudget(max_steps=4, max_seconds=60.0)
    win.show()
    win.connect_device(VIRTUAL_CHOICE)
    try:
        qtbot.waitUntil(lambda: win.view.frame is not None, timeout=30000)
        device = win.session.device
        assert isinstance(device, LaunchedDevice)
        qtbot.waitUntil(lambda: auto.running, timeout=60000)
        qtbot.waitUntil(lambda: auto._twin is not None, timeout=60000)
        twin = auto._twin
        assert isinstance(twin, LaunchedDevice) and twin.launched.serial != device.launched.serial
        assert twin.launched.process.pid != device.launched.process.pid
        assert (twin.launched.profile, twin.launched.theme, twin.launched.seed) == \
            (device.launched.profile, device.launched.theme, device.launched.seed)
        qtbot.waitUntil(lambda: "apps mapped (en)" in auto.status.text(), timeout=600000)
        maps = AppMaps(LanguageMaps(SqliteKnowledgeStore(win.session.store()), "en")).all()
        assert len(maps) == 8 and all(m.language == "en" for m in maps)
        twin.launched.process.wait(30)  # every app has its map: the twin's process is ended
        # the phone the user sees was never touched: still on its home screen
        assert "launcher" in win.session.agent_device().foreground()[0]
    finally:
        win.close()
