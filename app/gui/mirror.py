"""The live mirror loop: frames for the window, from scrcpy or from screenshot polling.

For a phone reached over adb (``MirroredDevice``) the frames come from the scrcpy v3
mirror (``phone.adb.mirror``), decoded on its own thread; only the newest frame is
handed to the GUI thread (an older one still waiting is replaced, never queued).  When
scrcpy cannot run the mirror polls screenshots by itself and ``source_note`` says why,
for the status bar.  When the phone disappears the loop reports ``DeviceGone`` through
``failed``; ``resume_when_back()`` then watches for the phone (``adb connect`` again for
network serials) and restarts the mirror when it answers (``deviceBack``).

Any other device (the in-process virtual phone) is polled through the device's serial
executor: one request in flight at most, the next made when the previous frame arrived
and the frame interval has passed, so a slow phone lowers the frame rate instead of
queueing work.  Frames are delivered on the GUI thread with a rolling frames-per-second
figure.  No widgets here.
"""

from __future__ import annotations

import hashlib
import logging
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
from PySide6.QtCore import QObject, QTimer, Signal

from agent.device import Device, DeviceGone
from app.gui.workers import Failure, SerialExecutor
from vision.types import Screen

if TYPE_CHECKING:
    from phone.adb.mirror import MirroredDevice

log = logging.getLogger(__name__)

#: How often a gone phone is looked for again.
RECONNECT_INTERVAL_MS = 1000


def frame_signature(screen: Screen) -> str:
    """A cheap fingerprint of the pixels (a sparse sample), to notice a changed screen."""
    img = screen.image
    step = max(1, min(img.shape[0], img.shape[1]) // 48)
    return hashlib.blake2b(img[::step, ::step].tobytes(), digest_size=12).hexdigest()


def _as_mirrored(device: Device) -> MirroredDevice | None:
    """``device`` when it streams through scrcpy.  The adb layer is imported only by code
    that opens an adb phone, so when it is not loaded the device cannot be one (and the
    virtual phone's window starts without paying for adbutils)."""
    module = sys.modules.get("phone.adb.mirror")
    if module is None:
        return None
    return device if isinstance(device, module.MirroredDevice) else None


class MirrorLoop(QObject):
    frameArrived = Signal(object)  # Screen
    failed = Signal(object)  # Failure
    statusChanged = Signal(str)  # where the frames come from, and why
    deviceBack = Signal()  # a gone phone answers again and mirroring resumed
    _frameReady = Signal()  # from the mirror's thread: a newer frame is waiting
    _eventReady = Signal(object)  # from the mirror's thread: a MirrorEvent

    def __init__(self, device: Device, executor: SerialExecutor, max_fps: float = 30.0,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.device = device
        self.executor = executor
        self.max_fps = max(1.0, float(max_fps))
        self.live: MirroredDevice | None = _as_mirrored(device)
        self.streaming = self.live is not None
        self.source_note = "screenshots" if not self.streaming else "starting scrcpy"
        self._running = False
        self._in_flight = False
        self._last_request = 0.0
        self._times: deque[float] = deque(maxlen=240)
        self.frames = 0
        self.first_frame_at: float | None = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self._request)
        self._errors_in_row = 0
        self.on_frame: Callable[[Screen], None] | None = None
        self._pending = None  # the newest MirrorFrame not yet shown
        self._pending_lock = threading.Lock()
        self._generation = 0  # frames from a stopped mirror are ignored
        self._frameReady.connect(self._take_frame)
        self._eventReady.connect(self._on_event)
        self._watch = QTimer(self)
        self._watch.setInterval(RECONNECT_INTERVAL_MS)
        self._watch.timeout.connect(self._look_for_device)
        self._looking = False

    # ---- control ---------------------------------------------------------------------
    def start(self) -> None:
        self._running = True
        if self.streaming:
            self._start_stream()
        else:
            self._request()

    def stop(self) -> None:
        self._running = False
        self._timer.stop()
        self._watch.stop()
        if self.streaming:
            self._generation += 1
            live = self.live
            assert live is not None
            self.executor.submit(lambda: live.stop_mirror(), on_error=lambda f: log.info("mirror stop: %s", f.message))

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

    # ---- scrcpy stream -------------------------------------------------------------------
    def _start_stream(self) -> None:
        self._generation += 1
        gen = self._generation
        live = self.live
        assert live is not None
        fps = int(self.max_fps)  # a cap: the phone sends frames only when its screen changes

        def on_frame(frame) -> None:  # mirror thread
            with self._pending_lock:
                if gen != self._generation:
                    return
                first = self._pending is None
                self._pending = frame
            if first:
                try:
                    self._frameReady.emit()
                except RuntimeError:  # the window closed while a frame was decoded
                    log.debug("frame after the mirror loop was deleted")

        def on_event(event) -> None:  # mirror thread
            if gen == self._generation:
                try:
                    self._eventReady.emit(event)
                except RuntimeError:  # the window closed meanwhile
                    log.debug("mirror event after the mirror loop was deleted: %s", event)

        self.executor.submit(lambda: live.start_mirror(on_frame=on_frame, on_event=on_event, max_fps=fps),
                             on_error=self._stream_failed)

    def _stream_failed(self, failure: Failure) -> None:
        self.source_note = f"no mirror: {failure.message}"
        self.statusChanged.emit(self.source_note)
        self.failed.emit(failure)

    def _take_frame(self) -> None:
        with self._pending_lock:
            frame, self._pending = self._pending, None
        if frame is None or not self._running:
            return
        self._deliver(self._screen_of(frame))

    def _screen_of(self, frame) -> Screen:
        image = frame.image
        size = getattr(self.live.mirror if self.live else None, "device_size", None)
        if size is not None and (image.shape[1], image.shape[0]) != (size.width, size.height):
            import cv2  # scrcpy sizes are multiples of 8: show the frame in device pixels

            image = cv2.resize(np.ascontiguousarray(image), (size.width, size.height), interpolation=cv2.INTER_LINEAR)
        age_s = time.monotonic() - frame.received_at
        return Screen(image=image, captured_at=time.time() - age_s, device=self.device.info.serial,
                      timings_ms=(("decode", (frame.decoded_at - frame.received_at) * 1000),))

    def _on_event(self, event) -> None:
        from phone.adb.mirror import MirrorEventKind

        if isinstance(event, _Back):
            self._watch.stop()
            if self._running:
                self.source_note = "phone back: starting scrcpy"
                self.statusChanged.emit(self.source_note)
                self._start_stream()
                self.deviceBack.emit()
            return
        kind = event.kind
        if kind in (MirrorEventKind.STARTED, MirrorEventKind.RECONNECTED):
            self.source_note = event.message.replace("scrcpy ", "scrcpy v3 · ", 1)
        elif kind is MirrorEventKind.FALLBACK:
            self.source_note = f"screenshots — {event.message}"
        elif kind is MirrorEventKind.RECONNECTING:
            self.source_note = "reconnecting scrcpy…"
        elif kind is MirrorEventKind.DEVICE_GONE:
            self.source_note = "phone gone"
            self.statusChanged.emit(self.source_note)
            self.failed.emit(Failure(DeviceGone(event.message, "reconnect the phone; mirroring resumes by itself"), ""))
            return
        elif kind is MirrorEventKind.ERROR:
            self.source_note = event.message
        else:
            return
        self.statusChanged.emit(self.source_note)

    # ---- a gone phone coming back ------------------------------------------------------------
    def resume_when_back(self) -> None:
        """Look for the phone every second; restart the mirror when it answers again."""
        if self.live is not None:
            self._running = True
            self._watch.start()

    def _look_for_device(self) -> None:
        if self._looking or not self._running or self.live is None:
            return
        self._looking = True
        inner = self.live.inner
        serial = inner.serial

        def probe() -> bool:
            if inner.state() == "device":
                return True
            if ":" in serial:  # a network phone: ask adb to connect again
                from phone.adb.discovery import connect

                try:
                    connect(serial, inner.host)
                except Exception as exc:  # still away
                    log.debug("reconnecting %s: %s", serial, exc)
                    return False
                return inner.state() == "device"
            return False

        threading.Thread(target=lambda: self._probed(probe), name="mirror-reconnect", daemon=True).start()

    def _probed(self, probe: Callable[[], bool]) -> None:  # probe thread
        try:
            back = probe()
        except Exception as exc:
            log.debug("phone still away: %s", exc)
            back = False
        self._looking = False
        if back:
            try:
                self._eventReady.emit(_BACK)
            except RuntimeError:  # the window closed meanwhile
                log.debug("phone back after the mirror loop was deleted")

    # ---- screenshot polling (in-process phones) -----------------------------------------
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

    def _deliver(self, screen: Screen) -> None:
        self._errors_in_row = 0
        self._times.append(time.monotonic())
        self.frames += 1
        if self.first_frame_at is None:
            self.first_frame_at = time.perf_counter()
        if self._running:
            self.frameArrived.emit(screen)

    def _got(self, screen: Screen) -> None:
        self._in_flight = False
        self._deliver(screen)
        self._schedule_next()

    def _failed(self, failure: Failure) -> None:
        self._in_flight = False
        self._errors_in_row += 1
        if self._errors_in_row == 1 or self._errors_in_row % 50 == 0:
            self.failed.emit(failure)
        # back off while the device misbehaves; a gone device is stopped by the window
        self._schedule_next(extra_delay=min(2.0, 0.1 * self._errors_in_row))


class _Back:
    """Marker event: the phone answers again."""


_BACK = _Back()
