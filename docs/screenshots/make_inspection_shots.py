"""Screenshots for issue 27's messages, parse inspection and layout, on an X screen of
exactly the window size asked for (so the window's own sizing is what is shown):

- ``{size}-no-model-start.png``: the window as it opens with no model server (the model
  list fails after the first frame, Start is pressed once): the notices sit above the
  mirror, one line each, and the window fits the screen;
- ``{size}-parse-disagreements.png``: the Parse tab's tree-versus-pixels list and its
  layer on the mirror, for a virtual phone whose first dump after a screen change still
  holds the previous screen (a stale tree, as real phones produce).

From the repository root (each size on its own screen):

    xvfb-run -a -s "-screen 0 1024x700x24" .venv/bin/python docs/screenshots/make_inspection_shots.py 1024x700
    xvfb-run -a -s "-screen 0 1600x1000x24" .venv/bin/python docs/screenshots/make_inspection_shots.py 1600x1000
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
OUT = Path(__file__).resolve().parent

from make_screenshots import pump  # noqa: E402  (the sibling script)
from make_workbench_shots import closed_port  # noqa: E402  (a port nothing listens on)

import widgets  # noqa: E402,F401  (PySide6 guard)


def grab_screen(name: str) -> Path:
    from PySide6.QtGui import QGuiApplication

    pump(0.8)
    screen = QGuiApplication.primaryScreen()
    pix = screen.grabWindow(0)
    path = OUT / name
    pix.save(str(path), "PNG")
    print("saved", path, pix.width(), "x", pix.height())  # noqa: T201
    return path


def main() -> int:
    if not os.environ.get("DISPLAY"):
        print("needs an X display: run under xvfb-run (see the module docstring)")  # noqa: T201
        return 2
    size = sys.argv[1] if len(sys.argv) > 1 else "1024x700"
    from PySide6.QtWidgets import QApplication

    from app.gui.devices import DeviceChoice
    from app.gui.window import MainWindow
    from app.settings import LLMSettings, Settings
    from phone.virtual.noise import NoiseConfig
    from phone.virtual.phone import VirtualPhone
    from vision.hierarchy import parse_hierarchy
    from widgets.overlays import Layer

    app = QApplication(sys.argv[:1])
    app.setApplicationName("Tapwise")
    tmp = Path(tempfile.mkdtemp(prefix="tapwise-shots-"))
    dead = Settings(data_dir=tmp, llm=LLMSettings(ollama_host=f"http://127.0.0.1:{closed_port()}", model="llama3.2",
                                                  timeout_s=3, retries=0))

    # 1. the no-model start, as the window opens itself on this screen
    win = MainWindow(dead, "sim")
    win.show()
    pump(60, until=lambda: win.view.frame is not None)
    pump(30, until=lambda: any(c.notice.key == "model-list" for c in win.notifications.cards))
    win.task_panel.goal.setPlainText("Turn on airplane mode")
    win.task_panel.start.click()
    pump(20, until=lambda: any(c.notice.key == "no-model" for c in win.notifications.cards))
    avail = win.screen().availableGeometry()
    print("window", win.frameGeometry().getRect(), "screen", avail.getRect())  # noqa: T201
    grab_screen(f"{size}-no-model-start.png")
    win.close()
    pump(1)

    # 2. tree versus pixels: a stale tree after opening "Network & internet"
    phone = VirtualPhone(noise=NoiseConfig(stale_nodes=1.0))
    phone.open_app("Settings")
    win = MainWindow(dead, discover=False)
    win.show()
    win.use_device(phone, DeviceChoice(phone.info.serial, "Virtual phone (stale tree)", is_virtual=True))
    pump(60, until=lambda: win.view.parse is not None)
    shot = win.session.executor.call(lambda: phone.screenshot(with_hierarchy=True))
    row = next(e for e in parse_hierarchy(shot.hierarchy_xml, shot.size).elements if e.text == "Network & internet")
    win.session.executor.call(lambda: phone.tap(row.rect.center.x, row.rect.center.y))
    pump(90, until=lambda: win.view.parse is not None and len(win.view.parse.disagreements) > 3
         and win.view.overlays_current)
    for layer in Layer:
        win.layer_panel.checks[layer].setChecked(layer is Layer.DISAGREEMENTS)
    insp = win.inspector
    insp.tabs.setCurrentWidget(insp.disagreements)
    rows = insp.disagreement_rows()
    pick = next((i for i, r in enumerate(rows) if r[0] == "screen only"), 0)
    insp.select_disagreement(pick)
    print("disagreements", len(rows))  # noqa: T201
    grab_screen(f"{size}-parse-disagreements.png")
    win.close()
    pump(1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
