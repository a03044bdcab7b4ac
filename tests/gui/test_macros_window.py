"""Recording a macro on the mirror of the virtual phone, saving it, and replaying it with
approval of each step."""

from __future__ import annotations

import pytest

pytest.importorskip("app.sim.phone", reason="needs the virtual phone")

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
    win.executor.call(lambda: win.device.reset())  # a fresh phone: airplane mode off, home screen
    assert win.device.state["settings"]["airplane_mode"] is False
    win.macro_panel.list.setCurrentRow(0)
    win.macro_panel.run_approve.click()
    for _ in range(2):
        qtbot.waitUntil(lambda: win.decision_bar.enabled or win.macros.result is not None, timeout=20000)
        assert win.macros.result is None, (win.macros.result, [n.message for n in win.notifications.history])
        assert win.proposal_card.proposal.planner == "macro"
        win.decision_bar.trigger(DecisionKind.APPROVE)
    qtbot.waitUntil(lambda: win.macros.result is not None, timeout=20000)
    assert win.macros.result.status == "succeeded", win.macros.result
    assert win.device.state["settings"]["airplane_mode"] is True
    win.close()
