"""Recording a macro on the mirror of the virtual phone, saving it, and replaying it with
approval of each step."""

from __future__ import annotations

import pytest

pytest.importorskip("phone.virtual.phone", reason="needs the virtual phone")

from PySide6.QtWidgets import QInputDialog

from agent.types import DecisionKind
from app.gui.devices import VIRTUAL_CHOICE
from app.gui.window import MainWindow
from app.settings import Settings, VisionSettings

from .e2e_support import click_mirror


def _element_point(win, text):
    el = next(e for e in win.view.parse.elements if text in (e.text or e.label))
    return el.rect.center


@pytest.mark.slow
def test_record_then_replay_with_approval(qtbot, tmp_path, monkeypatch):
    settings = Settings(data_dir=tmp_path, vision=VisionSettings(use_hierarchy="only"))
    win = MainWindow(settings, "sim", discover=False)
    qtbot.addWidget(win)
    win.show()
    win.connect_device(VIRTUAL_CHOICE)
    qtbot.waitUntil(lambda: win.view.parse is not None and "nexuslauncher" in win.view.parse.description, timeout=20000)

    win.executor.call(lambda: win.device.open_app("Settings"))
    qtbot.waitUntil(lambda: win.view.parse is not None and "com.android.settings" in win.view.parse.description,
                    timeout=20000)
    win.macro_panel.record.click()
    assert win.macros.recorder is not None
    click_mirror(win, _element_point(win, "Network & internet"))
    qtbot.waitUntil(lambda: "1 steps" in win.macro_panel.record.text(), timeout=20000)
    qtbot.waitUntil(lambda: win.view.parse is not None and "Airplane mode" in win.view.parse.description,
                    timeout=20000)
    switch = next(e for e in win.view.parse.elements if e.kind.value == "switch" and e.label == "Airplane mode")
    click_mirror(win, switch.rect.center)
    qtbot.waitUntil(lambda: "2 steps" in win.macro_panel.record.text(), timeout=20000)
    assert win.device.state["settings"]["airplane_mode"] is True
    monkeypatch.setattr(QInputDialog, "getText", staticmethod(lambda *a, **k: ("airplane mode on", True)))
    win.macro_panel.record.click()
    qtbot.waitUntil(lambda: win.macro_panel.list.count() == 1, timeout=10000)
    assert "2 steps" in win.macro_panel.list.item(0).text()
    # the recording is kept as a demonstration, and the Knowledge tab shows it
    win.knowledge_dock.raise_()
    table = win.knowledge_panel.task_table
    qtbot.waitUntil(lambda: table.rowCount() == 1, timeout=10000)
    assert (table.item(0, 0).text(), table.item(0, 1).text()) == ("airplane mode on", "demonstration")
    win.executor.call(lambda: win.device.reset())  # a fresh phone: airplane mode off, home screen
    assert win.device.state["settings"]["airplane_mode"] is False
    win.macro_panel.list.setCurrentRow(0)
    win.macro_panel.run_approve.click()
    # a replay is a run of the agent loop: opening the app, each recorded step and the
    # finishing step are proposals on the same decision bar, each approved by the user
    asked = []
    while win.macros.result is None:
        qtbot.waitUntil(lambda: win.decision_bar.enabled or win.macros.result is not None, timeout=20000)
        if win.macros.result is not None:
            break
        assert win.proposal_card.proposal.planner == "macro"
        assert win.macros.needs_you is None, win.macros.needs_you
        asked.append(win.proposal_card.proposal.action.type.value)
        win.decision_bar.trigger(DecisionKind.APPROVE)
        assert len(asked) < 8, asked
    assert asked[-1] == "complete" and len(asked) >= 3, asked
    assert win.macros.result.status == "succeeded", win.macros.result
    assert win.device.state["settings"]["airplane_mode"] is True
    win.close()


def _airplane_macro_with_a_stray_step():
    """Recorded on the phone profile: open Settings, Network & internet, Airplane mode,
    then a stray Home press."""
    from agent.macros.recorder import Observation, Recorder
    from agent.types import Action
    from phone.virtual.phone import VirtualPhone
    from vision.hierarchy import parse_uiautomator
    from vision.types import ScreenParse

    phone = VirtualPhone()

    def observe():
        s = phone.screenshot(with_hierarchy=True)
        tp = parse_uiautomator(s.hierarchy_xml, s.size)
        return Observation(ScreenParse(s.size, tp.elements, tp.blocks), s.image, s.foreground_package)

    rec = Recorder()
    for words in ("Settings", "Network & internet", "Airplane mode"):
        before = observe()
        c = next(e for e in before.parse.elements if e.text == words).rect.center
        phone.tap(c.x, c.y)
        rec.record(Action.tap(c.x, c.y), before, observe())
    size = phone.screen_size()
    before = observe()
    phone.tap(size.width // 2, size.height - 20)
    rec.record(Action.tap(size.width // 2, size.height - 20), before, observe())
    return rec.build("airplane on", app="com.android.settings")


@pytest.mark.slow
def test_a_macro_step_is_edited_in_the_window_and_the_macro_replays_on_the_tablet(qtbot, tmp_path):
    from app.storage import Store

    settings = Settings(data_dir=tmp_path, vision=VisionSettings(use_hierarchy="only"))
    store = Store(settings.database_path)
    macro = store.save_macro(_airplane_macro_with_a_stray_step())
    assert macro.steps[3].description == "press Home"  # the nav bar tap became a key
    win = MainWindow(settings, "sim", discover=False, store=store)
    qtbot.addWidget(win)
    win.show()
    win.connect_device(VIRTUAL_CHOICE)
    panel = win.macro_panel
    qtbot.waitUntil(lambda: panel.list.count() == 1 and win.device is not None, timeout=20000)
    panel.list.setCurrentRow(0)
    # delete the stray step
    panel.steps.setCurrentRow(3)
    panel.step_delete.click()
    qtbot.waitUntil(lambda: "v2" in panel.list.item(0).text() and panel.steps.count() == 3, timeout=10000)
    # edit step 1 in the action editor: open the app by its name instead of its package
    panel.steps.setCurrentRow(0)
    panel.step_edit.click()
    editor = win._editor
    assert editor is not None and editor.app.text() == "com.android.settings"
    editor.app.setText("Settings")
    editor._try_accept()
    qtbot.waitUntil(lambda: "v3" in panel.list.item(0).text(), timeout=10000)
    assert panel.macro(panel.current_id()).steps[0].action.app == "Settings"
    # replay v3 on the tablet profile, from the window
    panel.run_on.click()
    dialog = win.macros.dialog
    dialog.profile.setCurrentIndex(dialog.profile.findData("tablet"))
    dialog.accept()
    qtbot.waitUntil(lambda: win.macros.result is not None, timeout=60000)
    assert win.macros.result.status == "succeeded", (win.macros.result, [n.message for n in win.notifications.history])
    assert win.device.profile.name == "tablet"
    assert win.device.state["settings"]["airplane_mode"] is True
    results = [panel.results.item(i).text() for i in range(panel.results.count())]
    assert len(results) == 4 and "Airplane mode" in results[2] and "succeeded" in results[3], results
    win.close()
    store.close()
