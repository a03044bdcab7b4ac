"""The window's "Explore this app": explores the app in front on the (virtual) phone off
the GUI thread with a progress bar, stores the map, and shows it in the Knowledge tab
(screens with thumbnails; a click on a screen shows its elements, on an arrow the
element that leads there); the export writes the stored map."""

from __future__ import annotations

import json

import pytest

pytestmark = [pytest.mark.gui, pytest.mark.slow]


@pytest.fixture
def win(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("TAPWISE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("TAPWISE_CONFIG_DIR", str(tmp_path / "cfg"))
    from phone.virtual.phone import VirtualPhone
    from tests.gui.fakes import window_on
    from vision.config import PipelineConfig
    from vision.pipeline import ScreenParser

    phone = VirtualPhone()
    phone.open_app("Notes")
    w = window_on(qtbot, phone, lambda: ScreenParser(PipelineConfig(mode="tree", ocr="none", detector="none",
                                                                    icons="none")),
                  serial="virtual-1", name="Virtual phone", timeout=10000)
    w.phone_stub = phone
    yield w
    w.knowledge.shutdown()
    w.close()


def test_explore_this_app_fills_the_map_view_without_blocking_the_window(win, qtbot, tmp_path):
    maps = win.knowledge_panel.maps
    seen_progress = []
    maps.progress.valueChanged.connect(seen_progress.append)
    maps.explore_button.click()
    qtbot.waitUntil(lambda: not maps.explore_button.isEnabled(), timeout=10000)  # running
    assert maps.stop_button.isEnabled()
    qtbot.waitUntil(lambda: maps.explore_button.isEnabled() and maps.app_box.count() == 1, timeout=120000)
    assert seen_progress and max(seen_progress) > 0
    assert maps.app_box.currentData() == "com.google.android.keep"
    assert len(maps.screen_items) >= 2 and "screens" in maps.coverage.text() and "deleting" in maps.coverage.text()
    # a screen: its screenshot and elements, with why some were not tried
    key = next(iter(maps.screen_items))
    maps.screen_items[key].setSelected(True)
    statuses = {maps.elements.item(r, 1).text() for r in range(maps.elements.rowCount())}
    assert "tried" in statuses and maps.shot.pixmap() is not None and not maps.shot.pixmap().isNull()
    reasons = [maps.elements.item(r, 2).text() for r in range(maps.elements.rowCount())]
    assert any(r.startswith("opens") for r in reasons)
    # an arrow: the element that leads there
    pic = maps._current
    edge = next(e for e in pic.edges if e.src != e.dst and e.dst in maps.screen_items)
    maps.show_edge(edge.src, edge.element)
    assert f"'{edge.name}'" in maps.detail.text() and "opens" in maps.detail.text()
    # export writes the stored map
    out = tmp_path / "notes.json"
    win.knowledge.export_map("com.google.android.keep", str(out))
    qtbot.waitUntil(out.exists, timeout=10000)
    assert json.loads(out.read_text(encoding="utf-8"))["package"] == "com.google.android.keep"


def test_explore_on_the_home_screen_asks_to_open_an_app_first(win, qtbot):
    win.phone_stub.key("HOME")
    maps = win.knowledge_panel.maps
    messages = []
    orig = win.notify
    win.notify = lambda level, message, *a, **k: (messages.append(message), orig(level, message, *a, **k))
    win.knowledge.explore_app()
    qtbot.waitUntil(lambda: bool(messages), timeout=10000)
    assert "Open the app to explore" in messages[0] and maps.explore_button.isEnabled()
