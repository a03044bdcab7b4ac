"""The window's own virtual phone is a phone: choosing "Virtual phone" starts it in a
process of its own and drives it through Debian's adb, the scrcpy v3 stream and the
uiautomator2 server, exactly as a phone on a cable.  The served phone never shares the
window's interpreter, shows up once in the device box (not again as an adb device),
and ends with the window."""

from __future__ import annotations

import os

import pytest

import tests.phone_adb.window_over_adb as over_adb
from app.gui.devices import VIRTUAL_CHOICE, list_choices, start_early
from app.gui.main import build_window
from app.settings import DeviceSettings, Settings, VisionSettings
from phone.virtual.launcher import LaunchedDevice

pytestmark = over_adb.MARKS


@pytest.fixture
def settings(tmp_path) -> Settings:
    return Settings(data_dir=tmp_path, device=DeviceSettings(virtual_phone="process"),
                    vision=VisionSettings(use_hierarchy="only"))


def test_the_virtual_phone_runs_in_its_own_process_and_is_driven_through_adb(qtbot, adb_env, settings):
    win = build_window(settings, "sim", discover=False, live_parse=False)
    qtbot.addWidget(win)
    win.show()
    win.connect_device(VIRTUAL_CHOICE)
    qtbot.waitUntil(lambda: win.view.frame is not None, timeout=30000)
    device = win.session.device
    assert isinstance(device, LaunchedDevice), "the window must not fall back to the in-process phone"
    process = device.launched.process
    assert process.pid != os.getpid() and process.poll() is None
    assert device.mirror is not None, "frames come from the scrcpy v3 stream"

    # the served phone is listed once: as "Virtual phone", not again as an adb device
    choices, _ = list_choices()
    assert [c.title for c in choices].count(VIRTUAL_CHOICE.title) == 1
    assert not any(c.serial == device.launched.serial for c in choices)

    # input travels to the other process and changes what the mirror shows
    before = win.view.frame.copy()
    screen = device.screenshot(with_hierarchy=True)
    assert "Settings" in (screen.hierarchy_xml or ""), "the hierarchy comes over uiautomator2"
    device.open_app("Settings")
    qtbot.waitUntil(lambda: win.view.frame is not None and (win.view.frame != before).any(), timeout=15000)

    win.close()
    process.wait(15)  # closing the window ends the phone's process
    assert process.poll() is not None


def test_a_phone_started_early_is_taken_by_the_window_or_ended(adb_env, settings):
    from app.gui.devices import DeviceChoice, DeviceOpener

    early = start_early(settings.device, "sim")
    assert early is not None and early.process.poll() is None
    opener = DeviceOpener(early)
    bad = DeviceChoice("nowhere", "A phone that cannot be used", problem="unplugged")
    with pytest.raises(Exception, match="cannot be used"):
        opener(bad, settings.device)
    early.process.wait(10)  # another phone was opened: the early one is ended, not left running
    assert early.process.poll() is not None

    assert start_early(DeviceSettings(virtual_phone="window"), "sim") is None


def test_the_served_phone_judges_its_own_task_over_adb(adb_env):
    from phone.virtual.launcher import launch_device
    from phone.virtual.oracle import judge_for

    device = launch_device()
    try:
        judge = judge_for("Turn off Wi-Fi", device)
        assert judge is not None, "the phone in its own process is still the virtual phone"
        assert judge(None) is False  # Wi-Fi starts on
        from phone.virtual.remote import ServedSimPhone

        ServedSimPhone(device.inner).reset({"settings": {"wifi": False}})  # the phone's own side channel
        assert judge(None) is True, "the verdict reads the served phone's state over adb"
    finally:
        device.close()
