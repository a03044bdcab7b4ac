"""The served phone's scrcpy v3 server: what ``app_process … com.genymobile.scrcpy.Server``
does on a phone when the official v3 jar has been pushed.

It checks that the jar named by ``CLASSPATH`` is an official release (by SHA-256) whose
version equals the client's, listens on the abstract socket ``scrcpy_<scid>`` (forward
tunnel only), and serves the sockets in the v3 order: video (dummy byte, 64-byte device
name, codec id and size, then H.264 packets from PyAV's libx264 behind 12-byte headers)
and control.  Control messages are read with its own reader built from the protocol's
constants (as the server's ``ControlMessageReader`` does), applied to the phone (a touch
down/up becomes a tap, long press or swipe; text the key map cannot type is skipped like
on a phone; a paste types the clipboard) and answered with device messages (clipboard,
clipboard acknowledgement).  When a socket or the shell stream closes it stops, frees the
socket name and, with ``cleanup=true``, deletes its jar.  It never decodes video.
"""

from __future__ import annotations

import hashlib
import logging
import struct
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from agent.device import DeviceError, Key

# The wire format is defined once, on the client side; the served phone speaks the same.
from phone.adb.scrcpy_protocol import (
    CODEC_ID_H264,
    DEVICE_NAME_FIELD_LENGTH,
    PACKET_FLAG_CONFIG,
    PACKET_FLAG_KEY_FRAME,
    SERVER_CLASS,
    ControlType,
    socket_name,
)
from phone.adb.scrcpy_server_jar import known_version
from phone.virtual.wire.adb_server import Stream, StreamClosed
from phone.virtual.wire.scrcpy_control import (
    ControlMessage,
    ack_clipboard_message,
    clipboard_message,
    read_control_message,
)
from phone.virtual.wire.scrcpy_video import H264Encoder, NewestSlot, split_config, video_size
from phone.virtual.wire.served_phone import ServedPhone
from phone.virtual.wire.vfs import VirtualFS

log = logging.getLogger(__name__)

KEYCODE_TO_KEY = {3: Key.HOME, 4: Key.BACK, 66: Key.ENTER, 187: Key.APP_SWITCH, 67: Key.DEL, 61: Key.TAB}
KEYCODE_PASTE = 279

#: Gestures shorter than this (device px) count as taps; held longer (ms) as long presses.
TAP_SLOP_PX = 24
LONG_PRESS_MS = 500


class ScrcpyStartError(RuntimeError):
    pass


class ClipboardHolder(Protocol):
    clipboard: str


@dataclass
class _OwnClipboard:
    clipboard: str = ""


@dataclass
class ServerOptions:
    """The v3 server options the virtual phone honours (others are logged and ignored)."""

    scid: int | None = None
    max_size: int = 0
    max_fps: int = 0
    video_bit_rate: int = 8_000_000
    tunnel_forward: bool = False
    video: bool = True
    audio: bool = True
    control: bool = True
    video_codec: str = "h264"
    send_frame_meta: bool = True
    send_dummy_byte: bool = True
    send_device_meta: bool = True
    send_codec_meta: bool = True
    cleanup: bool = True
    clipboard_autosync: bool = True
    extra: dict[str, str] = field(default_factory=dict)

    @classmethod
    def parse(cls, args: list[str]) -> ServerOptions:
        opts = cls()
        flags = ("tunnel_forward", "video", "audio", "control", "send_frame_meta", "send_dummy_byte",
                 "send_device_meta", "send_codec_meta", "cleanup", "clipboard_autosync")
        for arg in args:
            key, sep, value = arg.partition("=")
            if not sep:
                raise ScrcpyStartError(f'Invalid key=value pair: "{arg}"')
            try:
                if key == "scid":
                    opts.scid = int(value, 16)
                    if opts.scid >> 31:
                        raise ValueError(value)
                elif key in ("max_size", "max_fps", "video_bit_rate"):
                    setattr(opts, key, int(float(value)) if key == "max_fps" else int(value))
                elif key in flags:
                    setattr(opts, key, value == "true")
                elif key == "video_codec":
                    opts.video_codec = value
                elif key == "raw_stream" and value == "true":
                    opts.send_frame_meta = opts.send_dummy_byte = False
                    opts.send_device_meta = opts.send_codec_meta = False
                else:
                    opts.extra[key] = value
            except ValueError as exc:
                raise ScrcpyStartError(f"Invalid value for {key}: {value!r}") from exc
        return opts


def keymap_types(char: str) -> bool:
    """Whether a phone's virtual key character map has keys for ``char``."""
    return 32 <= ord(char) < 127 or char in "\n\t"


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

    def names(self) -> list[str]:
        with self._lock:
            return sorted(self._listeners)


class ScrcpyServer:
    """One run of the served scrcpy server."""

    def __init__(
        self,
        phone: ServedPhone,
        namespace: AbstractNamespace,
        fs: VirtualFS,
        write: Callable[[bytes], None],
        *,
        state: ClipboardHolder | None = None,
    ) -> None:
        self.phone = phone
        self.namespace = namespace
        self.fs = fs
        self.write = write
        self.state: ClipboardHolder = state if state is not None else _OwnClipboard()
        self.stop = threading.Event()
        self.opts = ServerOptions()
        self.socket_name = socket_name(None)
        self.jar_path = ""
        self.video_w = self.video_h = 0
        self._video: Stream | None = None
        self._control: Stream | None = None
        self._both = threading.Event()
        self._lock = threading.Lock()
        self._control_write = threading.Lock()
        self.frames_sent = 0
        self.skipped_chars = 0
        self.received: Counter[ControlType] = Counter()  # control messages handled, by type

    @property
    def clipboard(self) -> str:
        return self.state.clipboard

    # -- entry point (from the shell's app_process) ------------------------------------
    def run(self, argv: list[str], env: dict[str, str], parent_closed: Callable[[float], bool]) -> int:
        try:
            self.opts = self._check(argv, env)
        except ScrcpyStartError as exc:
            self.write(f"[server] ERROR: {exc}\n".encode())
            return 1
        self.socket_name = socket_name(self.opts.scid)
        try:
            self.namespace.listen(self.socket_name, self._accept)
        except OSError as exc:
            self.write(f"[server] ERROR: {exc}\n".encode())
            return 1
        try:
            self.write(f"[server] INFO: Device: [Tapwise] tapwise {self.phone.name} (Android 14)\n".encode())
            while not self.stop.is_set():
                if parent_closed(0.1):
                    break
        finally:
            self._shutdown()
            for s in (self._video, self._control):
                if s is not None:
                    s.close()
            if self.opts.cleanup and self.jar_path:
                try:
                    self.fs.remove(self.jar_path)
                except OSError:
                    pass
        return 0

    def _check(self, argv: list[str], env: dict[str, str]) -> ServerOptions:
        classpath = env.get("CLASSPATH", "")
        if SERVER_CLASS not in argv:
            raise ScrcpyStartError("Could not find the main class: expected " + SERVER_CLASS)
        try:
            jar = self.fs.read(classpath) if classpath else b""
        except OSError:
            jar = b""
        version = known_version(hashlib.sha256(jar).hexdigest()) if jar else None
        if version is None:
            what = "is not an official scrcpy v3 server" if jar else "does not exist"
            raise ScrcpyStartError(
                f"java.lang.ClassNotFoundException: {SERVER_CLASS} (CLASSPATH={classpath or 'unset'} {what})"
            )
        rest = argv[argv.index(SERVER_CLASS) + 1 :]
        client = rest[0] if rest else "(none)"
        if client != version:
            raise ScrcpyStartError(f"The server version ({version}) does not match the client ({client})")
        opts = ServerOptions.parse(rest[1:])
        if not opts.tunnel_forward:
            raise ScrcpyStartError("only tunnel_forward=true is supported by the virtual phone (no adb reverse)")
        if opts.audio:
            raise ScrcpyStartError("the virtual phone has no audio: pass audio=false")
        if not opts.video:
            raise ScrcpyStartError("the virtual phone serves video: do not pass video=false")
        if opts.video_codec != "h264":
            raise ScrcpyStartError(f"video codec {opts.video_codec!r} is not available on this phone (h264 is)")
        for key in opts.extra:
            log.debug("scrcpy server option ignored by the virtual phone: %s", key)
        self.jar_path = classpath
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
                stream.write(b"\x00")  # first socket of a forward tunnel
            if not self._both.wait(5.0):
                log.warning("scrcpy client never opened the control socket")
                return
            if self.opts.send_device_meta:
                name = self.phone.name.encode()[: DEVICE_NAME_FIELD_LENGTH - 1]
                stream.write(name.ljust(DEVICE_NAME_FIELD_LENGTH, b"\x00"))
            size = self.phone.size()
            w, h = video_size(size.width, size.height, self.opts.max_size)
            self.video_w, self.video_h = w, h
            if self.opts.send_codec_meta:
                stream.write(struct.pack(">III", CODEC_ID_H264, w, h))
            self._encode_loop(stream, w, h)
        except StreamClosed:
            log.debug("scrcpy video socket closed")
        finally:
            self._shutdown()

    def _shutdown(self) -> None:
        """The server is ending: free the socket name at once so a new server can start."""
        self.stop.set()
        self.namespace.unlisten(self.socket_name, self._accept)

    def _send_packet(self, stream: Stream, data: bytes, pts: int) -> None:
        if self.opts.send_frame_meta:
            stream.write(struct.pack(">QI", pts, len(data)) + data)
        else:
            stream.write(data)

    def _encode_loop(self, stream: Stream, w: int, h: int) -> None:
        """Encode and send the newest captured frame; capture runs on its own thread so
        rendering the next frame overlaps encoding this one (PyAV encodes without the GIL)."""
        encoder = H264Encoder(w, h, self.opts.video_bit_rate, fps=self.opts.max_fps or 60)
        slot = NewestSlot()
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

    def _capture_loop(self, slot: NewestSlot, done: threading.Event) -> None:
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
                if not slot.wait_empty(0.1):
                    continue  # the encoder is still busy with the previous frame
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
                self.handle(read_control_message(stream.read_exact), stream.write, pointers)
        except (StreamClosed, ConnectionError):
            log.debug("scrcpy control socket closed")
        except ValueError as exc:
            log.warning("scrcpy control stream desynchronised: %s", exc)
        finally:
            self._shutdown()

    def handle(self, msg: ControlMessage, reply: Callable[[bytes], None],
               pointers: dict[int, tuple[int, int, float]]) -> None:
        """Apply one control message to the phone; device messages go to ``reply``."""
        kind = msg.type
        self.received[kind] += 1
        if kind is ControlType.INJECT_KEYCODE:
            if msg.action == 0 and msg.repeat == 0:
                self._key(msg.keycode)
        elif kind is ControlType.INJECT_TEXT:
            self._type(msg.text)
        elif kind is ControlType.INJECT_TOUCH_EVENT:
            self._touch(msg, pointers)
        elif kind is ControlType.INJECT_SCROLL_EVENT:
            if (msg.screen_width, msg.screen_height) == (self.video_w, self.video_h) and msg.vscroll:
                dx, dy = self._to_device(msg.x, msg.y)
                size = self.phone.size()
                # a notch up (positive) brings earlier content: the finger moves down
                dist = int(size.height * 0.25) * (1 if msg.vscroll > 0 else -1)
                y2 = max(0, min(size.height - 1, dy + dist))
                self._apply(lambda: self.phone.swipe(dx, dy, dx, y2, 200))
        elif kind is ControlType.BACK_OR_SCREEN_ON:
            if msg.action == 0:
                self._apply(lambda: self.phone.key(Key.BACK))
        elif kind is ControlType.GET_CLIPBOARD:
            self._send(reply, clipboard_message(self.state.clipboard))
        elif kind is ControlType.SET_CLIPBOARD:
            self.state.clipboard = msg.text
            if msg.paste:
                self._key(KEYCODE_PASTE)
            if msg.sequence:
                self._send(reply, ack_clipboard_message(msg.sequence))
        elif kind is ControlType.START_APP:
            name = msg.text.lstrip("+?")
            self._apply(lambda: self.phone.open_app(name))
        else:
            log.debug("scrcpy control message %s has no effect on the virtual phone", kind.name)

    def _send(self, reply: Callable[[bytes], None], data: bytes) -> None:
        with self._control_write:
            reply(data)

    def _apply(self, fn: Callable[[], None]) -> None:
        try:
            fn()
        except DeviceError as exc:
            log.info("virtual phone refused input: %s", exc)

    def _type(self, text: str) -> None:
        """Type what the key map can; like a phone, skip (and log) every other character."""
        typed = "".join(c for c in text if keymap_types(c))
        skipped = len(text) - len(typed)
        if skipped:
            self.skipped_chars += skipped
            log.info("could not inject %d character(s) with the key map", skipped)
        if typed:
            self._apply(lambda: self.phone.text(typed))

    def _key(self, keycode: int) -> None:
        if keycode == KEYCODE_PASTE:
            text = self.state.clipboard
            if text:
                self._apply(lambda: self.phone.text(text))
            return
        key = KEYCODE_TO_KEY.get(keycode)
        if key is not None:
            self._apply(lambda: self.phone.key(key))

    def _to_device(self, x: int, y: int) -> tuple[int, int]:
        size = self.phone.size()
        return (
            min(size.width - 1, max(0, round(x * size.width / self.video_w))),
            min(size.height - 1, max(0, round(y * size.height / self.video_h))),
        )

    def _touch(self, msg: ControlMessage, pointers: dict[int, tuple[int, int, float]]) -> None:
        if (msg.screen_width, msg.screen_height) != (self.video_w, self.video_h):
            log.debug("ignoring touch for a %dx%d frame (video is %dx%d)",
                      msg.screen_width, msg.screen_height, self.video_w, self.video_h)
            return
        dx, dy = self._to_device(msg.x, msg.y)
        now = time.monotonic()
        if msg.action == 0:  # down
            pointers[msg.pointer_id] = (dx, dy, now)
        elif msg.action == 1 and msg.pointer_id in pointers:  # up
            x0, y0, t0 = pointers.pop(msg.pointer_id)
            held_ms = int((now - t0) * 1000)
            if abs(dx - x0) <= TAP_SLOP_PX and abs(dy - y0) <= TAP_SLOP_PX:
                if held_ms >= LONG_PRESS_MS:
                    self._apply(lambda: self.phone.long_press(x0, y0, held_ms))
                else:
                    self._apply(lambda: self.phone.tap(x0, y0))
            else:
                self._apply(lambda: self.phone.swipe(x0, y0, dx, dy, max(50, held_ms)))
