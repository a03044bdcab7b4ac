"""``launch()`` (what ``tapwise`` without a subcommand calls) opens the workbench on the
virtual phone and returns 0 when the window is closed."""

from __future__ import annotations

import pytest

pytest.importorskip("phone.virtual.phone", reason="needs the virtual phone")

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from app.gui.main import launch
from app.gui.window import MainWindow
from app.settings import Settings, VisionSettings


def test_launch_mirrors_the_virtual_phone_and_exits_cleanly(qapp, tmp_path):
    seen = {}

    def poll():
        wins = [w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow) and w.isVisible()]
        if wins and wins[0].phone.first_frame_s is not None:
            seen["first_frame_s"] = wins[0].phone.first_frame_s
            seen["device"] = wins[0].device_status.text()
            wins[0].close()
        else:
            QTimer.singleShot(100, poll)

    QTimer.singleShot(100, poll)
    settings = Settings(data_dir=tmp_path, vision=VisionSettings(use_hierarchy="only"))
    assert launch(settings, device_hint="sim") == 0
    assert seen["first_frame_s"] < 10, seen
    assert "Virtual phone" in seen["device"]
