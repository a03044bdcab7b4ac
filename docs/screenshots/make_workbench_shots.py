"""Screenshots of the workbench's daily-use views at two window sizes (1024x700, the
smallest supported, and 1600x1000): a step waiting for approval, Start with no model,
a stored run opened from the Episodes view, macro step editing with the last replay's
results, and the list of keyboard shortcuts.

Needs a real X display; the window is grabbed from the X server.  From the repository root:

    Xvfb :99 -screen 0 1700x1100x24 -nolisten tcp &
    DISPLAY=:99 .venv/bin/python docs/screenshots/make_workbench_shots.py 1024x700
    DISPLAY=:99 .venv/bin/python docs/screenshots/make_workbench_shots.py 1600x1000
    kill %1

The run uses the virtual phone and a scripted fake Ollama server, so the pictures are
reproducible.
"""

from __future__ import annotations

import socket
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
OUT = Path(__file__).resolve().parent

from make_screenshots import finish, grab, pump, start_and_approve_first, start_app, virtual_window  # noqa: E402  (the sibling script; run from anywhere)

import widgets  # noqa: E402,F401  (PySide6 guard)

GOAL = "Turn on airplane mode"


def closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return int(port)


def main() -> int:
    app, tmp, size, width, height = start_app()
    from agent.types import DecisionKind
    from app.settings import LLMSettings, Settings, VisionSettings
    from tests.agent.fake_ollama import FakeLLMServer

    # 1. Start with no model answering: one card, repeats counted, the mirror keeps its size
    dead = Settings(data_dir=tmp, vision=VisionSettings(use_hierarchy="only"),
                    llm=LLMSettings(ollama_host=f"http://127.0.0.1:{closed_port()}", model="llama3.2",
                                    timeout_s=3, retries=0))
    win = virtual_window(dead, width, height)
    win.task_panel.set_models(["llama3.2"], current="llama3.2")
    win.task_panel.goal.setPlainText(GOAL)
    for _ in range(2):
        win.task_panel.start.click()
        pump(20, until=lambda: not win.run.active)
    win.notifications.cards[0].details_button.click()
    grab(win, f"{size}-no-model.png")
    win.close()

    # 2. a step waiting for approval at this size
    server = FakeLLMServer().on("", "open Settings", "tap Network & internet", "tap the Airplane mode switch",
                                "done").start()
    settings = Settings(data_dir=tmp, vision=VisionSettings(use_hierarchy="only"),
                        llm=LLMSettings(ollama_host=server.url, model="fake-model:latest", timeout_s=10))
    win = virtual_window(settings, width, height)
    win.task_panel.set_models(["fake-model:latest"], current="fake-model:latest")
    win.task_panel.goal.setPlainText(GOAL)
    win.task_panel.planner.setCurrentIndex(win.task_panel.planner.findData("zeroshot-"))
    bar = start_and_approve_first(win, 60)
    grab(win, f"{size}-approve.png")
    for _ in range(4):
        if not bar.enabled:
            break
        bar.trigger(DecisionKind.APPROVE)
        pump(10, until=lambda: not bar.enabled)
        pump(60, until=lambda: bar.enabled or win.run.driver is None)
    pump(60, until=lambda: win.run.driver is None)

    # 3. run history: the stored run opened from the Episodes view, a step selected
    win.episodes_dock.raise_()
    pump(10, until=lambda: win.episodes_panel.count() >= 1)
    win.episodes_panel.tree.setCurrentItem(win.episodes_panel.tree.topLevelItem(0))
    episode_id = win.episodes_panel.current_id()
    win.episodes_panel.open.click()
    pump(20, until=lambda: win.timeline.count(episode_id) >= 1)
    win.timeline.select_step(1, episode_id)
    pump(10, until=lambda: win.session.viewing.step == 1)
    grab(win, f"{size}-episode.png")

    # 4. macros: record two steps, delete one in the window, replay with per-step results
    win.show_live()
    win.session.executor.call(lambda: win.session.device.reset())
    win.session.executor.call(lambda: win.session.device.open_app("Settings"))
    pump(60, until=lambda: win.view.parse is not None and "Connected devices" in win.view.parse.description)
    from agent.macros.recorder import Recorder
    from agent.types import Action

    recorder = Recorder()
    for words in ("Network & internet", "Airplane mode"):
        obs = win.session.executor.call(win.macros.observe)
        el = next(e for e in obs.parse.elements if e.text == words)
        recorder.record(Action.tap(el.rect.center.x, el.rect.center.y), obs)
        win.session.executor.call(lambda el=el: win.session.device.tap(el.rect.center.x, el.rect.center.y))
        recorder.observe_after(win.session.executor.call(win.macros.observe))
    win.macros.save(recorder.build("Airplane mode on", app="com.android.settings"))
    win.macro_dock.raise_()
    pump(20, until=lambda: win.macro_panel.list.count() == 1)
    win.macro_panel.list.setCurrentRow(0)
    win.session.executor.call(lambda: win.session.device.reset())
    win.macro_panel.run.click()
    pump(60, until=lambda: win.macros.result is not None)
    win.macro_panel.steps.setCurrentRow(1)
    grab(win, f"{size}-macro-steps.png")

    # 5. the keyboard shortcuts
    dlg = win.show_shortcuts()
    dlg.move(win.geometry().x() + width // 3, win.geometry().y() + 80)
    pump(0.5)
    grab(win, f"{size}-shortcuts.png")
    dlg.close()
    return finish(win, server.stop)


if __name__ == "__main__":
    raise SystemExit(main())
