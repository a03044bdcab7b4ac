"""Screenshots of the approval loop's proposal card at two window sizes (1024x700 and
1600x1000): while the model works (stage, call k of n, seconds, the reply streaming in,
the previous estimates greyed) and a proposal with its reason line.

The window runs on the virtual phone (in the window's process) and talks to a small
OpenAI-compatible server in this script that streams its reply word by word, slowly, as
llama.cpp's server does on a small CPU, so the streaming is real, not drawn.  From the
repository root:

    QT_QPA_PLATFORM=offscreen .venv/bin/python docs/screenshots/make_approval_shots.py 1024x700
    QT_QPA_PLATFORM=offscreen .venv/bin/python docs/screenshots/make_approval_shots.py 1600x1000
"""

from __future__ import annotations

import functools
import json
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
OUT = Path(__file__).resolve().parent

import widgets  # noqa: E402,F401  (PySide6 guard)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_screenshots import finish  # noqa: E402
from make_screenshots import pump as _pump  # noqa: E402  (the sibling script; run from anywhere)

pump = functools.partial(_pump, must=False)  # a state not reached is seen in the shot, not raised

#: What the streaming model answers (zero-shot, free text), one word every ``GAP_S``.
REPLY = "tap Network & internet"
GAP_S = 1.5


class _Streaming(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        data = json.dumps({"data": [{"id": "qwen2.5-coder-0.5b"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        try:
            for word in REPLY.split(" "):
                time.sleep(GAP_S)
                chunk = {"choices": [{"delta": {"content": word + " "}}]}
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.flush()
            self.wfile.write(b"data: [DONE]\n\n")
        except (BrokenPipeError, ConnectionResetError):
            pass


def main() -> int:
    from PySide6.QtWidgets import QApplication

    from app.gui.devices import VIRTUAL_CHOICE
    from app.gui.window import MainWindow
    from app.settings import AgentSettings, DeviceSettings, LLMSettings, Settings, VisionSettings

    size = sys.argv[1] if len(sys.argv) > 1 else "1024x700"
    width, height = (int(v) for v in size.split("x"))
    _app = QApplication.instance() or QApplication(sys.argv[:1])  # kept alive for the whole run
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Streaming)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    tmp = Path(tempfile.mkdtemp(prefix="tapwise-shots-"))
    settings = Settings(
        data_dir=tmp, device=DeviceSettings(virtual_phone="window"),
        llm=LLMSettings(backend="openai", openai_base_url=f"http://127.0.0.1:{server.server_address[1]}/v1",
                        model="qwen2.5-coder-0.5b", timeout_s=60, retries=0),
        vision=VisionSettings(use_hierarchy="only"),
        agent=AgentSettings(planner="zeroshot-", constrained_replies=False))
    win = MainWindow(settings, "sim", discover=False)
    win.resize(width, height)
    win.show()
    win.connect_device(VIRTUAL_CHOICE)
    pump(20, until=lambda: win.view.frame is not None)
    win.session.device.open_app("Settings")
    win.ensure_model = lambda model, then=None: True  # the streaming server stands in for the built-in model
    pump(1.0)
    win.task_panel.goal.setPlainText("Turn off Wi-Fi")
    win.task_panel.planner.setCurrentIndex(win.task_panel.planner.findData("zeroshot-"))
    win.task_panel.start.click()
    card = win.proposal_card
    pump(30, until=lambda: card.stream.isVisible() and len(card.stream.text().split()) >= 2)
    pump(0.3)
    shot = OUT / f"{size}-approval-working.png"
    win.grab().save(str(shot))
    print("saved", shot)  # noqa: T201
    pump(60, until=lambda: win.decision_bar.enabled)
    pump(0.8)
    shot = OUT / f"{size}-approval-proposal.png"
    win.grab().save(str(shot))
    print("saved", shot)  # noqa: T201
    win.run.abort()
    pump(10, until=lambda: win.run.driver is None)
    return finish(win, server.shutdown)


if __name__ == "__main__":
    raise SystemExit(main())
