"""A fault in the record's watcher costs the record its flashes, never the run: the fault
is logged, the reader ends with it, and stopping the capture leaves no thread behind."""

from __future__ import annotations

import logging
import time
from types import SimpleNamespace

import numpy as np

from phone.record.capture import CaptureOptions, RunCapture


class FrameSource:
    """A mirror that hands its listeners the frames it is given (no video)."""

    def __init__(self) -> None:
        self.listeners: list = []

    def listen_frames(self, fn):
        self.listeners.append(fn)
        return lambda: self.listeners.remove(fn)

    def listen_packets(self, fn):  # pragma: no cover - no video in these tests
        raise AssertionError("no video asked for")

    def show(self, index: int) -> None:
        image = np.full((800, 360, 3), 250, np.uint8)
        for fn in list(self.listeners):
            fn(SimpleNamespace(image=image, received_at=time.monotonic(), index=index))


def test_a_watcher_that_fails_is_logged_and_stopping_leaves_no_thread_behind(caplog):
    source = FrameSource()
    capture = RunCapture(source, CaptureOptions(flashes=True), read=lambda image: [])

    def broken(frame):
        raise RuntimeError("shrinking failed")

    capture.ring.shrink = broken  # type: ignore[method-assign]
    with caplog.at_level(logging.ERROR, logger="phone.record.capture"):
        capture.start()
        source.show(1)
        deadline = time.monotonic() + 10
        while capture._thread.is_alive() and time.monotonic() < deadline:
            time.sleep(0.05)
        capture.stop(timeout=3.0)
    assert not capture._thread.is_alive() and not capture._reader.is_alive()
    assert any("watcher" in r.getMessage() and r.exc_info for r in caplog.records)
