"""The served phone's uiautomator2 server: what ``com.wetest.uia2.Main`` does on a phone.

The ``uiautomator2`` library pushes ``u2.jar``, starts
``CLASSPATH=/data/local/tmp/u2.jar app_process / com.wetest.uia2.Main -p 9008`` over an adb
shell stream, then talks HTTP to port 9008 through adb's ``tcp:9008`` service: ``GET /ping``
answers ``pong`` once it is ready, and ``POST /jsonrpc/0`` carries JSON-RPC 2.0 calls.  This
module implements that server for the virtual phone, for the calls Tapwise and the
library's own helpers make: ``dumpWindowHierarchy`` (the same XML ``uiautomator dump``
writes, returned even while the screen animates), ``deviceInfo``, ``click``, ``swipe``,
``drag``, ``swipePoints``, ``injectInputEvent``, ``pressKey``/``pressKeyCode``,
``setClipboard``/``getClipboard``/``pasteClipboard``, ``takeScreenshot``, ``wakeUp``/``sleep``.
HTTP parsing is the standard library's ``http.server``; adb framing lives in
``adb_server``; the port table in ``tcp_ports``.  It never touches the phone's pixels
beyond ``takeScreenshot`` and keeps no state besides the touch in progress.
"""

from __future__ import annotations

import base64
import io
import json
import logging
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from typing import Any

from agent.device import DeviceError, Key
from phone.virtual.wire.adb_server import Stream, StreamClosed
from phone.virtual.wire.served_phone import ServedPhone
from phone.virtual.wire.shell_commands import KEYCODES, DeviceState
from phone.virtual.wire.tcp_ports import TcpPorts

log = logging.getLogger(__name__)

MAIN_CLASS = "com.wetest.uia2.Main"
DEFAULT_PORT = 9008
#: Key names ``pressKey`` accepts (uiautomator's names) that the virtual phone has.
KEY_NAMES: dict[str, Key] = {
    "home": Key.HOME, "back": Key.BACK, "enter": Key.ENTER, "delete": Key.DEL, "del": Key.DEL,
    "recent": Key.APP_SWITCH, "tab": Key.TAB,
}
#: uiautomator throttles each swipe step to 5 ms.
STEP_MS = 5
# JSON-RPC error codes: the standard ones, and the one uiautomator2's server uses for
# exceptions thrown by the device side.
ERR_PARSE = -32700
ERR_METHOD = -32601
ERR_PARAMS = -32602
ERR_DEVICE = -32001


def is_u2_launch(argv: list[str]) -> bool:
    """Whether an ``app_process`` command line starts the uiautomator2 server."""
    return MAIN_CLASS in argv


class RpcError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class U2Server:
    """One run of the served uiautomator2 server (lives as long as its shell stream)."""

    def __init__(
        self, phone: ServedPhone, state: DeviceState, ports: TcpPorts, write: Callable[[bytes], None]
    ) -> None:
        self.phone = phone
        self.state = state
        self.ports = ports
        self.write = write
        self.port = DEFAULT_PORT
        self._touch_down: tuple[int, int] | None = None
        self.methods: dict[str, Callable[..., Any]] = {
            "dumpWindowHierarchy": self.dump_window_hierarchy,
            "deviceInfo": self.device_info,
            "click": self.click,
            "swipe": self.swipe,
            "drag": self.swipe,
            "swipePoints": self.swipe_points,
            "injectInputEvent": self.inject_input_event,
            "pressKey": self.press_key,
            "pressKeyCode": self.press_key_code,
            "setClipboard": self.set_clipboard,
            "getClipboard": self.get_clipboard,
            "pasteClipboard": self.paste_clipboard,
            "takeScreenshot": self.take_screenshot,
            "wakeUp": lambda: self._screen(True),
            "sleep": lambda: self._screen(False),
        }

    # -- process lifetime -------------------------------------------------------------------
    def run(self, argv: list[str], env: dict[str, str], wait_closed: Callable[[float | None], bool]) -> int:
        """Serve until the shell stream that started us closes; returns the exit status."""
        jar = env.get("CLASSPATH", "")
        if not jar or not self.state.fs.exists(jar):
            self.write(
                f"Error: Could not find or load main class {MAIN_CLASS}\n"
                f"Caused by: java.lang.ClassNotFoundException: {MAIN_CLASS} (CLASSPATH={jar or 'unset'})\n".encode()
            )
            return 1
        if "-p" in argv:
            self.port = int(argv[argv.index("-p") + 1])
        try:
            self.ports.listen(self.port, self.serve)
        except OSError as exc:
            self.write(f"java.net.BindException: {exc}\n".encode())
            return 1
        log.info("uiautomator2 server on the virtual phone listens on tcp:%d", self.port)
        try:
            self.write(f"[server] INFO: [UiAutomator2Server] Starting Server on port {self.port}\n".encode())
            wait_closed(None)
        except StreamClosed:
            pass
        finally:
            self.ports.unlisten(self.port, self.serve)
        return 0

    def serve(self, stream: Stream) -> None:
        """One ``tcp:PORT`` connection: HTTP/1.1 requests until the host hangs up."""
        # http.server only needs ``request`` for setup() (overridden) and ``server`` for call().
        _HttpHandler(stream, ("127.0.0.1", 0), self)  # type: ignore[arg-type]

    # -- JSON-RPC --------------------------------------------------------------------------
    def call(self, payload: Any) -> dict[str, Any]:
        req_id = payload.get("id") if isinstance(payload, dict) else None
        try:
            if not isinstance(payload, dict) or not isinstance(payload.get("method"), str):
                raise RpcError(ERR_PARSE, "a JSON-RPC request object with a method is required")
            fn = self.methods.get(payload["method"])
            if fn is None:
                raise RpcError(ERR_METHOD, f"Method not found: {payload['method']} (not on the virtual phone)")
            params = payload.get("params") or []
            try:
                result = fn(**params) if isinstance(params, dict) else fn(*params)
            except TypeError as exc:
                raise RpcError(ERR_PARAMS, f"Invalid params for {payload['method']}: {exc}") from exc
            except DeviceError as exc:
                raise RpcError(ERR_DEVICE, f"com.tapwise.sim.DeviceError: {exc}") from exc
        except RpcError as exc:
            return {"jsonrpc": "2.0", "id": req_id, "error": {"code": exc.code, "message": exc.message}}
        return {"jsonrpc": "2.0", "id": req_id, "result": result}

    def dump_window_hierarchy(self, compressed: bool = False, max_depth: int = 50, root_in_active: Any = None) -> str:
        # The virtual phone has no "unimportant" views to compress away and no tree deeper
        # than max_depth, so every variant is the uiautomator dump text.
        return self.phone.hierarchy()

    def device_info(self) -> dict[str, Any]:
        size = self.phone.size()
        dpi = self.phone.density()
        package, _activity = self.phone.foreground()
        return {
            "currentPackageName": package,
            "displayWidth": size.width,
            "displayHeight": size.height,
            "displayRotation": 0,
            "displaySizeDpX": round(size.width * 160 / dpi),
            "displaySizeDpY": round(size.height * 160 / dpi),
            "naturalOrientation": True,
            "productName": self.state.props.get("ro.product.name", ""),
            "screenOn": self.state.screen_on,
            "sdkInt": int(self.state.props.get("ro.build.version.sdk", "34")),
        }

    def click(self, x: int, y: int, duration_ms: int | None = None) -> bool:
        if duration_ms is not None and duration_ms >= 400:
            self.phone.long_press(int(x), int(y), int(duration_ms))
        else:
            self.phone.tap(int(x), int(y))
        return True

    def swipe(self, fx: int, fy: int, tx: int, ty: int, steps: int = 55) -> bool:
        ms = max(1, int(steps)) * STEP_MS
        if (int(fx), int(fy)) == (int(tx), int(ty)) and ms >= 400:
            self.phone.long_press(int(fx), int(fy), ms)
        else:
            self.phone.swipe(int(fx), int(fy), int(tx), int(ty), ms)
        return True

    def swipe_points(self, points: list[int], steps: int = 55) -> bool:
        if len(points) < 4 or len(points) % 2:
            raise RpcError(ERR_PARAMS, "swipePoints needs x,y pairs for at least two points")
        xy = list(zip(points[0::2], points[1::2], strict=True))
        per = max(1, int(steps) // (len(xy) - 1))
        for (x1, y1), (x2, y2) in zip(xy, xy[1:], strict=False):
            self.swipe(x1, y1, x2, y2, per)
        return True

    def inject_input_event(self, action: int, x: int, y: int, meta_state: int = 0) -> bool:
        """Raw touch: down (0) remembers the point, up (1) taps or swipes; move (2) is implied."""
        if action == 0:
            self._touch_down = (int(x), int(y))
        elif action == 1:
            start, self._touch_down = self._touch_down, None
            if start is None:
                return False
            self.swipe(start[0], start[1], int(x), int(y), 20)
        return True

    def press_key(self, name: str) -> bool:
        key = KEY_NAMES.get(str(name).lower())
        if key is None:
            return False
        self.phone.key(key)
        return True

    def press_key_code(self, code: int, meta: int | None = None) -> bool:
        key = KEYCODES.get(int(code))
        if key is None:
            return False
        self.phone.key(key)
        return True

    def set_clipboard(self, label: str | None, text: str) -> None:
        self.state.clipboard = str(text)

    def get_clipboard(self) -> str:
        return self.state.clipboard

    def paste_clipboard(self) -> None:
        if self.state.clipboard:
            self.phone.text(self.state.clipboard)

    def take_screenshot(self, scale: float = 1.0, quality: int = 80) -> str:
        from PIL import Image

        image = Image.fromarray(self.phone.rgb())
        if 0 < scale < 1:
            image = image.resize((max(1, int(image.width * scale)), max(1, int(image.height * scale))))
        buf = io.BytesIO()
        image.save(buf, format="JPEG", quality=max(1, min(100, int(quality))))
        return base64.b64encode(buf.getvalue()).decode("ascii")

    def _screen(self, on: bool) -> bool:
        self.state.screen_on = on
        return True


class _StreamReader(io.RawIOBase):
    """An ADB stream as a readable file (what ``http.server`` reads requests from)."""

    def __init__(self, stream: Stream) -> None:
        self.stream = stream

    def readable(self) -> bool:
        return True

    def readinto(self, buf: Any) -> int:
        data = self.stream.read(len(buf))
        buf[: len(data)] = data
        return len(data)


class _StreamWriter(io.RawIOBase):
    def __init__(self, stream: Stream) -> None:
        self.stream = stream

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        chunk = bytes(data)
        self.stream.write(chunk)
        return len(chunk)


class _HttpHandler(BaseHTTPRequestHandler):
    """``GET /ping`` and ``POST /jsonrpc/0`` over one ADB stream."""

    protocol_version = "HTTP/1.1"
    server_version = "TapwiseU2/1"
    server: U2Server  # type: ignore[assignment]  # http.server types this as its own server class

    def setup(self) -> None:
        stream: Stream = self.request
        self.rfile = io.BufferedReader(_StreamReader(stream))
        self.wfile = io.BufferedWriter(_StreamWriter(stream), buffer_size=1 << 20)

    def finish(self) -> None:
        try:
            self.wfile.flush()
        except (StreamClosed, ValueError):
            pass

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("u2 http: " + format, *args)

    def _reply(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        if self.path == "/ping":
            self._reply(200, b"pong", "text/plain")
        else:
            self._reply(404, b"not found", "text/plain")

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if self.path != "/jsonrpc/0":
            self._reply(404, b"not found", "text/plain")
            return
        try:
            payload = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            reply: dict[str, Any] = {"jsonrpc": "2.0", "id": None, "error": {"code": ERR_PARSE, "message": str(exc)}}
        else:
            reply = self.server.call(payload)
        body = json.dumps(reply, ensure_ascii=False).encode("utf-8")
        self._reply(200, body, "application/json; charset=utf-8")
