"""Screenshots of the window serving MCP: the MCP dock (address, token, client
configuration, calls) and a client's sensitive tap waiting on the approval card, at
1024x700 and 1600x1000.  Offscreen Qt; the virtual phone in the window.

    QT_QPA_PLATFORM=offscreen .venv/bin/python docs/screenshots/make_mcp_shots.py
"""

from __future__ import annotations

import os
import sys
import tempfile
import threading
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("TAPWISE_DEVICE__VIRTUAL_PHONE", "window")
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

OUT = Path(__file__).resolve().parent
sys.path.insert(0, str(OUT))

from make_screenshots import pump  # noqa: E402  (the sibling script; run from anywhere)


def main() -> int:
    import anyio
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.types import Implementation
    from PySide6.QtWidgets import QApplication

    from agent.types import Decision, DecisionKind
    from app.gui.devices import VIRTUAL_CHOICE
    from app.gui.window import MainWindow
    from app.settings import Settings, VisionSettings
    from tests.mcp.support import element_id

    tmp = Path(tempfile.mkdtemp())
    os.environ["TAPWISE_CONFIG_DIR"] = str(tmp / "config")
    os.environ["TAPWISE_DATA_DIR"] = str(tmp / "data")
    _app = QApplication.instance() or QApplication(sys.argv)
    for w, h in ((1024, 700), (1600, 1000)):
        win = MainWindow(Settings(data_dir=tmp, vision=VisionSettings(use_hierarchy="only")), "sim", discover=False)
        win.resize(w, h)
        win.show()
        win.connect_device(VIRTUAL_CHOICE)
        pump(20, lambda win=win: win.view.frame is not None)
        win.mcp.start(port=0)
        url, token = win.mcp.url, win.mcp.token

        async def go(url: str = url, token: str = token) -> None:
            http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
            client = Client(streamable_http_client(url, http_client=http),
                            client_info=Implementation(name="claude-desktop", version="1"))
            async with client as c:
                home = await c.call_tool("observe", {})
                msgs = await c.call_tool("tap", {"element_id": element_id(home, "Messages")})
                chat = await c.call_tool("tap", {"element_id": element_id(msgs, "Alice Johnson", "button")})
                typed = await c.call_tool("type_text", {"text": "See you at noon 👋", "element_id":
                                                        element_id(chat, "Text message", "edit_text")})
                await c.call_tool("tap", {"element_id": element_id(typed, "Send SMS")})

        worker = threading.Thread(target=anyio.run, args=(go,))
        worker.start()
        for _ in range(3):  # open Messages, the chat, type: approved like a user would
            pump(30, lambda win=win: win.decision_bar.enabled)
            win.approve()
            pump(30, lambda win=win: not win.decision_bar.enabled)
        pump(30, lambda win=win: win.decision_bar.enabled)  # the sensitive Send waits
        win.mcp.dock.raise_()
        pump(1.5)
        path = OUT / f"{w}x{h}-mcp.png"
        win.grab().save(str(path))
        print(path)  # noqa: T201 - a script's output
        win.decide(Decision(DecisionKind.REJECT, feedback="not now"))
        worker.join(30)
        win.close()
        pump(0.5)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
