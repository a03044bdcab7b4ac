"""The window serves MCP: a client's tap appears on the approval card, Approve carries it
out and the client receives the new observation, and the client's episode is listed on
the Episodes tab.  A rejection typed in the bar reaches the client as a tool error."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("TAPWISE_DEVICE__VIRTUAL_PHONE", "window")
pytest.importorskip("PySide6", reason="the window test needs PySide6")

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import Implementation

from agent.types import DecisionKind
from tests.gui.e2e_support import make_settings, open_window
from tests.mcp.support import element_id, text_of

pytestmark = pytest.mark.gui


def _client(url: str, token: str) -> Client:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
    return Client(streamable_http_client(url, http_client=http), client_info=Implementation(name="gui-agent",
                                                                                              version="1"))


@pytest.fixture
def win(qtbot: Any, tmp_path: Path) -> Any:
    w = open_window(make_settings(tmp_path, "http://127.0.0.1:9"), qtbot)
    yield w
    w.close()


def test_a_clients_tap_is_approved_on_the_card_and_its_episode_is_listed(win: Any, qtbot: Any,
                                                                        tmp_path: Path) -> None:
    assert win.mcp.start(port=0)
    url, token = win.mcp.url, win.mcp.token
    assert url.startswith("http://127.0.0.1:") and token in win.mcp.panel.config.toPlainText()
    out: dict[str, Any] = {}

    async def go() -> None:
        async with _client(url, token) as c:
            home = await c.call_tool("observe", {})
            out["tap"] = await c.call_tool("tap", {"element_id": element_id(home, "Clock")})
            back = out["tap"]
            out["reject"] = await c.call_tool("tap", {"element_id": element_id(back, "", None)})

    worker = threading.Thread(target=anyio.run, args=(go,))
    worker.start()
    try:
        qtbot.waitUntil(lambda: win.decision_bar.enabled, timeout=20000)
        assert win.proposal_card.title.text() == "Tap Clock"
        assert "gui-agent" in win.proposal_card.rationale.text()
        win.approve()
        qtbot.waitUntil(lambda: "tap" in out, timeout=20000)
        assert not out["tap"].is_error and "com.google.android.deskclock" in text_of(out["tap"])
        assert win.session.device.foreground()[0] == "com.google.android.deskclock"
        # the next proposal: the user types a reason and rejects it
        qtbot.waitUntil(lambda: win.decision_bar.enabled, timeout=20000)
        win.decision_bar.feedback.setText("stay on the clock")
        win.decision_bar.trigger(DecisionKind.REJECT)
        qtbot.waitUntil(lambda: "reject" in out, timeout=20000)
        assert out["reject"].is_error and "stay on the clock" in text_of(out["reject"])
    finally:
        worker.join(30)

    def listed() -> bool:
        panel = win.episodes_panel
        goals = [panel.tree.topLevelItem(i).text(0) for i in range(panel.count())]
        return "MCP client: gui-agent" in goals

    qtbot.waitUntil(listed, timeout=20000)
    assert not win.decision_bar.enabled
    # reviewable and exportable like any run: opened onto the step timeline, exported
    from app.gui.episode_controller import export_episode

    episode_id = next(r["id"] for r in win.store().list_episodes() if r["goal"] == "MCP client: gui-agent")
    win.episodes.open(episode_id)
    qtbot.waitUntil(lambda: win.timeline.count(episode_id) == 3, timeout=20000)  # observe, tap, rejected tap
    assert win.timeline.step(2, episode_id).decision.feedback == "stay on the clock"
    for fmt in ("json", "aitw", "html"):
        out_path = export_episode(win.store(), episode_id, fmt, tmp_path / f"episode.{fmt}")
        assert out_path.stat().st_size > 0


def test_demonstrate_and_edit_from_the_window_reach_the_client(win: Any, qtbot: Any) -> None:
    from tests.gui.e2e_support import click_mirror
    from vision.geometry import Point

    assert win.mcp.start(port=0)
    url, token = win.mcp.url, win.mcp.token
    out: dict[str, Any] = {}

    async def go() -> None:
        async with _client(url, token) as c:
            home = await c.call_tool("observe", {})
            out["tap"] = await c.call_tool("tap", {"element_id": element_id(home, "Clock")})
            out["back"] = await c.call_tool("press_key", {"key": "back"})

    worker = threading.Thread(target=anyio.run, args=(go,))
    worker.start()
    try:
        qtbot.waitUntil(lambda: win.decision_bar.enabled, timeout=20000)
        win.decision_bar.trigger(DecisionKind.DEMONSTRATE)
        click_mirror(win, Point(166, 791), qtbot)  # the user opens Settings instead
        qtbot.waitUntil(lambda: "tap" in out, timeout=20000)
        assert win.session.device.foreground()[0] == "com.android.settings"
        # the client's "back" is edited in the action editor into a tap on the mirror
        qtbot.waitUntil(lambda: win.decision_bar.enabled, timeout=20000)
        win.decision_bar.trigger(DecisionKind.EDIT)
        editor = win._editor
        editor.type_combo.setCurrentIndex(editor.type_combo.findData("tap"))
        editor.pick_touch.click()
        click_mirror(win, Point(540, 660), qtbot)  # "Network & internet" in Settings
        editor._try_accept()
        qtbot.waitUntil(lambda: "back" in out, timeout=20000)
    finally:
        worker.join(30)
    text = text_of(out["tap"])
    assert not out["tap"].is_error, text
    assert "did this step themselves" in text and "com.android.settings" in text
    edited = text_of(out["back"])
    assert not out["back"].is_error, edited
    assert "edited the action" in edited and "“go back” became “tap" in edited
    assert "Airplane mode" in edited  # the client receives the Network & internet page
