"""Take the README screenshots of the workbench window, as a person sees it.

Needs a real X display (the window is grabbed from the X server, not rendered by
itself).  Run from the repository root:

    Xvfb :99 -screen 0 1600x1000x24 &
    DISPLAY=:99 .venv/bin/python docs/screenshots/make_screenshots.py
    kill %1

It drives the window on the virtual phone with a scripted fake Ollama server (the
replies below), so the pictures are reproducible.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
OUT = Path(__file__).resolve().parent

import widgets  # noqa: E402,F401  (PySide6 guard)

GOAL = "Turn on airplane mode"


def scripted_server():
    from tests.agent.fake_ollama import FakeLLMServer

    s = FakeLLMServer()
    has = lambda text: (lambda prompt: text in prompt)  # noqa: E731
    s.on(has("what action really happened"), "Opened the Settings app.", "Tapped Network & internet.",
         "Turned the Airplane mode switch on.")
    s.on(has("Below is the content of the screen"),
         "The phone's home screen: a clock and weather widget and app icons (Clock, Calendar, Settings, Shop…).",
         "The Settings app's main list: Network & internet, Connected devices, Apps, Notifications, Display…",
         "The Network & internet page: Internet, SIMs, Airplane mode (off), Hotspot, Data Saver.",
         "The Network & internet page; the Airplane mode switch is now on.")
    s.on(has("Summarise what has been done so far"), "Nothing has been done yet.", "Settings is open.",
         "Settings → Network & internet is open.", "Airplane mode was switched on in Network & internet.")
    s.on(has("Has anything gone wrong"), "No mistakes.")
    s.on(has("Is the goal already fully achieved"),
         "No: Settings has not been opened yet.", "No: airplane mode is still off.",
         "No: the switch has not been turned on yet.", "Yes: airplane mode is now on.")
    s.on(has("The user asked you to do this"), "open Settings", "tap Network & internet",
         "tap the Airplane mode switch", "done")
    return s.start()


def grab(widget, name: str, settle: float = 0.8) -> Path:  # type: ignore[no-untyped-def]
    """Save ``widget`` as it is on the screen (from the X server) after ``settle`` seconds of events."""
    pump(settle)
    g = widget.frameGeometry()
    pix = widget.screen().grabWindow(0, g.x(), g.y(), g.width(), g.height())
    path = OUT / name
    pix.save(str(path), "PNG")
    print("saved", path, pix.width(), "x", pix.height())  # noqa: T201
    return path


def start_app(prefix: str = "tapwise-shots-", *, private: bool = False):  # type: ignore[no-untyped-def]
    """The Qt application, a fresh data folder and the size asked for on the command line
    (``WIDTHxHEIGHT``, default 1024x700); without an X display it says so and exits (status 2).
    ``private``: the window's configuration and data folders go into the fresh folder too
    (nothing of the user's settings or stored runs shows in the shots)."""
    if not os.environ.get("DISPLAY"):
        print("needs an X display: run under Xvfb (see the module docstring)")  # noqa: T201
        raise SystemExit(2)
    from PySide6.QtWidgets import QApplication

    size = sys.argv[1] if len(sys.argv) > 1 else "1024x700"
    width, height = (int(v) for v in size.split("x"))
    tmp = Path(tempfile.mkdtemp(prefix=prefix))
    if private:
        os.environ["TAPWISE_CONFIG_DIR"] = str(tmp / "config")
        os.environ["TAPWISE_DATA_DIR"] = str(tmp / "data")
    app = QApplication(sys.argv[:1])
    app.setApplicationName("Tapwise")
    return app, tmp, size, width, height


def virtual_window(settings, width: int, height: int):  # type: ignore[no-untyped-def]
    """A window of ``width`` x ``height`` at the screen's corner, mirroring the virtual phone."""
    from app.gui.devices import VIRTUAL_CHOICE
    from app.gui.window import MainWindow

    win = MainWindow(settings, "sim", discover=False)
    win.move(0, 0)
    win.resize(width, height)
    win.show()
    win.connect_device(VIRTUAL_CHOICE)
    pump(30, until=lambda: win.view.frame is not None)
    return win


def start_and_approve_first(win, wait_s: float):  # type: ignore[no-untyped-def]
    """Start the task in the panel, approve its first step and wait for the second one's
    question; the decision bar."""
    from agent.types import DecisionKind

    win.task_panel.start.click()
    bar = win.decision_bar
    pump(wait_s, until=lambda: bar.enabled)
    bar.trigger(DecisionKind.APPROVE)
    pump(10, until=lambda: not bar.enabled)
    pump(wait_s, until=lambda: bar.enabled)
    return bar


def finish(win, *stops) -> int:  # type: ignore[no-untyped-def]
    """The end of a shots script: close the window, call each of ``stops`` (the scripted
    servers' stop or shutdown) and let Qt handle what the closing posted; 0, the exit status."""
    from PySide6.QtWidgets import QApplication

    win.close()
    for stop in stops:
        stop()
    QApplication.processEvents()
    return 0


def pump(seconds: float, until=None, *, must: bool = True) -> bool:  # type: ignore[no-untyped-def]
    """Run the event loop for ``seconds`` or until ``until()`` holds (then True); a state not
    reached raises ``TimeoutError`` when ``must``, else gives False."""
    from PySide6.QtWidgets import QApplication

    end = time.monotonic() + seconds
    while time.monotonic() < end:
        QApplication.processEvents()
        if until is not None and until():
            return True
        time.sleep(0.01)
    if until is None:
        return True
    if until():
        return True
    if must:
        raise TimeoutError("the window did not reach the expected state")
    return False


def main() -> int:
    if not os.environ.get("DISPLAY"):
        print("needs an X display: run under Xvfb (see the module docstring)")  # noqa: T201
        return 2
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication, QToolTip

    from agent.types import DecisionKind
    from app.gui.window import MainWindow
    from app.settings import LLMSettings, Settings
    from vision.geometry import Point
    from widgets.overlays import Layer

    app = QApplication(sys.argv[:1])
    app.setApplicationName("Tapwise")
    server = scripted_server()
    tmp = Path(tempfile.mkdtemp(prefix="tapwise-shots-"))
    settings = Settings(data_dir=tmp, llm=LLMSettings(ollama_host=server.url, model="fake-model:latest"))
    win = MainWindow(settings, "sim")  # lists phones (none here) and connects the virtual phone
    win.move(0, 0)
    win.resize(1600, 1000)
    win.show()
    pump(30, until=lambda: win.session.device is not None and win.view.frame is not None)

    # 1. inspecting a parse: Settings open, full vision + tree parse, an element selected
    win.session.executor.call(lambda: win.session.device.open_app("Settings"))
    pump(120, until=lambda: win.inspector.parse is not None and "com.android.settings" in win.inspector.description.toPlainText())
    for layer in (Layer.WIDGETS, Layer.BLOCKS, Layer.ICON_LABELS, Layer.DISAGREEMENTS):
        win.layer_panel.checks[layer].setChecked(True)
    el = win.view.element_at(Point(540, 1985))
    if el is not None:
        win.inspector.select_element(el.id)
        win.view.select_element(el.id)
    win.inspector.tabs.setCurrentIndex(0)

    QTest.mouseMove(win.view.viewport(), win.view.view_pos_of(Point(1000, 1240)).toPoint())  # hover: details
    pump(0.5)
    grab(win, "01-inspect-parse.png")
    # leave the hover: its tooltip must not linger over the next shots
    QTest.mouseMove(win.task_panel, win.task_panel.rect().center())
    QToolTip.hideText()
    pump(0.3)

    # 2. a task waiting for approval: proposal card, marker, latent state
    win.session.executor.call(lambda: win.session.device.key("HOME"))
    win.task_panel.set_models(["fake-model:latest", "llama3.2:3b", "qwen2.5:7b"], current="fake-model:latest")
    win.task_panel.goal.setPlainText(GOAL)
    win.task_panel.planner.setCurrentIndex(win.task_panel.planner.findData("zeroshot+"))
    pump(3)
    bar = start_and_approve_first(win, 180)
    grab(win, "02-approve-step.png")
    bar.trigger(DecisionKind.APPROVE)
    pump(10, until=lambda: not bar.enabled)
    pump(180, until=lambda: bar.enabled)

    # 3. editing the proposed action, target picked on the mirror
    bar.trigger(DecisionKind.EDIT)
    editor = win._editor
    editor.move(win.geometry().x() + 1140, win.geometry().y() + 420)
    editor.pick_touch.click()

    QTest.mouseClick(win.view.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier,
                     win.view.view_pos_of(Point(970, 693)).toPoint())
    pump(1)
    grab(win, "03-edit-action.png")
    editor._try_accept()
    pump(10, until=lambda: not bar.enabled)
    pump(180, until=lambda: bar.enabled or win.run.driver is None)
    if bar.enabled:
        bar.trigger(DecisionKind.APPROVE)
    pump(180, until=lambda: win.run.driver is None)

    # 4. reviewing a past step: its screen, the prompts and the raw replies
    win.timeline.select_step(1)
    win.timeline.tabs.setCurrentIndex(1)
    win.timeline_dock.raise_()
    pump(1)
    grab(win, "04-review-step.png")

    # 5. the macro library after recording a macro on the mirror
    win.show_live()
    win.session.executor.call(lambda: win.session.device.reset())
    win.session.executor.call(lambda: win.session.device.open_app("Settings"))
    pump(120, until=lambda: win.view.parse is not None and "Connected devices" in win.view.parse.description)
    win.macro_dock.raise_()
    win.macro_panel.record.click()
    pump(0.5)  # let the "Recording" notice take its place before aiming at the mirror

    def tap_on(words: str, kind: str = "") -> None:
        el = next(e for e in win.view.parse.elements
                  if (words in e.text or words in e.label) and (not kind or e.kind.value == kind))
        QTest.mouseClick(win.view.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier,
                         win.view.view_pos_of(el.rect.center).toPoint())

    tap_on("Network & internet")
    pump(120, until=lambda: "1 steps" in win.macro_panel.record.text())
    pump(120, until=lambda: win.view.parse is not None and "Airplane mode" in win.view.parse.description)
    tap_on("Airplane mode", "switch")
    pump(120, until=lambda: "2 steps" in win.macro_panel.record.text())
    recorder, win.macros.recorder = win.macros.recorder, None  # what "Stop" does, minus the name prompt
    win.macro_panel.set_recording(False)
    win.view.set_mode(win.view.mode.INSPECT)
    win.macros.save(recorder.build("Airplane mode on", description="Settings → Network & internet → switch"))
    pump(30, until=lambda: win.macro_panel.list.count() == 1)
    win.macro_panel.list.setCurrentRow(0)
    pump(1)
    grab(win, "05-macro-library.png")

    win.close()
    server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
