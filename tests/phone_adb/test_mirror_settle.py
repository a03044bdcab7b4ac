"""A screenshot after input is the frame of the settled screen: when the stream lags behind
the phone, the agent must not read a frame from before its tap beside a tree dumped after it."""

from __future__ import annotations

import threading
import time

import numpy as np

from phone.adb import mirror as m
from vision.geometry import Size
from vision.types import Screen


class LaggingMirror:
    """Frames arrive when a test says: ``schedule`` publishes them at given delays."""

    running = True
    source = m.MirrorSource.SCRCPY
    device_size = Size(4, 4)

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._frame: m.MirrorFrame | None = None
        self._publish(0)
        self.taps = 0

    def _publish(self, value: int) -> None:
        with self._cond:
            index = (self._frame.index + 1) if self._frame is not None else 1
            now = time.monotonic()
            image = np.full((4, 4, 3), value, np.uint8)
            self._frame = m.MirrorFrame(image, index, now, now, m.MirrorSource.SCRCPY)
            self._cond.notify_all()

    def schedule(self, *delays_and_values: tuple[float, int]) -> None:
        def run() -> None:
            start = time.monotonic()
            for delay, value in delays_and_values:
                time.sleep(max(0.0, start + delay - time.monotonic()))
                self._publish(value)
        threading.Thread(target=run, daemon=True).start()

    def latest(self) -> m.MirrorFrame | None:
        with self._cond:
            return self._frame

    def wait_frame(self, after: int = 0, timeout: float = 5.0) -> m.MirrorFrame | None:
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._frame is None or self._frame.index <= after:
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self._cond.wait(left)
            return self._frame

    def tap(self, x: int, y: int) -> None:
        self.taps += 1


def device(mirror: LaggingMirror) -> m.MirroredDevice:
    d = m.MirroredDevice.__new__(m.MirroredDevice)
    d.inner, d.max_size, d.max_fps = None, 0, 60
    d._lock = threading.Lock()
    d._mirror = mirror  # type: ignore[assignment]
    d._last_input_at = 0.0
    return d


def test_a_frame_that_arrives_late_after_a_tap_is_waited_for_and_the_animation_let_finish():
    mirror = LaggingMirror()
    dev = device(mirror)
    dev.tap(1, 1)
    mirror.schedule((0.35, 10), (0.42, 20), (0.50, 30))  # the new page slides in, late
    image = dev._mirrored_image()
    assert image is not None and int(image[0, 0, 0]) == 30, "the settled frame, not the one before the tap"


class Screencap:
    """The phone as adb sees it now: what a ``screencap`` returns."""

    def screenshot(self, *, with_hierarchy: bool = False) -> Screen:
        return Screen(np.full((4, 4, 3), 99, np.uint8), hierarchy_xml="<hierarchy/>" if with_hierarchy else None)


def test_no_frame_after_a_tap_means_a_screencap_not_the_frame_from_before():
    mirror = LaggingMirror()
    dev = device(mirror)
    dev.inner = Screencap()  # type: ignore[assignment]
    dev.tap(1, 1)
    t0 = time.monotonic()
    shot = dev.screenshot(with_hierarchy=True)
    waited = time.monotonic() - t0
    assert int(shot.image[0, 0, 0]) == 99 and shot.hierarchy_xml == "<hierarchy/>"
    assert waited <= m.FIRST_FRAME_WAIT_S + 0.3


def test_a_screen_that_keeps_moving_is_taken_at_the_limit():
    mirror = LaggingMirror()
    dev = device(mirror)
    dev.tap(1, 1)
    mirror.schedule(*[(0.05 * i, i) for i in range(1, 60)])  # a frame every 50 ms for 3 s
    t0 = time.monotonic()
    image = dev._mirrored_image()
    assert image is not None and time.monotonic() - t0 <= m.MAX_SETTLE_S + 0.3


def test_long_after_the_last_input_the_newest_frame_is_taken_at_once():
    mirror = LaggingMirror()
    dev = device(mirror)
    t0 = time.monotonic()
    assert dev._mirrored_image() is not None and time.monotonic() - t0 < 0.05
