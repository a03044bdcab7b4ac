"""The SDK's client launches ``tapwise mcp`` over stdio, as a desktop client does, against
the virtual phone; with nobody at a terminal the stated policy decides."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from mcp.types import Implementation
from typer.testing import CliRunner

from app.cli import app as cli_app
from app.storage import Store
from tests.mcp.support import element_id, text_of

REPO = Path(__file__).resolve().parents[2]


def server(db: Path, *policy: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, cwd=str(REPO), env=dict(os.environ),
                                 args=["-m", "app.cli", "mcp", "--device", "sim", "--parse", "tree", "--no-terminal",
                                       "--db", str(db), *policy])


def session(params: StdioServerParameters, name: str = "stdio-agent") -> Client:
    return Client(params, client_info=Implementation(name=name, version="1"), read_timeout_seconds=120)


def test_stdio_client_observes_taps_types_and_is_refused_what_needs_a_person(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    out: dict[str, Any] = {}

    async def go() -> None:
        async with session(server(db, "--auto")) as c:
            out["tools"] = {t.name for t in (await c.list_tools()).tools}
            home = await c.call_tool("observe", {})
            out["home"] = text_of(home)
            msgs = await c.call_tool("tap", {"element_id": element_id(home, "Messages")})
            out["stale"] = await c.call_tool("tap", {"element_id": element_id(home, "Settings")})
            chat = await c.call_tool("tap", {"element_id": element_id(msgs, "Alice Johnson", "button")})
            typed = await c.call_tool("type_text", {"text": "Ça va? 😀 你好", "element_id":
                                                    element_id(chat, "Text message", "edit_text")})
            out["typed"] = typed
            out["send"] = await c.call_tool("tap", {"element_id": element_id(typed, "Send SMS")})
            out["episode"] = await c.call_tool("read_episode", {})

    anyio.run(go)
    assert {"observe", "tap", "type_text", "run_task", "run_macro", "read_episode"} <= out["tools"]
    assert "nexuslauncher" in out["home"]
    assert out["stale"].is_error and "stale" in text_of(out["stale"]) and "observe again" in text_of(out["stale"])
    assert not out["typed"].is_error and "Ça va? 😀 你好" in text_of(out["typed"])
    # --auto carries out ordinary steps, but sending is sensitive: it waits for a person, and with
    # nobody at a terminal it is refused, never carried out
    send = text_of(out["send"])
    assert out["send"].is_error and "sending" in send and "nobody can approve" in send
    assert '"outcome": "rejected"' in text_of(out["episode"])
    with Store(db) as store:
        rows = store.list_episodes()
        assert [r["goal"] for r in rows] == ["MCP client: stdio-agent"]
        assert rows[0]["steps"] == 6 and rows[0]["status"] == "succeeded"  # finished when the client left


def test_read_only_refuses_acting_calls_with_the_reason(tmp_path: Path) -> None:
    out: dict[str, Any] = {}

    async def go() -> None:
        async with session(server(tmp_path / "t.db", "--read-only")) as c:
            home = await c.call_tool("observe", {})
            out["tap"] = await c.call_tool("tap", {"element_id": element_id(home, "Settings")})
            out["after"] = await c.call_tool("observe", {})

    anyio.run(go)
    assert out["tap"].is_error and "read-only" in text_of(out["tap"])
    assert "nexuslauncher" in text_of(out["after"])


def test_http_refuses_a_non_loopback_address() -> None:
    result = CliRunner().invoke(cli_app, ["mcp", "--http", "--host", "0.0.0.0", "--no-store"])
    assert result.exit_code == 2
    assert "not a loopback address" in result.output


def test_the_offered_stdio_configuration_launches_tapwise(tmp_path: Path) -> None:
    from app.mcp.clients import stdio_config

    entry: Any = stdio_config(device="sim", policy="read-only")["mcpServers"]["tapwise"]  # type: ignore[index]
    params = StdioServerParameters(command=entry["command"], env=dict(os.environ), cwd=str(tmp_path),
                                   args=[*entry["args"], "--no-terminal", "--db", str(tmp_path / "t.db")])
    out: dict[str, Any] = {}

    async def go() -> None:
        async with session(params, name="configured") as c:
            out["tools"] = {t.name for t in (await c.list_tools()).tools}
            out["seen"] = await c.call_tool("observe", {})

    anyio.run(go)
    assert "observe" in out["tools"] and "nexuslauncher" in text_of(out["seen"])
