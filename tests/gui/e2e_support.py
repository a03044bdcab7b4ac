"""Shared by the end-to-end test and the GUI benchmark: a real window on the virtual
phone, a scripted fake Ollama server over HTTP, and a task run driven like a person
would (clicks on the decision bar, the action editor and the mirror)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent.types import DecisionKind
from vision.geometry import Point

#: What the fake model answers, in order (zero-shot without latent state: one reply per step).
SCRIPT = ("open Settings", "tap Display", "tap Connected devices", "tap Data Saver", "done")
GOAL = "Turn on airplane mode"
NETWORK_ROW = Point(540, 660)  # "Network & internet" in the virtual phone's Settings
AIRPLANE_SWITCH = Point(970, 693)  # the Airplane mode switch on the Network & internet page


def make_settings(tmp: Path, llm_url: str, virtual_phone: str | None = None) -> Any:
    """``virtual_phone``: "process" (served, through adb) or "window"; None: as the environment says."""
    from app.settings import DeviceSettings, LLMSettings, Settings, VisionSettings

    device = {} if virtual_phone is None else {"device": DeviceSettings(virtual_phone=virtual_phone)}  # type: ignore[arg-type]
    return Settings(
        **device,
        data_dir=tmp,
        llm=LLMSettings(ollama_host=llm_url, model="fake-model:latest", timeout_s=10, retries=1),
        vision=VisionSettings(use_hierarchy="only"),  # tree parsing: fast and deterministic
    )


def open_window(settings: Any, qtbot: Any = None, app: Any = None, pump: Any = None) -> Any:
    from app.gui.devices import VIRTUAL_CHOICE
    from app.gui.window import MainWindow

    win = MainWindow(settings, "sim", discover=False)
    if qtbot is not None:
        qtbot.addWidget(win)
    win.show()
    win.connect_device(VIRTUAL_CHOICE)
    _wait(lambda: win.view.frame is not None, 20, qtbot, app, pump)
    return win


def _wait(cond, timeout: float, qtbot: Any = None, app: Any = None, pump: Any = None) -> None:
    if qtbot is not None:
        qtbot.waitUntil(cond, timeout=int(timeout * 1000))
        return
    pump(app, timeout, until=cond)
    if not cond():
        raise TimeoutError("condition not met in time")


def run_on(win: Any, **choices: str) -> Any:
    """Run the macro selected in the panel on another phone: Run on…, each of the dialog's
    boxes named in ``choices`` set to the item with that data, and OK; the dialog."""
    win.macro_panel.run_on.click()
    dialog = win.macros.dialog
    for box_name, data in choices.items():
        box = getattr(dialog, box_name)
        box.setCurrentIndex(box.findData(data))
    dialog.accept()
    return dialog


def click_mirror(win: Any, p: Point, qtbot: Any = None) -> None:
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    pos = win.view.view_pos_of(p).toPoint()
    QTest.mouseClick(win.view.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, pos)


def run_scripted_task(app: Any = None, *, qtbot: Any = None, pump: Any = None, approve_only: bool = False,
                      timeout: float = 120.0, tmp: Path | None = None, keep_open: bool = False,
                      on_start: Any = None, virtual_phone: str | None = None) -> dict:
    """Run GOAL with SCRIPT; approve everything, or approve / reject / edit / demonstrate / approve."""
    import tempfile

    from tests.agent.fake_ollama import FakeLLMServer

    tmp = tmp or Path(tempfile.mkdtemp(prefix="tapwise-e2e-"))
    server = FakeLLMServer().on("", *SCRIPT).start()
    win = None
    try:
        settings = make_settings(tmp, server.url, virtual_phone)
        win = open_window(settings, qtbot, app, pump)
        win.task_panel.set_models(["fake-model:latest"], current="fake-model:latest")
        win.task_panel.goal.setPlainText(GOAL)
        win.task_panel.planner.setCurrentIndex(win.task_panel.planner.findData("zeroshot-"))
        if on_start is not None:
            on_start(win)
        win.task_panel.start.click()
        bar = win.decision_bar

        def proposal_ready() -> bool:
            return bar.enabled or not win.run.active

        timeline: list[str] = []
        for i in range(len(SCRIPT)):
            _wait(proposal_ready, timeout, qtbot, app, pump)
            if not win.run.active:
                break
            timeline.append(win.run.proposal.action.describe())
            if approve_only or i in (0, len(SCRIPT) - 1):
                bar.trigger(DecisionKind.APPROVE)
            elif i == 1:
                bar.feedback.setText("Airplane mode is under Network & internet, not Display")
                bar.trigger(DecisionKind.REJECT)
            elif i == 2:
                bar.trigger(DecisionKind.EDIT)
                editor = win._editor
                editor.pick_touch.click()
                click_mirror(win, NETWORK_ROW, qtbot)
                editor._try_accept()
            elif i == 3:
                bar.trigger(DecisionKind.DEMONSTRATE)
                click_mirror(win, AIRPLANE_SWITCH, qtbot)
            # wait until the loop took the decision before looking for the next proposal
            _wait(lambda: not bar.enabled, 10, qtbot, app, pump)
        from widgets.task_panel import RunState

        _wait(lambda: win.run.driver is None and win.task_panel.state is RunState.IDLE, timeout, qtbot, app, pump)
        knowledge_tasks: list[str] = []
        if qtbot is not None:  # the Knowledge tab, as the user opens it after the run
            win.knowledge_dock.raise_()
            table = win.knowledge_panel.task_table
            _wait(lambda: table.rowCount() >= 1, 10, qtbot, app, pump)
            knowledge_tasks = [table.item(r, 0).text() for r in range(table.rowCount())]
        result = {
            "finish": win.task_panel.status.text(),
            "knowledge_tasks": knowledge_tasks,
            "episode_id": win.run.episode_id,
            "status": getattr(getattr(win.run.result, "status", None), "value", None),
            "steps": win.timeline.count(),
            "proposals": timeline,
            "db": settings.database_path,
            "phone_state": win.session.device.state if win.session.device is not None and hasattr(win.session.device, "state") else None,
            "llm_requests": len(server.requests),
            "notices": [(n.message, n.detail[-600:]) for n in win.notifications.history],
            "window": win,
        }
        return result
    finally:
        if win is not None and not keep_open:
            win.close()
        server.stop()
