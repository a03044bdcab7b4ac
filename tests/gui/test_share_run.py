"""Share a run from the Episodes view: one click writes a self-contained HTML page with
every step of the stored run (issue 27, "Share a run")."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog

from app.gui.devices import DeviceChoice
from app.gui.window import MainWindow
from app.settings import Settings
from app.storage import Store
from tests.share.test_episode_html import stored_run

from .fakes import FixedParser, ScriptedPhone


def test_share_in_the_episodes_view_writes_one_page_with_every_step(qtbot, tmp_path, monkeypatch):
    store = Store(tmp_path / "t.sqlite")
    episode_id = stored_run(store)
    phone = ScriptedPhone()
    w = MainWindow(Settings(data_dir=tmp_path), discover=False, parser_factory=FixedParser,
                   device_factory=lambda c, t: phone, live_parse=False, store=store)
    qtbot.addWidget(w)
    w.show()
    w.connect_device(DeviceChoice("scripted-1", "Scripted phone"))
    panel = w.episodes_panel
    w.episodes_dock.raise_()
    qtbot.waitUntil(lambda: panel.count() == 1, timeout=5000)
    assert not panel.export_html.isEnabled()  # nothing chosen yet
    panel.select(episode_id)
    assert panel.export_html.isEnabled() and "HTML" in panel.export_html.toolTip()
    target = tmp_path / "to share.html"
    asked = []

    def save_as(parent, title, name, kinds):
        asked.append((name, kinds))
        return str(target), kinds

    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(save_as))
    qtbot.mouseClick(panel.export_html, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(target.exists, timeout=10000)
    assert asked[0][0].endswith(".html") and "html" in asked[0][1]
    page = target.read_text(encoding="utf-8")
    assert page.count('<section class="step"') == 4 and "data:image/png;base64," in page
    assert "not the timer, the add button" in page
    qtbot.waitUntil(lambda: any("exported" in n.message for n in w.notifications.history), timeout=5000)
    w.close()
    store.close()
