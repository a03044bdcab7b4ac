"""Live parsing follows the screen: a mirrored phone is parsed once its screen stops
changing, never more than one parse at a time and always the newest frame, so parsing
cannot drag the mirror down while the screen moves."""

from __future__ import annotations

import os
import threading

import numpy as np
import pytest

from app.gui.devices import DeviceChoice
from app.gui.settle import SettledParse
from app.gui.window import MainWindow
from phone.adb.u2_link import HierarchyPath
from vision.types import Screen, ScreenParse

from .fakes import ScriptedPhone
from .samples import sample_image, sample_parse


def _screen(n: int) -> Screen:
    return Screen(image=np.full((8, 8, 3), n % 256, dtype=np.uint8), device=f"frame-{n}")


def test_a_moving_screen_is_parsed_once_it_has_been_still_for_the_settle_time(qtbot):
    asked: list[Screen] = []
    settle = SettledParse(asked.append, settle_ms=150)
    for n in range(8):  # a frame every 40 ms: the screen never rests for 150 ms
        settle.frame_changed(_screen(n))
        qtbot.wait(40)
    assert asked == []
    qtbot.waitUntil(lambda: len(asked) == 1, timeout=2000)
    assert asked[0].device == "frame-7"  # the newest frame, not the first
    qtbot.wait(300)
    assert len(asked) == 1  # nothing new arrived: no second parse


def test_while_a_parse_runs_no_second_one_starts_and_the_newest_frame_follows_it(qtbot):
    asked: list[Screen] = []
    settle = SettledParse(asked.append, settle_ms=50)
    settle.frame_changed(_screen(1))
    qtbot.waitUntil(lambda: len(asked) == 1, timeout=2000)
    assert settle.in_flight
    for n in (2, 3, 4):
        settle.frame_changed(_screen(n))
        qtbot.wait(80)  # each of them settles while the first parse is still running
    assert len(asked) == 1
    settle.parse_finished()
    assert [s.device for s in asked] == ["frame-1", "frame-4"]
    settle.parse_finished()
    qtbot.wait(120)
    assert len(asked) == 2


def test_switching_live_parsing_off_forgets_the_waiting_frame(qtbot):
    asked: list[Screen] = []
    settle = SettledParse(asked.append, settle_ms=60)
    settle.frame_changed(_screen(1))
    settle.cancel()
    qtbot.wait(200)
    assert asked == []


class MovingPhone(ScriptedPhone):
    """A scripted phone whose screen changes on every frame while ``moving`` is set, and
    which says how it reads its hierarchy (as AdbDevice does)."""

    def __init__(self) -> None:
        super().__init__()
        self.moving = threading.Event()
        self.moving.set()
        self.hierarchy_path = HierarchyPath("uiautomator2", "server answered in 0.2 s")
        self._still = sample_image(self.size.width, self.size.height)

    def screenshot(self, *, with_hierarchy: bool = False) -> Screen:
        shot = super().screenshot(with_hierarchy=with_hierarchy)
        if not self.moving.is_set():
            return Screen(image=self._still, device="still")
        image = self._still.copy()
        image[:200, :200] = self.frame_no % 250  # a blinking corner: a new picture each frame
        return Screen(image=image, device=shot.device)


class RecordingParser:
    def __init__(self) -> None:
        self.screens: list[Screen] = []

    def parse(self, screen: Screen, *args, **kwargs) -> ScreenParse:
        self.screens.append(screen)
        return sample_parse()


@pytest.fixture
def moving_window(qtbot):
    phone = MovingPhone()
    parser = RecordingParser()
    w = MainWindow(None, discover=False, parser_factory=lambda: parser,
                   device_factory=lambda choice, timeout: phone)
    qtbot.addWidget(w)
    w.show()
    w.connect_device(DeviceChoice("scripted-1", "Scripted phone", is_virtual=True))
    qtbot.waitUntil(lambda: w.view.frame is not None, timeout=5000)
    yield w, phone, parser
    w.close()


def test_the_window_parses_the_live_phone_only_when_its_screen_settles(moving_window, qtbot):
    win, phone, parser = moving_window
    # the phone's first frame is parsed at once: the overlays are there when it opens
    qtbot.waitUntil(lambda: win.inspector.parse is not None, timeout=5000)
    assert len(parser.screens) == 1
    frames = win.session.mirror.frames
    qtbot.waitUntil(lambda: win.session.mirror.frames >= frames + 15, timeout=5000)  # it keeps moving
    assert len(parser.screens) == 1  # no parse while the screen moves
    phone.moving.clear()
    qtbot.waitUntil(lambda: len(parser.screens) == 2, timeout=5000)
    assert parser.screens[1].device == "still"  # the settled screen, fetched with its tree
    # the status bar says which way the phone's hierarchy was read
    assert "hierarchy via uiautomator2" in win.device_status.text()
    assert "server answered" in win.device_status.toolTip()
    frames = win.session.mirror.frames
    qtbot.waitUntil(lambda: win.session.mirror.frames >= frames + 5, timeout=5000)
    assert len(parser.screens) == 2  # the same still screen is not parsed again


def test_turning_live_parsing_off_in_the_toolbar_stops_parses_of_a_settling_screen(moving_window, qtbot):
    win, phone, parser = moving_window
    qtbot.waitUntil(lambda: len(parser.screens) == 1, timeout=5000)  # the first frame's
    win.parse_action.setChecked(False)
    phone.moving.clear()
    frames = win.session.mirror.frames
    qtbot.waitUntil(lambda: win.session.mirror.frames >= frames + 10, timeout=5000)
    qtbot.wait(win.phone.settle.settle_ms + 200)
    assert len(parser.screens) == 1


@pytest.mark.skipif(not hasattr(os, "setpriority"), reason="per-thread CPU priority needs Linux")
def test_the_window_parses_at_a_lower_cpu_priority_than_the_gui_thread(qtbot):
    from PySide6.QtCore import QObject

    from app.gui.session import PARSE_NICENESS, Session
    from app.gui.workers import GuiPoster

    holder = QObject()
    session = Session(None, GuiPoster(holder))
    results: list[int] = []

    def own_priority() -> int:
        return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    try:
        session.parse_worker.submit(own_priority, on_done=results.append)
        qtbot.waitUntil(lambda: bool(results), timeout=5000)
    finally:
        session.parse_worker.shutdown()
        session.misc.shutdown(wait=True)
        session.poster.close()
    gui = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    assert results[0] == min(gui + PARSE_NICENESS, 19)
