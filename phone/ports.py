"""A free TCP port on loopback, for the servers the project starts for itself (llama.cpp's
server, served virtual phones, an adb server of its own, the farm's Ray head).

Asks the kernel for one by binding port 0 and lets it go at once, so another program may
take it before the caller binds it; good enough for loopback servers started right after.
Opens no connection and keeps nothing.
"""

from __future__ import annotations

import socket

LOOPBACK = "127.0.0.1"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listened on a moment ago."""
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        return int(s.getsockname()[1])
