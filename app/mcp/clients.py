"""How an MCP client is told where Tapwise is: the configuration snippets (stdio and HTTP)
the README documents and the window offers to copy, the bearer token, and the loopback
rule for the HTTP address.  Plain data and strings: no SDK, no sockets, no Qt.
"""

from __future__ import annotations

import ipaddress
import json
import secrets
import shutil
import sys
from pathlib import Path

SERVER_KEY = "tapwise"
HTTP_PATH = "/mcp"
LOOPBACK_NAMES = ("127.0.0.1", "::1", "localhost")


class NotLoopback(ValueError):
    """Tapwise's HTTP server listens on this machine's loopback address only."""


def check_loopback(host: str) -> str:
    """``host`` if it is a loopback address, else ``NotLoopback`` saying why it is refused."""
    h = host.strip().strip("[]")
    if h == "localhost":
        return "127.0.0.1"
    try:
        ok = ipaddress.ip_address(h).is_loopback
    except ValueError:
        ok = False
    if not ok:
        raise NotLoopback(f"{host!r} is not a loopback address: Tapwise serves MCP over HTTP on 127.0.0.1 only "
                          "(any program that can reach the address could drive the phone); use stdio for a client "
                          "on another machine, through your own tunnel")
    return h


def new_token() -> str:
    """A fresh bearer token (256 bits, URL-safe)."""
    return secrets.token_urlsafe(32)


def http_url(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}{HTTP_PATH}"


def tapwise_command() -> list[str]:
    """How a client launches this Tapwise: the ``tapwise`` script beside this interpreter (its
    virtual environment), else the one on PATH, else this interpreter running the CLI module."""
    beside = Path(sys.executable).with_name("tapwise")
    if beside.is_file():
        return [str(beside)]
    exe = shutil.which("tapwise")
    return [exe] if exe else [sys.executable, "-m", "app.cli"]


def stdio_config(device: str = "sim", policy: str = "ask") -> dict[str, object]:
    """The ``mcpServers`` entry for a client that launches ``tapwise mcp`` itself."""
    cmd = tapwise_command()
    args = [*cmd[1:], "mcp", "--device", device]
    if policy != "ask":
        args.append(f"--{policy}")
    return {"mcpServers": {SERVER_KEY: {"command": cmd[0], "args": args}}}


def http_config(url: str, token: str) -> dict[str, object]:
    """The ``mcpServers`` entry for a client that connects to a running window's server."""
    return {"mcpServers": {SERVER_KEY: {"type": "http", "url": url,
                                        "headers": {"Authorization": f"Bearer {token}"}}}}


def as_json(config: dict[str, object]) -> str:
    return json.dumps(config, indent=2, ensure_ascii=False)
