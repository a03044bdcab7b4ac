"""Screenshots of a newcomer's first hour (issue 44) at three window sizes (1024x700,
1366x800, 1600x1000), on the virtual phone, with the window's default overlay layers and the
full screen parse (tree, OCR, detector, icon labels):

- ``{size}-settings-captions.png``: Settings, each caption on the row or icon it names, no
  kind words; the built-in model chosen, so the latent panel says its estimates are off;
- ``{size}-latent-off.png``: a proposal of the automatic planner for the built-in model (one
  call per step): the latent panel says why it shows no estimates, one click to turn them on;
- ``{size}-latent-on.png``: after that click, the next run's proposal with its estimates;
- ``{size}-keyboard.png``: Settings' search with the soft keyboard up, one block, its keys
  not listed as tree-versus-pixel disagreements (the Parse tab's list beside it);
- ``{size}-knowledge.png``: the Knowledge tab after exploring Messages, a screen selected.

The model is a scripted server on loopback (``evaluation.scripted_model``) that answers the
planners and the fused latent estimate with fixed words, so the pictures are reproducible.
From the repository root (Qt offscreen; the window grabs itself):

    QT_QPA_PLATFORM=offscreen .venv/bin/python docs/screenshots/make_newcomer_shots.py 1366x800
    (and 1024x700, 1600x1000)
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
OUT = Path(__file__).resolve().parent

from make_screenshots import finish, pump  # noqa: E402  (the sibling script)

import widgets  # noqa: E402,F401  (PySide6 guard)

MODEL = "qwen2.5-coder-0.5b"  # the built-in model's name: slow, so "auto" makes one call a step
GOAL = "Turn on airplane mode"
ESTIMATE = {
    "performed_action": "Nothing yet: this is the first step of the task.",
    "screen_summary": "Settings, the main list: Network & internet, Connected devices, Apps, Battery.",
    "progression": "You have opened Settings.",
    "mistakes": "No mistakes.",
    "completed": False,
    "completion_reason": "Airplane mode is not on yet.",
    "confidence": 0.7,
}


def answer(prompt: str) -> str:
    """The scripted model: the fused estimate as JSON; otherwise a tap on Network & internet
    (by its id where the prompt lists ids, as VisionTasker's form asks)."""
    if "Estimate the hidden state" in prompt:
        return json.dumps(ESTIMATE)
    m = re.search(r"\[(\d+)\][^\n]*Network & internet", prompt)
    why = "Airplane mode is one of the network settings."
    if m:
        return f"tap [{m.group(1)}] Network & internet"
    return f"tap Network & internet\nWhy: {why}"


def shoot(win, name: str) -> Path:  # type: ignore[no-untyped-def]
    pump(0.8)
    win.notifications.resolve("run-finished")  # the last run's end, not what the picture is about
    path = OUT / name
    win.grab().save(str(path))
    print("saved", path)  # noqa: T201
    return path


def run_until_proposal(win) -> None:  # type: ignore[no-untyped-def]
    win.task_panel.goal.setPlainText(GOAL)
    win.task_panel.start.click()
    pump(120, until=lambda: win.decision_bar.enabled)
    pump(3.0, until=lambda: win.view.overlays_current)


def abort(win) -> None:  # type: ignore[no-untyped-def]
    win.run.abort()
    pump(20, until=lambda: win.run.driver is None)


def open_settings(win) -> None:  # type: ignore[no-untyped-def]
    win.session.executor.call(lambda: win.session.device.go_home())
    win.session.executor.call(lambda: win.session.device.open_app("Settings"))
    try:
        pump(90, until=lambda: win.view.parse is not None and any(
            (e.text or "").startswith("Network") for e in win.view.parse.elements) and win.view.overlays_current)
    except TimeoutError:
        parse = win.view.parse
        raise TimeoutError(f"Settings was not parsed: {[e.text for e in parse.elements][:8] if parse else None}, "
                           f"current {win.view.overlays_current}") from None


def main() -> int:
    size = sys.argv[1] if len(sys.argv) > 1 else "1366x800"
    width, height = (int(v) for v in size.split("x"))
    from PySide6.QtWidgets import QApplication

    from app.gui.devices import VIRTUAL_CHOICE
    from app.gui.window import MainWindow
    from app.model_prefs import PrefsStore
    from app.settings import AgentSettings, DeviceSettings, LLMSettings, Settings
    from evaluation.scripted_model import ScriptedLLMServer

    _app = QApplication.instance() or QApplication(sys.argv[:1])  # kept alive for the whole run
    tmp = Path(tempfile.mkdtemp(prefix="tapwise-newcomer-"))
    os.environ["XDG_CONFIG_HOME"] = str(tmp / "config")  # the user's own settings stay untouched
    server = ScriptedLLMServer(models=(MODEL,), responder=answer).start()
    settings = Settings(
        data_dir=tmp / "data", device=DeviceSettings(virtual_phone="window"),
        llm=LLMSettings(backend="openai", openai_base_url=f"{server.url}/v1", model=MODEL, timeout_s=60, retries=0),
        agent=AgentSettings(planner="auto", constrained_replies=False))
    win = MainWindow(settings, "sim", discover=False)
    win.session.prefs = PrefsStore.load(tmp / "models.json")
    win.ensure_model = lambda model, then=None: True  # the scripted server stands in for the built-in model
    win.resize(width, height)
    win.show()
    win.connect_device(VIRTUAL_CHOICE)
    pump(30, until=lambda: win.view.frame is not None)
    win.task_panel.set_models([MODEL], current=MODEL)
    win.run.latent.refresh()
    win.layers_dock.show()
    win.layers_dock.raise_()

    open_settings(win)
    shoot(win, f"{size}-settings-captions.png")

    run_until_proposal(win)
    shoot(win, f"{size}-latent-off.png")
    abort(win)

    win.latent_panel.linkActivated.emit("turn on")  # the note's one click
    pump(1.0)
    # the scripted server answers at once, and runs record the model's speed: keep the built-in
    # model's (slow) speed, so the estimates come in one fused call as they do for it
    win.session.prefs.set(MODEL, seconds_per_call=0.0)
    open_settings(win)
    run_until_proposal(win)
    pump(2.0)
    shoot(win, f"{size}-latent-on.png")
    abort(win)

    keyboard(win, size)
    knowledge(win, size)
    win.knowledge.shutdown()
    return finish(win, server.stop)


def keyboard(win, size: str) -> None:  # type: ignore[no-untyped-def]
    """Settings' search field tapped: the keyboard comes up; the Parse tab lists what
    the tree and the pixels disagree on."""
    from vision.hierarchy import parse_hierarchy
    from vision.types import ElementKind

    open_settings(win)
    win.inspector_dock.show()
    win.inspector_dock.raise_()
    win.inspector.tabs.setCurrentWidget(win.inspector.disagreements)
    phone = win.session.device
    shot = win.session.executor.call(lambda: phone.screenshot(with_hierarchy=True))
    field = next(e for e in parse_hierarchy(shot.hierarchy_xml or "", shot.size).elements
                 if e.kind is ElementKind.EDIT_TEXT)
    win.session.executor.call(lambda: phone.tap(field.rect.center.x, field.rect.center.y))
    pump(40, until=lambda: win.view.parse is not None and win.view.overlays_current
         and any(b.role == "keyboard" for b in win.view.parse.blocks))
    pump(2.0)
    shoot(win, f"{size}-keyboard.png")


def knowledge(win, size: str) -> None:  # type: ignore[no-untyped-def]
    """The Knowledge tab after exploring Messages, one of its screens selected."""
    win.session.executor.call(lambda: win.session.device.go_home())
    win.session.executor.call(lambda: win.session.device.open_app("Messages"))
    pump(2.0)
    win.knowledge_dock.show()
    win.knowledge_dock.raise_()
    maps = win.knowledge_panel.maps
    win.knowledge_panel.tabs.setCurrentWidget(maps)
    maps.explore_button.click()
    pump(240, until=lambda: maps.explore_button.isEnabled() and maps.app_box.count() >= 1)
    pic = maps._current
    if pic is not None and pic.screens:
        key = next((s.key for s in pic.screens if not s.is_root), pic.screens[0].key)
        maps.screen_items[key].setSelected(True)
    shoot(win, f"{size}-knowledge.png")


if __name__ == "__main__":
    raise SystemExit(main())
