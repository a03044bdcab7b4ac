"""MCP tool-call overhead on the virtual phone, approval excluded.

The official SDK's client calls Tapwise's MCP server, as an MCP client would, and the
wall time of each call is measured on the client side: the transport, the SDK, the
screenshot and screen parse, the stale-id check, the safety check, executing the action,
the new observation returned, and recording the step.  Approval is excluded by serving with
the ``auto`` policy (the taps chosen are not sensitive, so no person is asked).

* ``observe``: describe the screen (no image), then ``observe`` with the set-of-marks image.
* ``tap``: tap an element by the id taken from the previous result (a harmless text on the
  home screen, so every tap sees the same screen and no app starts).
* ``tap (new screen)``: tap the Clock app's Timer and Alarm tabs in turn, so every tap
  changes the screen and a new frame is stored (reported, not the bar's measure).

Transports: ``stdio`` (``tapwise mcp --auto`` launched by the client, as a desktop client
does), ``http`` (``tapwise mcp --http --auto`` in its own process, streamable HTTP on
127.0.0.1 with the bearer token) and ``http-inproc`` (the server on a thread of the
measuring process, as the window runs it; client and server then share one interpreter).
Prints median / p90 per call in milliseconds.

    .venv/bin/python bench/bench_mcp.py [--calls 60] [--transport stdio http http-inproc]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import anyio
import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.types import Implementation

REPO = Path(__file__).resolve().parents[1]
TARGET = "Mostly sunny"  # a text on the home screen: tapping it changes nothing
BAR_MS = 50.0


def _element(result: Any, text: str, kind: str | None = None) -> str:
    body = "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")
    rows = json.loads(body.split("Elements (JSON):\n", 1)[1].splitlines()[0])["elements"]
    if kind is not None:
        return next(str(r["id"]) for r in rows if r["text"] == text and r["kind"] == kind)
    return next(str(r["id"]) for r in rows if text in r["text"])


async def _measure(client: Client, calls: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {"observe": [], "observe+image": [], "tap": [], "tap (new screen)": []}
    async with client as c:
        last = await c.call_tool("observe", {})  # warm-up: parser, SDK, first screenshot
        for _ in range(5):
            last = await c.call_tool("tap", {"element_id": _element(last, TARGET)})
        for _ in range(calls):
            t0 = time.perf_counter()
            last = await c.call_tool("observe", {})
            times["observe"].append((time.perf_counter() - t0) * 1000)
        for _ in range(max(5, calls // 4)):
            t0 = time.perf_counter()
            await c.call_tool("observe", {"with_image": True})
            times["observe+image"].append((time.perf_counter() - t0) * 1000)
        last = await c.call_tool("observe", {})
        for _ in range(calls):
            target = _element(last, TARGET)
            t0 = time.perf_counter()
            last = await c.call_tool("tap", {"element_id": target})
            times["tap"].append((time.perf_counter() - t0) * 1000)
            assert not last.is_error, last
        last = await c.call_tool("open_app", {"app": "Clock"})
        for i in range(calls):
            target = _element(last, ("Timer", "Alarm")[i % 2], "button")
            t0 = time.perf_counter()
            last = await c.call_tool("tap", {"element_id": target})
            times["tap (new screen)"].append((time.perf_counter() - t0) * 1000)
            assert not last.is_error, last
    return times


def bench_http(calls: int, db: Path) -> dict[str, list[float]]:
    from app import compose
    from app.mcp.clients import new_token
    from app.mcp.episodes import EpisodeBook
    from app.mcp.server import HttpServer, build_server
    from app.mcp.service import PhoneService
    from app.mcp.supervisor import Policy, PolicySupervisor
    from app.settings import load_settings
    from app.storage import Store
    from phone.virtual.phone import VirtualPhone

    phone, store = VirtualPhone(), Store(db)
    parser = compose.make_parser(load_settings()[0], mode="tree")
    service = PhoneService(phone, parser.parse, PolicySupervisor(Policy.AUTO), EpisodeBook(store), store=store)
    token = new_token()
    http = HttpServer(build_server(service), token, port=0)
    http.start()
    try:
        client = Client(streamable_http_client(http.url, http_client=httpx2.AsyncClient(
            headers={"Authorization": f"Bearer {token}"}, timeout=60)),
            client_info=Implementation(name="bench", version="1"))
        return anyio.run(_measure, client, calls)  # type: ignore[no-any-return]
    finally:
        http.stop()
        service.close()
        store.close()
        phone.close()


def bench_http_process(calls: int, db: Path) -> dict[str, list[float]]:
    import socket
    import subprocess

    from app.mcp.clients import http_url, new_token

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    token = new_token()
    server = subprocess.Popen([sys.executable, "-m", "app.cli", "mcp", "--http", "--port", str(port), "--device", "sim",
                               "--parse", "tree", "--auto", "--no-terminal", "--db", str(db)], cwd=str(REPO),
                              env={**os.environ, "TAPWISE_MCP_TOKEN": token}, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        client = Client(streamable_http_client(http_url("127.0.0.1", port), http_client=httpx2.AsyncClient(
            headers={"Authorization": f"Bearer {token}"}, timeout=60)),
            client_info=Implementation(name="bench", version="1"))
        return anyio.run(_measure, client, calls)  # type: ignore[no-any-return]
    finally:
        server.terminate()
        server.wait(30)


def bench_stdio(calls: int, db: Path) -> dict[str, list[float]]:
    params = StdioServerParameters(command=sys.executable, cwd=str(REPO), env=dict(os.environ), args=[
        "-m", "app.cli", "mcp", "--device", "sim", "--parse", "tree", "--auto", "--no-terminal", "--db", str(db)])
    client = Client(params, client_info=Implementation(name="bench", version="1"), read_timeout_seconds=120)
    return anyio.run(_measure, client, calls)  # type: ignore[no-any-return]


def _p90(xs: list[float]) -> float:
    return statistics.quantiles(xs, n=10)[-1] if len(xs) >= 2 else xs[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=60, help="Timed calls per tool.")
    ap.add_argument("--transport", nargs="+", default=["stdio", "http", "http-inproc"],
                    choices=["stdio", "http", "http-inproc"])
    args = ap.parse_args()
    print(f"MCP tool-call overhead on the virtual phone (tree parsing, auto policy: approval excluded), "
          f"{args.calls} calls per tool")
    print(f"{'transport':<13}{'tool':<18}{'median ms':>10}{'p90 ms':>10}{'n':>5}  bar ≤{BAR_MS:.0f} ms (median)")
    with tempfile.TemporaryDirectory() as tmp:
        for transport in args.transport:
            run = {"stdio": bench_stdio, "http": bench_http_process, "http-inproc": bench_http}[transport]
            times = run(args.calls, Path(tmp) / f"{transport}.db")
            for tool, xs in times.items():
                med = statistics.median(xs)
                verdict = ("met" if med <= BAR_MS else "MISSED") if tool in ("observe", "tap") else "-"
                print(f"{transport:<13}{tool:<18}{med:>10.1f}{_p90(xs):>10.1f}{len(xs):>5}  {verdict}")


if __name__ == "__main__":
    main()
