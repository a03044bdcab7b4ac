"""The served phone's listening TCP ports: who answers adb's ``tcp:PORT`` service.

A program running "on" the virtual phone (the uiautomator2 server) binds a port here while
it runs and unbinds it when it stops; ``adbd`` looks the port up when the host opens
``tcp:PORT`` (which is what ``adb forward`` and adbutils' ``create_connection`` do).  A
port nobody listens on is refused, like a closed port on a phone.  It speaks no protocol.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from phone.virtual.wire.adb_server import Stream

Handler = Callable[[Stream], None]


def parse_tcp_destination(destination: str) -> int | None:
    """The port of ``tcp:PORT`` or ``tcp:HOST:PORT`` (loopback only); ``None`` otherwise."""
    if not destination.startswith("tcp:"):
        return None
    parts = destination[len("tcp:") :].split(":")
    if len(parts) == 2 and parts[0] not in ("localhost", "127.0.0.1"):
        return None  # the virtual phone has no network beyond itself
    try:
        port = int(parts[-1])
    except ValueError:
        return None
    return port if 0 < port < 65536 else None


class TcpPorts:
    """Port number -> the handler of the program listening on it."""

    def __init__(self) -> None:
        self._listeners: dict[int, Handler] = {}
        self._lock = threading.Lock()

    def listen(self, port: int, handler: Handler) -> None:
        with self._lock:
            if port in self._listeners:
                raise OSError(f"bind failed: port {port} is already in use (EADDRINUSE)")
            self._listeners[port] = handler

    def unlisten(self, port: int, handler: Handler) -> None:
        with self._lock:
            if self._listeners.get(port) == handler:
                del self._listeners[port]

    def lookup(self, port: int) -> Handler | None:
        with self._lock:
            return self._listeners.get(port)
