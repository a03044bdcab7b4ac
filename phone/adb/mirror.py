"""The live mirror: newest-frame delivery from scrcpy, with screenshot polling as fallback.

A ``Mirror`` runs one worker thread per device.  With scrcpy it reads packets, decodes
them with PyAV (off the caller's thread) and keeps only the newest frame: a frame that is
already stale when decoded (more video waiting) is not converted, and a frame nobody took
before the next one arrived counts as dropped.  Consumers call ``latest()`` or
``wait_frame()`` and never block the decoder.  When the stream drops, the mirror restarts
it (the session and its frames counter survive); when the device is gone it reports a
``device_gone`` event and stops; when scrcpy cannot start it says so and polls
screenshots instead.  Events go to an optional callback and to ``events()``.  Input sent
through the mirror uses the control socket when it is up, adb ``input`` otherwise; input
is never dropped (each message is written in order), only stale frames are.
``MirroredDevice`` wraps an ``AdbDevice`` so that everything driving the phone (agent,
macros, manual control) types and taps through the running mirror and reads its frames;
its ``stream`` (``phone.adb.stream_tap``) hands every decoded frame and H.264 packet of
every mirror it starts to listeners (the record of a run) without waiting for them;
a screenshot after input is the frame of the settled screen, not one from before the input.
No Qt here.
"""

from __future__ import annotations

import collections
import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum

import numpy as np

from agent.device import DeviceError, DeviceGone, Key
from phone.adb.adb_device import KEYCODES, AdbDevice
from phone.adb.scrcpy_client import H264Decoder, ScrcpyClient, ScrcpyError
from phone.adb.stream_tap import StreamTap
from vision.geometry import Size
from vision.types import Screen

log = logging.getLogger(__name__)


class MirrorSource(str, Enum):
    SCRCPY = "scrcpy"
    SCREENSHOTS = "screenshots"


class MirrorEventKind(str, Enum):
    STARTED = "started"
    FALLBACK = "fallback"  # scrcpy unavailable; polling screenshots
    RECONNECTING = "reconnecting"
    RECONNECTED = "reconnected"
    DEVICE_GONE = "device_gone"
    STOPPED = "stopped"
    ERROR = "error"


@dataclass(frozen=True, slots=True)
class MirrorEvent:
    kind: MirrorEventKind
    message: str
    at: float = field(default_factory=time.time)


@dataclass(frozen=True, slots=True, eq=False)
class MirrorFrame:
    """One mirrored frame: RGB pixels (read-only), in frame pixels, newest first."""

    image: np.ndarray
    index: int
    received_at: float  # time.monotonic() when its bytes had arrived
    decoded_at: float  # time.monotonic() when it was ready
    source: MirrorSource

    @property
    def width(self) -> int:
        return int(self.image.shape[1])

    @property
    def height(self) -> int:
        return int(self.image.shape[0])


@dataclass(frozen=True, slots=True)
class MirrorStats:
    source: MirrorSource | None
    fps: float
    frames: int
    dropped: int
    decode_latency_ms: float  # mean over the last frames: bytes received -> RGB ready
    restarts: int


class Mirror:
    """Live view of one ``AdbDevice``; see the module docstring."""

    def __init__(
        self,
        device: AdbDevice,
        *,
        max_size: int = 0,
        max_fps: int = 0,
        use_scrcpy: bool = True,
        poll_interval: float = 0.5,
        max_restarts: int = 3,
        on_event: Callable[[MirrorEvent], None] | None = None,
        on_frame: Callable[[MirrorFrame], None] | None = None,
        stream: StreamTap | None = None,
    ) -> None:
        self.device = device
        self.stream = stream  # listeners of the stream (the record of a run): frames and H.264 packets
        self.max_size = max_size
        self.max_fps = max_fps
        self.use_scrcpy = use_scrcpy
        self.poll_interval = poll_interval
        self.max_restarts = max_restarts
        self.on_event = on_event
        self.on_frame = on_frame  # called on the mirror's thread: keep it short (e.g. emit a Qt signal)
        self._events: queue.Queue[MirrorEvent] = queue.Queue()
        self._cond = threading.Condition()
        self._frame: MirrorFrame | None = None
        self._frame_taken = True
        self._index = 0
        self._dropped = 0
        self._times: collections.deque[float] = collections.deque(maxlen=120)
        self._latencies: collections.deque[float] = collections.deque(maxlen=60)
        self._restarts = 0
        self._source: MirrorSource | None = None
        self._client: ScrcpyClient | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.device_size: Size | None = None

    # -- public API ----------------------------------------------------------------------
    def start(self) -> Mirror:
        if self._thread is not None:
            raise RuntimeError("mirror already started")
        self.device_size = self.device.screen_size()
        self._thread = threading.Thread(target=self._run, name=f"mirror-{self.device.serial}", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        client = self._client
        if client is not None:
            client.stop()
        if self._thread is not None:
            self._thread.join(timeout)
        with self._cond:
            self._cond.notify_all()

    def __enter__(self) -> Mirror:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    @property
    def source(self) -> MirrorSource | None:
        return self._source

    def latest(self) -> MirrorFrame | None:
        """The newest frame (or None before the first one); never blocks the decoder."""
        with self._cond:
            self._frame_taken = True
            return self._frame

    def wait_frame(self, after: int = 0, timeout: float = 5.0) -> MirrorFrame | None:
        """Block until a frame newer than index ``after`` exists; None on timeout or stop."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._frame is None or self._frame.index <= after:
                left = deadline - time.monotonic()
                ended = self._thread is not None and not self._thread.is_alive()
                if left <= 0 or ended:
                    return None
                self._cond.wait(min(left, 0.2))
            self._frame_taken = True
            return self._frame

    def events(self) -> list[MirrorEvent]:
        """Events since the last call (also delivered to ``on_event`` as they happen)."""
        out = []
        while True:
            try:
                out.append(self._events.get_nowait())
            except queue.Empty:
                return out

    def wait_event(self, kind: MirrorEventKind, timeout: float = 10.0) -> MirrorEvent | None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                ev = self._events.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                return None
            if ev.kind == kind:
                return ev
        return None

    def stats(self) -> MirrorStats:
        with self._cond:
            times = list(self._times)
            lat = list(self._latencies)
            frames, dropped = self._index, self._dropped
        fps = 0.0
        if len(times) >= 2 and times[-1] > times[0]:
            recent = [t for t in times if t >= times[-1] - 2.0]
            if len(recent) >= 2 and recent[-1] > recent[0]:
                fps = (len(recent) - 1) / (recent[-1] - recent[0])
        return MirrorStats(
            source=self._source,
            fps=fps,
            frames=frames,
            dropped=dropped,
            decode_latency_ms=1000 * sum(lat) / len(lat) if lat else 0.0,
            restarts=self._restarts,
        )

    # -- input (device pixels) -------------------------------------------------------
    def _to_frame(self, x: int, y: int) -> tuple[int, int]:
        c = self._client
        size = self.device_size
        if c is None or size is None or not c.frame_width:
            return x, y
        return round(x * c.frame_width / size.width), round(y * c.frame_height / size.height)

    def _control(self) -> ScrcpyClient | None:
        return self._client if self._source is MirrorSource.SCRCPY else None

    def tap(self, x: int, y: int) -> None:
        c = self._control()
        if c is None:
            self.device.tap(x, y)
            return
        c.tap(*self._to_frame(x, y))

    def long_press(self, x: int, y: int, duration_ms: int = 800) -> None:
        c = self._control()
        if c is None:
            self.device.long_press(x, y, duration_ms)
            return
        c.long_press(*self._to_frame(x, y), hold_s=duration_ms / 1000)

    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 300) -> None:
        c = self._control()
        if c is None:
            self.device.swipe(x1, y1, x2, y2, duration_ms)
            return
        fx1, fy1 = self._to_frame(x1, y1)
        fx2, fy2 = self._to_frame(x2, y2)
        c.swipe(fx1, fy1, fx2, fy2, duration_ms / 1000)

    def key(self, key: Key) -> None:
        c = self._control()
        if c is None:
            self.device.key(key)
            return
        c.key(KEYCODES[Key(key)])

    def input_text(self, text: str) -> None:
        """Key-map text is injected; any other Unicode is set as the clipboard and pasted."""
        c = self._control()
        if c is None:
            self.device.input_text(text)
            return
        c.type_text(text)

    def scroll(self, x: int, y: int, notches: float) -> None:
        """Mouse-wheel scroll at device pixel (x, y); positive notches scroll up."""
        c = self._control()
        if c is None:
            size = self.device_size
            dist = int((size.height if size else 2000) * 0.25 * max(-4.0, min(4.0, notches)))
            self.device.swipe(x, y, x, y + dist, 200)
            return
        c.scroll(*self._to_frame(x, y), vscroll=notches)

    def set_clipboard(self, text: str, paste: bool = False) -> None:
        """Set the phone's clipboard through the control socket (waits for its acknowledgement)."""
        c = self._control()
        if c is None:
            raise DeviceError("the clipboard needs the scrcpy control socket", "the mirror is polling screenshots")
        c.set_clipboard(text, paste=paste)

    def get_clipboard(self) -> str:
        c = self._control()
        if c is None:
            raise DeviceError("the clipboard needs the scrcpy control socket", "the mirror is polling screenshots")
        return c.get_clipboard()

    # -- worker -------------------------------------------------------------------------
    def _emit(self, kind: MirrorEventKind, message: str) -> None:
        ev = MirrorEvent(kind, message)
        log.info("mirror %s: %s: %s", self.device.serial, kind.value, message)
        self._events.put(ev)
        if self.on_event is not None:
            try:
                self.on_event(ev)
            except Exception:
                log.exception("mirror event callback failed")

    def _publish(self, image: np.ndarray, received_at: float, source: MirrorSource) -> None:
        image.setflags(write=False)
        now = time.monotonic()
        with self._cond:
            if not self._frame_taken and self._frame is not None:
                self._dropped += 1
            self._index += 1
            self._frame = MirrorFrame(image, self._index, received_at, now, source)
            self._frame_taken = False
            self._times.append(now)
            self._latencies.append(now - received_at)
            frame = self._frame
            self._cond.notify_all()
        if self.on_frame is not None:
            try:
                self.on_frame(frame)
            except Exception:
                log.exception("mirror frame callback failed")
        if self.stream is not None:
            self.stream.frame(frame)

    def _run(self) -> None:
        try:
            if self.use_scrcpy and self._run_scrcpy():
                return
            if not self._stop.is_set():
                self._run_polling()
        except DeviceGone as exc:
            self._emit(MirrorEventKind.DEVICE_GONE, str(exc))
        except Exception as exc:  # the mirror must report, never crash the app
            log.exception("mirror worker failed")
            self._emit(MirrorEventKind.ERROR, f"mirror stopped: {exc}")
        finally:
            self._client = None
            if self._stop.is_set():
                self._emit(MirrorEventKind.STOPPED, "mirror stopped")

    def _gone_or_none(self) -> DeviceGone | None:
        state = self.device.state()
        if state != "device":
            return DeviceGone(
                f"{self.device.serial} disconnected (adb state: {state})",
                "reconnect the phone; the session and its episode are kept",
            )
        return None

    def _run_scrcpy(self) -> bool:
        """Stream with scrcpy; returns True when done, False to fall back to polling."""
        first = True
        failures = 0
        while not self._stop.is_set():
            client = ScrcpyClient(self.device.adb, max_size=self.max_size, max_fps=self.max_fps)
            try:
                client.start()
            except (ScrcpyError, DeviceError) as exc:
                gone = self._gone_or_none()
                if gone is not None:
                    raise gone from exc
                failures += 1
                if first or failures > self.max_restarts:
                    self._emit(MirrorEventKind.FALLBACK, f"scrcpy unavailable ({exc}); polling screenshots instead")
                    return False
                time.sleep(0.5 * failures)
                continue
            self._client = client
            self._source = MirrorSource.SCRCPY
            self._emit(
                MirrorEventKind.STARTED if first else MirrorEventKind.RECONNECTED,
                f"scrcpy {client.device_name} {client.frame_width}x{client.frame_height}",
            )
            first = False
            failures = 0
            reason = self._pump(client)
            client.stop()
            self._client = None
            if self._stop.is_set():
                return True
            gone = self._gone_or_none()
            if gone is not None:
                raise gone
            self._restarts += 1
            if self._restarts > self.max_restarts * 10:
                self._emit(MirrorEventKind.FALLBACK, "the scrcpy stream keeps dropping; polling screenshots instead")
                return False
            self._emit(MirrorEventKind.RECONNECTING, f"video stream dropped ({reason}); restarting scrcpy")
        return True

    def _pump(self, client: ScrcpyClient) -> str:
        decoder = H264Decoder()
        if self.stream is not None:
            self.stream.reset()
        while not self._stop.is_set():
            try:
                packet = client.read_packet()
            except (ConnectionError, OSError) as exc:
                return str(exc) or type(exc).__name__
            if self.stream is not None:
                self.stream.packet(packet)
            frames = decoder.decode(packet)
            if not frames:
                continue
            self._follow_rotation(client, frames[-1].width, frames[-1].height)
            if client.video_pending():
                continue  # a newer packet is already here: skip converting this frame
            image = frames[-1].to_ndarray(format="rgb24")
            self._publish(image, packet.received_at, MirrorSource.SCRCPY)
        return "stopped"

    def _follow_rotation(self, client: ScrcpyClient, width: int, height: int) -> None:
        """After a rotation the server restarts its encoder at the new size: touches must
        carry that size, and device coordinates swap axes."""
        if (width, height) == (client.frame_width, client.frame_height):
            return
        client.frame_width, client.frame_height = width, height
        size = self.device_size
        if size is not None and (width > height) != (size.width > size.height):
            self.device_size = Size(size.height, size.width)
        log.info("mirror frame size is now %dx%d", width, height)

    def _run_polling(self) -> None:
        self._source = MirrorSource.SCREENSHOTS
        while not self._stop.is_set():
            t0 = time.monotonic()
            try:
                image = self.device.screenshot_image()
            except DeviceGone:
                raise
            except DeviceError as exc:
                gone = self._gone_or_none()
                if gone is not None:
                    raise gone from exc
                log.info("screenshot failed: %s", exc)
            else:
                self._publish(image, t0, MirrorSource.SCREENSHOTS)
            self._stop.wait(max(0.0, self.poll_interval - (time.monotonic() - t0)))


#: A screenshot right after input waits at least this long, so the mirror has the input's effect.
SETTLE_AFTER_INPUT_S = 0.15
#: ... and for a frame that arrived after the input, at most this long (none by then: the
#: stream lags or the input changed nothing; a ``screencap`` then shows the phone as it is) ...
FIRST_FRAME_WAIT_S = 0.6
#: ... then until no new frame came for this long (a page transition, a keyboard opening) ...
QUIET_S = 0.12
#: ... but never longer than this after the input (a screen that keeps moving).
MAX_SETTLE_S = 1.5


class MirroredDevice:
    """An ``AdbDevice`` whose input goes through the scrcpy control socket while a mirror
    runs (adb ``input`` otherwise), and whose screenshots are the mirror's newest frame
    (the frame the window shows; no 10 MB ``screencap`` transfer); everything else is the
    ``AdbDevice``'s own.

    The mirror is created by ``start_mirror`` (the window's live view does that) and
    replaced by a fresh one on every start, so it can be stopped and started again.
    """

    def __init__(self, device: AdbDevice, *, max_size: int = 0, max_fps: int = 60) -> None:
        self.inner = device
        self.max_size = max_size
        self.max_fps = max_fps
        self.stream = StreamTap()  # outlives each mirror: the record of a run listens here
        self._mirror: Mirror | None = None
        self._lock = threading.Lock()
        self._last_input_at = 0.0

    @property
    def mirror(self) -> Mirror | None:
        return self._mirror

    def start_mirror(
        self,
        on_frame: Callable[[MirrorFrame], None] | None = None,
        on_event: Callable[[MirrorEvent], None] | None = None,
        max_fps: int | None = None,
    ) -> Mirror:
        """Stop any running mirror and start a new one (blocks for one adb round trip)."""
        self.stop_mirror()
        mirror = Mirror(self.inner, max_size=self.max_size, max_fps=max_fps or self.max_fps,
                        on_frame=on_frame, on_event=on_event, stream=self.stream)
        with self._lock:
            self._mirror = mirror
        return mirror.start()

    def stop_mirror(self) -> None:
        with self._lock:
            mirror, self._mirror = self._mirror, None
        if mirror is not None:
            mirror.stop()

    def _input(self) -> Mirror | AdbDevice:
        mirror = self._mirror
        return mirror if mirror is not None and mirror.running else self.inner

    def _sent(self) -> None:
        self._last_input_at = time.monotonic()

    def tap(self, x: int, y: int) -> None:
        self._input().tap(x, y)
        self._sent()

    def long_press(self, x: int, y: int, duration_ms: int = 800) -> None:
        self._input().long_press(x, y, duration_ms)
        self._sent()

    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 300) -> None:
        self._input().swipe(x1, y1, x2, y2, duration_ms)
        self._sent()

    def key(self, key: Key) -> None:
        self._input().key(key)
        self._sent()

    def input_text(self, text: str) -> None:
        self._input().input_text(text)
        self._sent()

    def _mirrored_image(self) -> np.ndarray | None:
        """The streamed frame in device pixels, or None when scrcpy is not streaming."""
        mirror = self._mirror
        if mirror is None or not mirror.running or mirror.source is not MirrorSource.SCRCPY:
            return None
        frame = self._settled_frame(mirror)
        size = mirror.device_size
        if frame is None or size is None:
            return None
        if (frame.width, frame.height) == (size.width, size.height):
            return frame.image
        import cv2  # scrcpy frame sizes are multiples of 8 (or max_size): back to device pixels

        return cv2.resize(frame.image, (size.width, size.height), interpolation=cv2.INTER_LINEAR)

    def _settled_frame(self, mirror: Mirror) -> MirrorFrame | None:
        """The newest frame once the screen has settled after the last input: a frame that
        came after the input (waited for up to ``FIRST_FRAME_WAIT_S``), then none for
        ``QUIET_S``, within ``MAX_SETTLE_S`` of the input; None when no frame came after the
        input (the caller takes a ``screencap``: a frame from before the input may be stale).
        Without this the agent read a frame from before its tap beside a tree dumped after
        it (the tree of one screen over the pixels of another) whenever the stream lagged."""
        sent = self._last_input_at
        if time.monotonic() - sent >= MAX_SETTLE_S:
            return mirror.latest()
        wait = sent + SETTLE_AFTER_INPUT_S - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        frame = mirror.latest()
        if frame is None or frame.received_at <= sent:  # the input's effect is not in yet
            left = sent + FIRST_FRAME_WAIT_S - time.monotonic()
            newer = mirror.wait_frame(after=frame.index if frame else 0, timeout=left) if left > 0 else None
            if newer is None:
                return None  # no frame since the input: the stream lags, or nothing changed
            frame = newer
        while (left := sent + MAX_SETTLE_S - time.monotonic()) > 0:
            newer = mirror.wait_frame(after=frame.index, timeout=min(QUIET_S, left))
            if newer is None:
                break  # quiet: settled
            frame = newer
        return frame

    def screenshot(self, *, with_hierarchy: bool = False) -> Screen:
        t0 = time.perf_counter()
        image = self._mirrored_image()
        if image is None:
            return self.inner.screenshot(with_hierarchy=with_hierarchy)
        captured = time.time()
        timings: list[tuple[str, float]] = [("frame (scrcpy mirror)", (time.perf_counter() - t0) * 1000)]
        xml = pkg = act = None
        if with_hierarchy:  # after the frame, like AdbDevice.screenshot: both from one moment
            t0 = time.perf_counter()
            xml = self.inner.dump_hierarchy()
            timings.append(("hierarchy", (time.perf_counter() - t0) * 1000))
            pkg, act = self.inner.foreground()
        return Screen(image=image, captured_at=captured, hierarchy_xml=xml, foreground_package=pkg,
                      foreground_activity=act, density_dpi=self.inner.info.density_dpi, device=self.inner.serial,
                      timings_ms=tuple(timings))

    def close(self) -> None:
        self.stop_mirror()
        self.inner.close()

    def __getattr__(self, name: str):  # info, screenshot, dump_hierarchy, open_app, ...
        return getattr(self.inner, name)
