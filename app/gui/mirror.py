"""The live mirror loop: asks the device's serial executor for frames, one at a time.

One request is in flight at most; the next is made when the previous frame arrived and
the frame interval has passed, so a slow phone lowers the frame rate instead of queueing
work.  Frames are delivered on the GUI thread with a rolling frames-per-second figure.
No widgets here.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections import deque
from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer, Signal

from agent.device import Device
from app.gui.workers import Failure, SerialExecutor
from vision.types import Screen

log = logging.getLogger(__name__)


def frame_signature(screen: Screen) -> str:
    """A cheap fingerprint of the pixels (a sparse sample), to notice a changed screen."""
    img = screen.image
    step = max(1, min(img.shape[0], img.shape[1]) // 48)
    return hashlib.blake2b(img[::step, ::step].tobytes(), digest_size=12).hexdigest()


class MirrorLoop(QObject):
    frameArrived = Signal(object)  # Screen
    failed = Signal(object)  # Failure

    def __init__(self, device: Device, executor: SerialExecutor, max_fps: float = 30.0,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.device = device
        self.executor = executor
        self.max_fps = max(1.0, float(max_fps))
        self._running = False
        self._in_flight = False
        self._last_request = 0.0
        self._times: deque[float] = deque(maxlen=120)
        self.frames = 0
        self.first_frame_at: float | None = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self._request)
        self._errors_in_row = 0
        self.on_frame: Callable[[Screen], None] | None = None

    def start(self) -> None:
        self._running = True
        self._request()

    def stop(self) -> None:
        self._running = False
        self._timer.stop()

    @property
    def running(self) -> bool:
        return self._running

    def fps(self) -> float:
        now = time.monotonic()
        recent = [t for t in self._times if now - t <= 2.0]
        if len(recent) < 2:
            return 0.0
        span = recent[-1] - recent[0]
        return (len(recent) - 1) / span if span > 0 else 0.0

    def _request(self) -> None:
        if not self._running or self._in_flight:
            return
        self._in_flight = True
        self._last_request = time.monotonic()
        self.executor.submit(lambda: self.device.screenshot(), on_done=self._got, on_error=self._failed)

    def _schedule_next(self, extra_delay: float = 0.0) -> None:
        if not self._running:
            return
        wait = max(0.0, 1.0 / self.max_fps - (time.monotonic() - self._last_request)) + extra_delay
        self._timer.start(int(wait * 1000))

    def _got(self, screen: Screen) -> None:
        self._in_flight = False
        self._errors_in_row = 0
        now = time.monotonic()
        self._times.append(now)
        self.frames += 1
        if self.first_frame_at is None:
            self.first_frame_at = time.perf_counter()
        if self._running:
            self.frameArrived.emit(screen)
        self._schedule_next()

    def _failed(self, failure: Failure) -> None:
        self._in_flight = False
        self._errors_in_row += 1
        if self._errors_in_row == 1 or self._errors_in_row % 50 == 0:
            self.failed.emit(failure)
        # back off while the device misbehaves; a gone device is stopped by the window
        self._schedule_next(extra_delay=min(2.0, 0.1 * self._errors_in_row))
