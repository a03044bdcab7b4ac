"""Our scrcpy v3 client: start the official server over adb, read video, send control.

``ScrcpyClient.start()`` verifies the server jar (SHA-256, ``scrcpy_server_jar``), pushes
it, starts it with ``app_process`` on a kept-open shell stream with a random ``scid``,
opens the video then the control socket through ``localabstract:scrcpy_<scid>``, and
reads the dummy byte, the device name and the codec header.  ``read_packet()`` returns
one framed packet at a time and ``H264Decoder`` turns packets into frames (config packets
are merged into the next packet).  Control helpers send touch, scroll, key, text and
clipboard messages in frame pixels; a reader thread collects device messages
(clipboard contents, clipboard acknowledgements).  ``stop()`` closes every stream, which
ends the server on the phone (it removes its own jar: ``cleanup=true``).  The client
never drops input: every message is written in order under one lock.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
import time
from dataclasses import dataclass

from agent.device import DeviceError, DeviceGone
from phone.adb import scrcpy_protocol as proto
from phone.adb.scrcpy_server_jar import DEVICE_JAR_PATH, ServerJar, find_server_jar

log = logging.getLogger(__name__)

#: Gesture timing: finger moves are sent at the display's 60 Hz; a long press holds past
#: Android's 500 ms long-press timeout.
MOVE_INTERVAL_S = 1 / 60
LONG_PRESS_S = 0.8


class ScrcpyError(DeviceError):
    """The scrcpy server could not be started or the stream broke."""


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError(f"stream ended after {len(buf)}/{n} bytes")
        buf += chunk
    return bytes(buf)


def keymap_can_type(text: str) -> bool:
    """True when the server's key character map can type every character (printable
    ASCII, newline, tab); anything else goes through the clipboard and a paste."""
    return all(32 <= ord(c) < 127 or c in "\n\t" for c in text)


def split_utf8(text: str, limit: int) -> list[str]:
    """Split ``text`` into pieces of at most ``limit`` UTF-8 bytes, never inside a character."""
    pieces: list[str] = []
    cur: list[str] = []
    size = 0
    for c in text:
        n = len(c.encode("utf-8"))
        if size + n > limit and cur:
            pieces.append("".join(cur))
            cur, size = [], 0
        cur.append(c)
        size += n
    if cur:
        pieces.append("".join(cur))
    return pieces


@dataclass(frozen=True, slots=True)
class VideoPacket:
    pts: int
    data: bytes
    is_config: bool
    is_key_frame: bool
    received_at: float


class H264Decoder:
    """PyAV h264 decoding of framed packets; config packets are merged into the next one."""

    def __init__(self) -> None:
        import av
        from av.codec.context import Flags

        self._av = av
        self.ctx = av.CodecContext.create("h264", "r")
        self.ctx.flags |= Flags.low_delay
        self.ctx.thread_type = "SLICE"
        self._config = b""

    def decode(self, packet: VideoPacket) -> list:
        if packet.is_config:
            self._config += packet.data
            return []
        data = self._config + packet.data if self._config else packet.data
        self._config = b""
        try:
            return list(self.ctx.decode(self._av.Packet(data)))
        except self._av.error.InvalidDataError as exc:
            log.debug("skipping undecodable packet: %s", exc)
            return []


class ScrcpyClient:
    """One scrcpy v3 session on one device (an ``adbutils.AdbDevice``)."""

    def __init__(
        self,
        adb_device,
        *,
        max_size: int = 0,
        max_fps: int = 0,
        bit_rate: int = 8_000_000,
        connect_timeout: float = 5.0,
        jar: ServerJar | None = None,
    ) -> None:
        self.adb = adb_device
        self.max_size = max_size
        self.max_fps = max_fps
        self.bit_rate = bit_rate
        self.connect_timeout = connect_timeout
        self.jar = jar
        self.scid = proto.new_scid()
        self.device_name = ""
        self.codec_id = 0
        self.frame_width = 0
        self.frame_height = 0
        self._server_conn = None
        self._video: socket.socket | None = None
        self._control: socket.socket | None = None
        self._control_lock = threading.Lock()
        self._server_log: list[str] = []
        self._server_done = threading.Event()
        self._stopped = threading.Event()
        self._messages = threading.Condition()
        self._clipboard: list[str] = []
        self._acks: set[int] = set()
        self._sequence = 0
        self._control_closed = False

    # -- lifecycle -----------------------------------------------------------------------
    def start(self) -> None:
        """Verify, push and start the server and open both sockets; raises ``ScrcpyError``."""
        jar = self.jar or find_server_jar()  # ScrcpyJarError (a DeviceError) when missing or altered
        self.jar = jar
        params = proto.ServerParams(
            version=jar.version, scid=self.scid, max_size=self.max_size, max_fps=self.max_fps,
            video_bit_rate=self.bit_rate,
        )
        try:
            self.adb.sync.push(str(jar.path), DEVICE_JAR_PATH)
            self._check_pushed(jar)
            conn = self.adb.shell(proto.server_command(DEVICE_JAR_PATH, params), stream=True)
        except ScrcpyError:
            raise
        except Exception as exc:  # adbutils errors, socket errors
            raise ScrcpyError(f"could not start the scrcpy server: {exc}") from exc
        self._server_conn = conn
        with contextlib.suppress(Exception):
            conn.conn.settimeout(None)  # the server is silent for long stretches
        threading.Thread(target=self._drain_server_log, name="scrcpy-server-log", daemon=True).start()
        try:
            self._video = self._connect()
            dummy = _recv_exact(self._video, 1)
            if dummy != b"\x00":
                raise ScrcpyError(f"unexpected first byte {dummy!r} on the video socket")
            self._control = self._connect()
            self.device_name = proto.parse_device_name(_recv_exact(self._video, proto.DEVICE_NAME_FIELD_LENGTH))
            meta = proto.parse_codec_meta(_recv_exact(self._video, proto.CODEC_META_SIZE))
        except (ConnectionError, OSError) as exc:
            self.stop()
            raise ScrcpyError(f"scrcpy handshake failed: {exc}", f"server output: {self.server_log().strip()[:300]}") from exc
        except ScrcpyError:
            self.stop()
            raise
        if meta.codec_id != proto.CODEC_ID_H264:
            self.stop()
            raise ScrcpyError(f"the server sent codec 0x{meta.codec_id:08x}; this client asked for h264")
        self.codec_id, self.frame_width, self.frame_height = meta.codec_id, meta.width, meta.height
        threading.Thread(target=self._read_device_messages, name="scrcpy-device-messages", daemon=True).start()
        log.info("scrcpy %s connected to %s, %dx%d (scid %08x)", jar.version, self.device_name,
                 self.frame_width, self.frame_height, self.scid)

    def _check_pushed(self, jar: ServerJar) -> None:
        """Compare the pushed copy's SHA-256 (the phone's ``sha256sum``) with the verified
        jar's; phones without the tool are trusted to the host-side check."""
        out = str(self.adb.shell(f"sha256sum {DEVICE_JAR_PATH}", timeout=10) or "").strip()
        digest = out.split()[0] if out else ""
        if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
            log.info("the phone has no sha256sum (%r): relying on the check before the push", out[:80])
            return
        if digest != jar.sha256:
            raise ScrcpyError(
                f"the server jar on the phone has SHA-256 {digest}, not {jar.sha256}: refusing to run it",
                "the push was corrupted or the file was replaced; reconnect the phone and try again",
            )

    def _connect(self) -> socket.socket:
        from adbutils import Network

        name = proto.socket_name(self.scid)
        deadline = time.monotonic() + self.connect_timeout
        last: Exception | None = None
        while time.monotonic() < deadline and not self._stopped.is_set():
            if self._server_done.is_set():
                break
            try:
                sock = self.adb.create_connection(Network.LOCAL_ABSTRACT, name)
                sock.settimeout(None)
                return sock
            except Exception as exc:  # AdbError until the server listens
                last = exc
                time.sleep(0.05)
        raise ScrcpyError(
            f"the scrcpy server did not accept a connection on @{name} within {self.connect_timeout:.0f}s ({last})",
            f"server output: {self.server_log().strip()[:300] or '(none)'}",
        )

    def _drain_server_log(self) -> None:
        conn = self._server_conn
        try:
            while conn is not None:
                chunk = conn.read(4096)
                if not chunk:
                    break
                text = chunk.decode("utf-8", "replace")
                self._server_log.append(text)
                for line in text.splitlines():
                    log.debug("scrcpy server: %s", line)
        except Exception as exc:
            log.debug("scrcpy server log ended: %s", exc)
        finally:
            self._server_done.set()

    @property
    def server_running(self) -> bool:
        """False once the server's shell stream has ended (the server exited)."""
        return self._server_conn is not None and not self._server_done.is_set()

    def server_log(self) -> str:
        return "".join(self._server_log)

    def stop(self, wait: float = 2.0) -> None:
        """Close the sockets and the server's shell stream; waits up to ``wait`` seconds
        for the server to end."""
        self._stopped.set()
        for sock in (self._video, self._control):
            if sock is not None:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                with contextlib.suppress(OSError):
                    sock.close()
        if self._server_conn is not None:
            self._server_done.wait(wait)
            with contextlib.suppress(Exception):
                self._server_conn.close()
        with self._messages:
            self._control_closed = True
            self._messages.notify_all()

    # -- video -----------------------------------------------------------------------------
    def read_packet(self) -> VideoPacket:
        """The next framed packet; raises ``ConnectionError`` when the stream ends."""
        if self._video is None:
            raise ConnectionError("scrcpy is not started")
        header = proto.parse_frame_header(_recv_exact(self._video, proto.FRAME_HEADER_SIZE))
        if header.size > 64 * 1024 * 1024:
            raise ConnectionError(f"implausible packet size {header.size}")
        data = _recv_exact(self._video, header.size)
        return VideoPacket(header.pts, data, header.is_config, header.is_key_frame, time.monotonic())

    def video_pending(self) -> bool:
        """True when more video bytes are already waiting (so a decoded frame is stale)."""
        import select

        if self._video is None:
            return False
        try:
            ready, _, _ = select.select([self._video], [], [], 0)
        except (OSError, ValueError):
            return False
        return bool(ready)

    # -- device messages -----------------------------------------------------------------
    def _read_device_messages(self) -> None:
        reader = proto.DeviceMessageReader()
        sock = self._control
        try:
            while sock is not None:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                for message in reader.feed(chunk):
                    with self._messages:
                        if isinstance(message, proto.ClipboardMessage):
                            self._clipboard.append(message.text)
                        elif isinstance(message, proto.AckClipboardMessage):
                            self._acks.add(message.sequence)
                        self._messages.notify_all()
        except (OSError, ValueError) as exc:
            log.debug("scrcpy device messages ended: %s", exc)
        finally:
            with self._messages:
                self._control_closed = True
                self._messages.notify_all()

    def _wait_for(self, ready, timeout: float, what: str):
        deadline = time.monotonic() + timeout
        with self._messages:
            while True:
                value = ready()
                if value is not None:
                    return value
                left = deadline - time.monotonic()
                if self._control_closed:
                    raise DeviceGone(f"scrcpy control socket closed while waiting for {what}")
                if left <= 0:
                    raise ScrcpyError(f"the phone did not send {what} within {timeout:.0f}s")
                self._messages.wait(left)

    # -- control ---------------------------------------------------------------------
    def send(self, message: bytes) -> None:
        if self._control is None:
            raise ScrcpyError("scrcpy control socket is not open")
        try:
            with self._control_lock:
                self._control.sendall(message)
        except OSError as exc:
            raise DeviceGone(f"scrcpy control socket closed: {exc}", "the mirror will reconnect") from exc

    def _touch(self, action: proto.MotionAction, x: int, y: int) -> bytes:
        pressure = 0.0 if action is proto.MotionAction.UP else 1.0
        return proto.touch(action, x, y, self.frame_width, self.frame_height, pressure=pressure)

    def tap(self, x: int, y: int, hold_s: float = 0.0) -> None:
        """Finger down and up at frame pixel (x, y), held ``hold_s`` seconds."""
        if hold_s <= 0:
            self.send(self._touch(proto.MotionAction.DOWN, x, y) + self._touch(proto.MotionAction.UP, x, y))
            return
        self.send(self._touch(proto.MotionAction.DOWN, x, y))
        time.sleep(hold_s)
        self.send(self._touch(proto.MotionAction.UP, x, y))

    def long_press(self, x: int, y: int, hold_s: float = LONG_PRESS_S) -> None:
        self.tap(x, y, hold_s=max(hold_s, 0.55))

    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_s: float = 0.3) -> None:
        """Down, moves at 60 Hz along the line, up: the way a finger reports itself."""
        steps = max(1, round(duration_s / MOVE_INTERVAL_S))
        self.send(self._touch(proto.MotionAction.DOWN, x1, y1))
        start = time.monotonic()
        for i in range(1, steps + 1):
            due = start + i * duration_s / steps
            delay = due - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            self.send(self._touch(proto.MotionAction.MOVE, x1 + (x2 - x1) * i // steps, y1 + (y2 - y1) * i // steps))
        self.send(self._touch(proto.MotionAction.UP, x2, y2))

    def scroll(self, x: int, y: int, vscroll: float, hscroll: float = 0.0) -> None:
        self.send(proto.scroll(x, y, self.frame_width, self.frame_height, hscroll, vscroll))

    def key(self, code: int) -> None:
        self.send(proto.keycode(proto.KeyAction.DOWN, code) + proto.keycode(proto.KeyAction.UP, code))

    def back_or_screen_on(self) -> None:
        self.send(proto.back_or_screen_on(proto.KeyAction.DOWN) + proto.back_or_screen_on(proto.KeyAction.UP))

    def rotate(self) -> None:
        self.send(proto.empty(proto.ControlType.ROTATE_DEVICE))

    def set_display_power(self, on: bool) -> None:
        self.send(proto.set_display_power(on))

    def inject_text(self, value: str) -> None:
        """Type text the key map can type (see ``keymap_can_type``), 300 bytes a message."""
        for piece in split_utf8(value, proto.INJECT_TEXT_MAX_BYTES):
            self.send(proto.text(piece))

    def set_clipboard(self, value: str, *, paste: bool = False, timeout: float = 5.0) -> None:
        """Set the phone's clipboard (and paste it) and wait for the phone's acknowledgement."""
        with self._messages:
            self._sequence += 1
            seq = self._sequence
        self.send(proto.set_clipboard(value, paste=paste, sequence=seq))
        self._wait_for(lambda: True if seq in self._acks else None, timeout, f"the clipboard acknowledgement #{seq}")

    def get_clipboard(self, timeout: float = 5.0) -> str:
        with self._messages:
            self._clipboard.clear()
        self.send(proto.get_clipboard(proto.CopyKey.NONE))
        return str(self._wait_for(lambda: self._clipboard[-1] if self._clipboard else None, timeout, "its clipboard"))

    def type_text(self, value: str) -> None:
        """Type any text: key-map text is injected; other Unicode (``"Grüße 👋"``) is pasted."""
        if keymap_can_type(value):
            self.inject_text(value)
            return
        for piece in split_utf8(value, proto.CLIPBOARD_TEXT_MAX_BYTES):
            self.set_clipboard(piece, paste=True)
