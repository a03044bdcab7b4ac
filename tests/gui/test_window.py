"""The window mirrors a phone, parses live frames off the GUI thread, keeps the views in
sync, opens screenshots for offline inspection and closes without leaking threads."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from PIL import Image

from app.gui.devices import VIRTUAL_CHOICE, DeviceChoice, default_choice
from app.gui.session import LIVE, viewing_file
from app.gui.window import MainWindow

from .fakes import FixedParser, ScriptedPhone, window_on
from .samples import sample_image


@pytest.fixture
def phone():
    return ScriptedPhone()


@pytest.fixture
def win(qtbot, phone):
    parser = FixedParser()
    w = window_on(qtbot, phone, lambda: parser)
    w.parser_stub = parser
    yield w
    w.close()


def test_the_mirror_shows_frames_from_the_device_thread_only(win, phone, qtbot):
    qtbot.waitUntil(lambda: win.session.mirror.frames >= 5, timeout=20000)
    assert all(name.startswith("device-") for name in phone.threads)
    assert "Scripted phone" in win.device_status.text()
    assert win.phone.first_frame_s is not None and win.phone.first_frame_s > 0  # measured, not asserted (bench_gui.py)


def test_a_changed_frame_is_parsed_off_the_gui_thread_and_shown_everywhere(win, qtbot):
    qtbot.waitUntil(lambda: win.inspector.parse is not None, timeout=5000)
    assert win.view.parse is win.inspector.parse
    assert win.parser_stub.calls >= 1
    # the same frame again does not trigger another parse
    calls = win.parser_stub.calls
    qtbot.wait(300)
    assert win.parser_stub.calls == calls


def test_selecting_in_the_inspector_selects_on_the_mirror_and_back(win, qtbot):
    qtbot.waitUntil(lambda: win.inspector.parse is not None, timeout=5000)
    win.inspector.tree.setCurrentIndex(win.inspector._find("e3"))
    assert win.view.selected_id == "e3"
    win.view.elementSelected.emit("e2")
    assert win.inspector.selected_id() == "e2"


def test_opening_a_screenshot_switches_to_offline_inspection_and_back(win, qtbot, tmp_path):
    path = tmp_path / "shot.png"
    img = sample_image(540, 1200)
    Image.fromarray(img).save(path)
    win.open_screenshot(path)
    qtbot.waitUntil(lambda: win.session.viewing == viewing_file("shot.png"), timeout=5000)
    qtbot.waitUntil(lambda: win.view.frame is not None and win.view.frame.shape[:2] == (1200, 540), timeout=5000)
    assert win.banner_row.isVisible() and "shot.png" in win.banner.text()
    win.show_live()
    qtbot.waitUntil(lambda: win.view.frame.shape[:2] == (2400, 1080), timeout=5000)
    assert not win.banner_row.isVisible() and win.session.viewing == LIVE


def test_a_broken_image_file_gives_a_notification_not_a_crash(win, qtbot, tmp_path):
    bad = tmp_path / "bad.png"
    bad.write_bytes(b"not a png")
    win.open_screenshot(bad)
    qtbot.waitUntil(lambda: len(win.notifications.history) >= 1, timeout=5000)
    assert "bad.png" in win.notifications.history[-1].message
    assert win.notifications.history[-1].detail


def test_export_overlay_writes_a_device_sized_png(win, qtbot, tmp_path):
    qtbot.waitUntil(lambda: win.inspector.parse is not None, timeout=5000)
    out = tmp_path / "overlay.png"
    win.export_overlay(out)
    qtbot.waitUntil(lambda: any("Overlay saved" in n.message for n in win.notifications.history), timeout=5000)
    arr = np.asarray(Image.open(out))
    assert arr.shape[:2] == (2400, 1080)


def test_closing_the_window_closes_the_device_and_stops_all_workers(qtbot, phone):
    w = MainWindow(None, discover=False, parser_factory=FixedParser, device_factory=lambda c, t: phone)
    qtbot.addWidget(w)
    w.show()
    w.connect_device(DeviceChoice("scripted-1", "Scripted phone"))
    qtbot.waitUntil(lambda: w.view.frame is not None, timeout=5000)
    w.close()
    assert phone.closed
    assert not [t for t in threading.enumerate() if t.name.startswith(("device-", "latest-", "misc"))]


def test_a_device_that_fails_to_open_is_reported_with_its_hint(qtbot):
    from agent.device import DeviceError

    def broken(choice, timeout):
        raise DeviceError("phone unauthorised", "tap Allow on the phone")

    w = MainWindow(None, discover=False, parser_factory=FixedParser, device_factory=broken)
    qtbot.addWidget(w)
    w.connect_device(DeviceChoice("x", "Broken phone"))
    qtbot.waitUntil(lambda: len(w.notifications.history) >= 1, timeout=5000)
    n = w.notifications.history[-1]
    assert "phone unauthorised" in n.message and "tap Allow" in n.detail
    w.close()


def test_the_virtual_phone_is_the_default_without_connected_phones():
    phone = DeviceChoice("R58M", "Galaxy", problem="")
    assert default_choice([VIRTUAL_CHOICE]) == VIRTUAL_CHOICE
    assert default_choice([phone, VIRTUAL_CHOICE]) == phone
    assert default_choice([phone, VIRTUAL_CHOICE], hint="sim") == VIRTUAL_CHOICE
    unauthorised = DeviceChoice("R58M", "Galaxy", problem="unauthorised")
    assert default_choice([unauthorised, VIRTUAL_CHOICE]) == VIRTUAL_CHOICE


def test_the_knowledge_browser_saves_context_edits_in_the_database(win, qtbot):
    win.knowledge_dock.raise_()
    qtbot.waitUntil(lambda: win.knowledge_panel.graph_nodes == 0, timeout=5000)
    win.knowledge_panel.contextEdited.emit("contacts.mom.phone", "555-0100")
    qtbot.waitUntil(lambda: "contacts.mom.phone" in win.knowledge_panel.context_paths(), timeout=5000)
    from app.knowledge_store import SqliteKnowledgeStore

    assert SqliteKnowledgeStore(win.store()).load_context("default")["contacts"]["mom"]["phone"] == "555-0100"
