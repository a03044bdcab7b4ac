"""The scrcpy v1.24 server side, run when a client starts ``app_process … scrcpy.Server``.

It listens on the phone's abstract socket ``scrcpy`` (forward tunnel only): the first
connection is the video socket, the second the control socket.  Video: dummy byte, 64-byte
device name, u16 width and height, then H.264 packets from PyAV's libx264 (ultrafast,
zerolatency, small GOP), each behind a 12-byte header (u64 PTS with config/key flags, u32
size).  A frame is encoded whenever the phone's screen changed, at most ``max_fps`` a
second.  Control messages are parsed with the v1.24 layouts and applied to the phone:
a touch down/up pair becomes a tap, long press or swipe.  It never decodes video.
"""

from __future__ import annotations

import logging
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from agent.device import DeviceError, Key

# The wire format is defined once, on the client side; the served phone speaks the same.
from app.device.scrcpy_protocol import (
    DEVICE_NAME_FIELD_LENGTH,
    PACKET_FLAG_CONFIG,
    PACKET_FLAG_KEY_FRAME,
    SERVER_VERSION,
    TYPE_BACK_OR_SCREEN_ON,
    TYPE_COLLAPSE_PANELS,
    TYPE_EXPAND_NOTIFICATION_PANEL,
    TYPE_EXPAND_SETTINGS_PANEL,
    TYPE_GET_CLIPBOARD,
    TYPE_INJECT_KEYCODE,
    TYPE_INJECT_SCROLL_EVENT,
    TYPE_INJECT_TEXT,
    TYPE_INJECT_TOUCH_EVENT,
    TYPE_ROTATE_DEVICE,
    TYPE_SET_CLIPBOARD,
    TYPE_SET_SCREEN_POWER_MODE,
)
from app.sim.wire.adb_server import Stream, StreamClosed
from app.sim.wire.served_phone import ServedPhone
from app.sim.wire.vfs import VirtualFS

log = logging.getLogger(__name__)

SERVER_CLASS = "com.genymobile.scrcpy.Server"
KEYCODE_TO_KEY = {3: Key.HOME, 4: Key.BACK, 66: Key.ENTER, 187: Key.APP_SWITCH, 67: Key.DEL, 61: Key.TAB}

#: Gestures shorter than this (device px) count as taps; held longer (ms) as long presses.
TAP_SLOP_PX = 24
LONG_PRESS_MS = 500


class ScrcpyStartError(RuntimeError):
    pass


@dataclass
class ServerOptions:
    max_size: int = 0
    max_fps: int = 0
    bit_rate: int = 8_000_000
    tunnel_forward: bool = False
    control: bool = True
    send_frame_meta: bool = True
    send_dummy_byte: bool = True
    send_device_meta: bool = True
    extra: dict[str, str] = field(default_factory=dict)

    @classmethod
    def parse(cls, args: list[str]) -> ServerOptions:
        opts = cls()
        for arg in args:
            key, sep, value = arg.partition("=")
            if not sep:
                raise ScrcpyStartError(f"Invalid key=value pair: \"{arg}\"")
            if key in ("max_size", "max_fps", "bit_rate"):
                setattr(opts, key, int(value))
            elif key in ("tunnel_forward", "control", "send_frame_meta", "send_dummy_byte", "send_device_meta"):
                setattr(opts, key, value == "true")
            elif key == "raw_video_stream" and value == "true":
                opts.send_frame_meta = opts.send_dummy_byte = opts.send_device_meta = False
            else:
                opts.extra[key] = value
        return opts


def video_size(width: int, height: int, max_size: int) -> tuple[int, int]:
    """Frame size the way scrcpy computes it: multiples of 8, longest side <= max_size."""
    w, h = width & ~7, height & ~7
    if max_size > 0 and max(w, h) > max_size:
        if w >= h:
            h = (h * max_size // w + 4) & ~7
            w = max_size & ~7
        else:
            w = (w * max_size // h + 4) & ~7
            h = max_size & ~7
    return max(w, 8), max(h, 8)


def split_config(data: bytes) -> tuple[bytes, bytes]:
    """Split leading SPS/PPS NAL units (types 7 and 8) off an Annex-B packet."""
    pos = 0
    config_end = 0
    while True:
        start = data.find(b"\x00\x00\x01", pos)
        if start < 0 or start + 3 >= len(data):
            break
        nal_type = data[start + 3] & 0x1F
        if nal_type not in (7, 8):
            break
        config_end = data.find(b"\x00\x00\x01", start + 3)
        if config_end < 0:
            return data, b""
        if data[config_end - 1] == 0:
            config_end -= 1  # 4-byte start code belongs to the next unit
        pos = config_end
    return data[:config_end], data[config_end:]


class H264Encoder:
    """libx264 through PyAV, tuned like a phone's realtime encoder."""

    def __init__(self, width: int, height: int, bit_rate: int, gop: int = 30, fps: int = 60) -> None:
        import av

        ctx = av.CodecContext.create("libx264", "w")
        ctx.width, ctx.height = width, height
        ctx.pix_fmt = "yuv420p"
        ctx.time_base = Fraction(1, 1_000_000)
        ctx.framerate = Fraction(fps)  # x264 budgets bits per frame from this, not from time_base
        ctx.bit_rate = bit_rate
        ctx.options = {"preset": "ultrafast", "tune": "zerolatency", "g": str(gop), "bf": "0"}
        self.ctx = ctx
        self.width, self.height = width, height

    def encode(self, rgb: np.ndarray, pts_us: int) -> list[tuple[bytes, bool]]:
        import av

        if rgb.shape[1] != self.width or rgb.shape[0] != self.height:
            import cv2

            rgb = cv2.resize(np.ascontiguousarray(rgb), (self.width, self.height), interpolation=cv2.INTER_AREA)
        frame = av.VideoFrame.from_ndarray(np.ascontiguousarray(rgb), format="rgb24")
        frame.pts = pts_us
        return [(bytes(p), bool(p.is_keyframe)) for p in self.ctx.encode(frame)]


class _NewestSlot:
    """Holds one item; ``put`` replaces an untaken one (the newest frame wins)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._item: tuple[np.ndarray, int] | None = None

    def put(self, item: tuple[np.ndarray, int]) -> None:
        with self._cond:
            self._item = item
            self._cond.notify()

    def take(self, timeout: float) -> tuple[np.ndarray, int] | None:
        with self._cond:
            if self._item is None:
                self._cond.wait(timeout)
            item, self._item = self._item, None
            return item


class AbstractNamespace:
    """The phone's abstract Unix socket names: who listens on what."""

    def __init__(self) -> None:
        self._listeners: dict[str, Callable[[Stream], None]] = {}
        self._lock = threading.Lock()

    def listen(self, name: str, handler: Callable[[Stream], None], wait: float = 2.0) -> None:
        """Bind ``name``; waits up to ``wait`` seconds for a previous owner to let go."""
        deadline = time.monotonic() + wait
        while True:
            with self._lock:
                if name not in self._listeners:
                    self._listeners[name] = handler
                    return
            if time.monotonic() >= deadline:
                raise OSError(f"abstract socket @{name} already in use")
            time.sleep(0.05)

    def unlisten(self, name: str, handler: Callable[[Stream], None]) -> None:
        with self._lock:
            if self._listeners.get(name) == handler:  # bound methods are equal, never identical
                del self._listeners[name]

    def lookup(self, name: str) -> Callable[[Stream], None] | None:
        with self._lock:
            return self._listeners.get(name)


class ScrcpyServer:
    """One run of the served scrcpy server."""

    def __init__(
        self,
        phone: ServedPhone,
        namespace: AbstractNamespace,
        fs: VirtualFS,
        write: Callable[[bytes], None],
    ) -> None:
        self.phone = phone
        self.namespace = namespace
        self.fs = fs
        self.write = write
        self.stop = threading.Event()
        self._video: Stream | None = None
        self._control: Stream | None = None
        self._both = threading.Event()
        self._lock = threading.Lock()
        self.clipboard = ""
        self.frames_sent = 0

    # -- entry point (from the shell's app_process) ------------------------------------
    def run(self, argv: list[str], env: dict[str, str], parent_closed: Callable[[float], bool]) -> int:
        try:
            opts = self._check(argv, env)
        except ScrcpyStartError as exc:
            self.write(f"[server] ERROR: {exc}\n".encode())
            return 1
        self.opts = opts
        try:
            self.namespace.listen("scrcpy", self._accept)
        except OSError as exc:
            self.write(f"[server] ERROR: {exc}\n".encode())
            return 1
        try:
            self.write(f"[server] INFO: Device: {self.phone.name} (Android 14)\n".encode())
            while not self.stop.is_set():
                if parent_closed(0.1):
                    break
        finally:
            self._shutdown()
            for s in (self._video, self._control):
                if s is not None:
                    s.close()
        return 0

    def _check(self, argv: list[str], env: dict[str, str]) -> ServerOptions:
        classpath = env.get("CLASSPATH", "")
        if SERVER_CLASS not in argv:
            raise ScrcpyStartError("Could not find the main class: expected " + SERVER_CLASS)
        try:
            jar = self.fs.read(classpath) if classpath else b""
        except OSError:
            jar = b""
        if not jar.startswith(b"PK"):
            raise ScrcpyStartError(
                f"Could not find class '{SERVER_CLASS}' (CLASSPATH={classpath or 'unset'}): push the server jar first"
            )
        rest = argv[argv.index(SERVER_CLASS) + 1 :]
        if not rest or rest[0] != SERVER_VERSION:
            client = rest[0] if rest else "(none)"
            raise ScrcpyStartError(f"The server version ({SERVER_VERSION}) does not match the client ({client})")
        opts = ServerOptions.parse(rest[1:])
        if not opts.tunnel_forward:
            raise ScrcpyStartError("only tunnel_forward=true is supported by the virtual phone (no adb reverse)")
        return opts

    # -- sockets -----------------------------------------------------------------------
    def _accept(self, stream: Stream) -> None:
        with self._lock:
            if self._video is None:
                self._video, role = stream, "video"
            elif self._control is None and self.opts.control:
                self._control, role = stream, "control"
                self._both.set()
            else:
                return  # refuse extra connections: closing the stream is the refusal
        if role == "video":
            if not self.opts.control:
                self._both.set()
            self._serve_video(stream)
        else:
            self._serve_control(stream)

    def _serve_video(self, stream: Stream) -> None:
        try:
            if self.opts.send_dummy_byte:
                stream.write(b"\x00")
            if not self._both.wait(5.0):
                log.warning("scrcpy client never opened the control socket")
                return
            size = self.phone.size()
            w, h = video_size(size.width, size.height, self.opts.max_size)
            self.video_w, self.video_h = w, h
            if self.opts.send_device_meta:
                name = self.phone.name.encode()[: DEVICE_NAME_FIELD_LENGTH - 1]
                stream.write(name.ljust(DEVICE_NAME_FIELD_LENGTH, b"\x00") + struct.pack(">HH", w, h))
            self._encode_loop(stream, w, h)
        except StreamClosed:
            log.debug("scrcpy video socket closed")
        finally:
            self._shutdown()

    def _shutdown(self) -> None:
        """The server is ending: free the socket name at once so a new server can start."""
        self.stop.set()
        self.namespace.unlisten("scrcpy", self._accept)

    def _send_packet(self, stream: Stream, data: bytes, pts: int) -> None:
        if self.opts.send_frame_meta:
            stream.write(struct.pack(">QI", pts, len(data)) + data)
        else:
            stream.write(data)

    def _encode_loop(self, stream: Stream, w: int, h: int) -> None:
        """Encode and send the newest captured frame; capture runs on its own thread so
        rendering the next frame overlaps encoding this one (PyAV encodes without the GIL)."""
        encoder = H264Encoder(w, h, self.opts.bit_rate, fps=self.opts.max_fps or 60)
        slot = _NewestSlot()
        done = threading.Event()
        capture = threading.Thread(target=self._capture_loop, args=(slot, done), name="scrcpy-capture", daemon=True)
        capture.start()
        sent_config = False
        try:
            while not self.stop.is_set() and not stream.closed and capture.is_alive():
                item = slot.take(timeout=0.1)
                if item is None:
                    continue
                rgb, pts = item
                for data, key in encoder.encode(rgb, pts):
                    if not sent_config:
                        config, data = split_config(data)
                        if config:
                            self._send_packet(stream, config, PACKET_FLAG_CONFIG)
                        sent_config = True
                    if data:
                        self._send_packet(stream, data, pts | (PACKET_FLAG_KEY_FRAME if key else 0))
                        self.frames_sent += 1
        finally:
            done.set()
            capture.join(timeout=2)

    def _capture_loop(self, slot: _NewestSlot, done: threading.Event) -> None:
        """Grab a frame whenever the screen changed (and once a second anyway), at most
        ``max_fps`` a second; an unsent older frame is simply replaced."""
        interval = 1.0 / (self.opts.max_fps or 60)
        t0 = time.monotonic()
        last_id: int | None = None
        last_grab = 0.0
        try:
            while not done.is_set() and not self.stop.is_set():
                now = time.monotonic()
                fid = self.phone.frame_id()
                if fid == last_id and now - last_grab < 1.0:
                    self.phone.wait_change(min(interval, 0.05))
                    continue
                last_id = fid
                rgb = self.phone.rgb()
                slot.put((rgb, int((time.monotonic() - t0) * 1e6)))
                last_grab = time.monotonic()
                spare = interval - (last_grab - now)
                if spare > 0:
                    time.sleep(spare)
        except DeviceError as exc:
            log.info("scrcpy capture stopped: %s", exc)

    # -- control -----------------------------------------------------------------------
    def _serve_control(self, stream: Stream) -> None:
        pointers: dict[int, tuple[int, int, float]] = {}
        try:
            while not self.stop.is_set():
                kind = stream.read_exact(1)[0]
                self._handle(kind, stream, pointers)
        except (StreamClosed, ConnectionError):
            log.debug("scrcpy control socket closed")
        except ValueError as exc:
            log.warning("scrcpy control stream desynchronised: %s", exc)
        finally:
            self._shutdown()

    def _handle(self, kind: int, stream: Stream, pointers: dict[int, tuple[int, int, float]]) -> None:
        read = stream.read_exact
        if kind == TYPE_INJECT_KEYCODE:
            action, keycode, repeat, _meta = struct.unpack(">BiiI", read(13))
            if action == 0 and repeat == 0:
                self._apply(lambda: self._key(keycode))
        elif kind == TYPE_INJECT_TEXT:
            (n,) = struct.unpack(">I", read(4))
            if n > 300_000:
                raise ValueError(f"text of {n} bytes")
            text = read(n).decode("utf-8", "replace")
            self._apply(lambda: self.phone.text(text))
        elif kind == TYPE_INJECT_TOUCH_EVENT:
            action, pointer, x, y, w, h, _pressure, _buttons = struct.unpack(">BqiiHHHi", read(27))
            self._touch(action, pointer, x, y, w, h, pointers)
        elif kind == TYPE_INJECT_SCROLL_EVENT:
            x, y, w, h, _hs, vs, _buttons = struct.unpack(">iiHHiii", read(24))
            if (w, h) == (self.video_w, self.video_h) and vs:
                dx, dy = self._to_device(x, y)
                size = self.phone.size()
                dist = int(size.height * 0.25) * (1 if vs > 0 else -1)
                y2 = max(0, min(size.height - 1, dy + dist))
                self._apply(lambda: self.phone.swipe(dx, dy, dx, y2, 200))
        elif kind == TYPE_BACK_OR_SCREEN_ON:
            (action,) = struct.unpack(">B", read(1))
            if action == 0:
                self._apply(lambda: self.phone.key(Key.BACK))
        elif kind in (TYPE_EXPAND_NOTIFICATION_PANEL, TYPE_EXPAND_SETTINGS_PANEL, TYPE_COLLAPSE_PANELS, TYPE_ROTATE_DEVICE):
            pass
        elif kind == TYPE_GET_CLIPBOARD:
            read(1)  # copy_key
            data = self.clipboard.encode()
            stream.write(struct.pack(">BI", 0, len(data)) + data)
        elif kind == TYPE_SET_CLIPBOARD:
            sequence, paste, n = struct.unpack(">QBI", read(13))
            if n > 300_000:
                raise ValueError(f"clipboard text of {n} bytes")
            self.clipboard = read(n).decode("utf-8", "replace")
            if paste:
                text = self.clipboard
                self._apply(lambda: self.phone.text(text))
            if sequence:
                stream.write(struct.pack(">BQ", 1, sequence))
        elif kind == TYPE_SET_SCREEN_POWER_MODE:
            read(1)
        else:
            raise ValueError(f"unknown control message type {kind}")

    def _apply(self, fn: Callable[[], None]) -> None:
        try:
            fn()
        except DeviceError as exc:
            log.info("virtual phone refused input: %s", exc)

    def _key(self, keycode: int) -> None:
        key = KEYCODE_TO_KEY.get(keycode)
        if key is not None:
            self.phone.key(key)

    def _to_device(self, x: int, y: int) -> tuple[int, int]:
        size = self.phone.size()
        return (
            min(size.width - 1, max(0, round(x * size.width / self.video_w))),
            min(size.height - 1, max(0, round(y * size.height / self.video_h))),
        )

    def _touch(
        self, action: int, pointer: int, x: int, y: int, w: int, h: int, pointers: dict[int, tuple[int, int, float]]
    ) -> None:
        if (w, h) != (self.video_w, self.video_h):
            log.debug("ignoring touch for a %dx%d frame (video is %dx%d)", w, h, self.video_w, self.video_h)
            return
        dx, dy = self._to_device(x, y)
        now = time.monotonic()
        if action == 0:  # down
            pointers[pointer] = (dx, dy, now)
        elif action == 1 and pointer in pointers:  # up
            x0, y0, t0 = pointers.pop(pointer)
            held_ms = int((now - t0) * 1000)
            if abs(dx - x0) <= TAP_SLOP_PX and abs(dy - y0) <= TAP_SLOP_PX:
                if held_ms >= LONG_PRESS_MS:
                    self._apply(lambda: self.phone.long_press(x0, y0, held_ms))
                else:
                    self._apply(lambda: self.phone.tap(x0, y0))
            else:
                self._apply(lambda: self.phone.swipe(x0, y0, dx, dy, max(50, held_ms)))
