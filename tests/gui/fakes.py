"""A small scripted phone and parser for window tests that must not depend on the
virtual phone or the vision pipeline."""

from __future__ import annotations

import threading

from agent.device import DeviceInfo, Key
from vision.geometry import Size
from vision.types import Screen, ScreenParse

from .samples import sample_image, sample_parse


class ScriptedPhone:
    """Implements the Device protocol; records calls and checks they never overlap."""

    def __init__(self, w: int = 1080, h: int = 2400) -> None:
        self.size = Size(w, h)
        self.calls: list[tuple] = []
        self.closed = False
        self.frame_no = 0
        self._busy = threading.Lock()
        self.overlaps = 0
        self.threads: set[str] = set()
        self.next_image = None  # set to show another screen from the next frame on

    def _enter(self, *call: object) -> None:
        if not self._busy.acquire(blocking=False):
            self.overlaps += 1
            self._busy.acquire()
        self.threads.add(threading.current_thread().name)
        self.calls.append(call)
        self._busy.release()

    @property
    def info(self) -> DeviceInfo:
        return DeviceInfo(serial="scripted-1", model="Scripted", size=self.size, is_virtual=True)

    def screen_size(self) -> Size:
        return self.size

    def screenshot(self, *, with_hierarchy: bool = False) -> Screen:
        self._enter("screenshot")
        self.frame_no += 1
        image = self.next_image if self.next_image is not None else sample_image(self.size.width, self.size.height)
        package, activity = self.foreground()
        return Screen(image=image, device="scripted-1", foreground_package=package, foreground_activity=activity)

    def dump_hierarchy(self) -> str:
        self._enter("dump")
        return "<hierarchy/>"

    def foreground(self) -> tuple[str, str]:
        return ("com.android.settings", ".Settings")

    def tap(self, x: int, y: int) -> None:
        self._enter("tap", x, y)

    def long_press(self, x: int, y: int, duration_ms: int = 800) -> None:
        self._enter("long_press", x, y)

    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 300) -> None:
        self._enter("swipe", x1, y1, x2, y2)

    def input_text(self, text: str) -> None:
        self._enter("text", text)

    def key(self, key: Key) -> None:
        self._enter("key", key)

    def open_app(self, name_or_package: str) -> None:
        self._enter("open_app", name_or_package)

    def close(self) -> None:
        self.closed = True


class FixedParser:
    """Returns the sample parse for any screen (or ``next_parse`` once a test sets it: the
    phone shows another screen), counting calls."""

    def __init__(self) -> None:
        self.calls = 0
        self.next_parse: ScreenParse | None = None

    def parse(self, screen: Screen, *args, **kwargs) -> ScreenParse:
        self.calls += 1
        return self.next_parse if self.next_parse is not None else sample_parse()


def window_on(qtbot, phone, parser_factory, *, serial: str = "scripted-1", name: str = "Scripted phone",
              ready=lambda w: w.view.frame is not None, timeout: int = 5000, size: tuple[int, int] | None = None):
    """A shown ``MainWindow`` (no discovery) connected to ``phone`` and parsing with
    ``parser_factory``, once ``ready(window)`` holds."""
    from app.gui.devices import DeviceChoice
    from app.gui.window import MainWindow

    w = MainWindow(None, discover=False, parser_factory=parser_factory, device_factory=lambda choice, timeout: phone)
    qtbot.addWidget(w)
    if size is not None:
        w.resize(*size)
    w.show()
    qtbot.waitExposed(w)
    w.connect_device(DeviceChoice(serial, name, is_virtual=True))
    qtbot.waitUntil(lambda: ready(w), timeout=timeout)
    return w
