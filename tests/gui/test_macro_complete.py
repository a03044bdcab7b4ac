"""The Macros tab's "Complete from map": the app map's steps towards the macro's goal are
shown for approval, marked, and saved as a new version only when the user saves them."""

from __future__ import annotations

import pytest

pytest.importorskip("phone.virtual.phone", reason="needs the virtual phone")

from agent.knowledge.explore import ExploreBudget, Explorer
from agent.knowledge.guide import AppMaps
from agent.macros.recorder import Observation, Recorder
from agent.macros.types import Macro
from agent.types import Action
from app.gui.window import MainWindow
from app.knowledge_store import SqliteKnowledgeStore
from app.settings import Settings, VisionSettings
from app.storage import Store
from phone.virtual.phone import VirtualPhone
from vision.config import PipelineConfig
from vision.pipeline import ScreenParser

PARSER = ScreenParser(PipelineConfig(mode="tree", ocr="none", detector="none", icons="none"))


def _opens_settings() -> Macro:
    """Recorded on the mirror: one tap on the Settings icon of the home screen."""
    phone = VirtualPhone()
    shot = phone.screenshot(with_hierarchy=True)
    before = Observation(PARSER.parse(shot), shot.image, shot.foreground_package)
    c = next(e for e in before.parse.elements if e.text == "Settings" or e.label == "Settings").rect.center
    phone.tap(c.x, c.y)
    after = phone.screenshot(with_hierarchy=True)
    rec = Recorder()
    rec.record(Action.tap(c.x, c.y), before, Observation(PARSER.parse(after), after.image, after.foreground_package))
    return rec.build("Turn on dark theme")


@pytest.fixture
def window(qtbot, tmp_path):  # type: ignore[no-untyped-def]
    """Opens the window (``with_map``: Settings explored first) with the one-tap macro
    selected; closes the window and its store after the test."""
    opened = []

    def open_(with_map: bool):  # type: ignore[no-untyped-def]
        win, store, macro = _window(qtbot, tmp_path, with_map)
        opened.append((win, store))
        return win, store, macro

    yield open_
    for win, store in opened:
        win.close()
        store.close()


def _window(qtbot, tmp_path, with_map: bool):  # type: ignore[no-untyped-def]
    settings = Settings(data_dir=tmp_path, vision=VisionSettings(use_hierarchy="only"))
    store = Store(settings.database_path)
    macro = store.save_macro(_opens_settings())
    if with_map:
        m = Explorer(VirtualPhone(), PARSER, "Settings", budget=ExploreBudget(max_steps=60)).run()
        AppMaps(SqliteKnowledgeStore(store)).save(m)
    win = MainWindow(settings, "sim", discover=False, store=store)
    qtbot.addWidget(win)
    win.show()
    panel = win.macro_panel
    qtbot.waitUntil(lambda: panel.list.count() == 1, timeout=20000)
    panel.list.setCurrentRow(0)
    return win, store, macro


def test_complete_from_map_shows_the_steps_for_approval_and_saves_them_as_the_next_version(qtbot, window):
    win, store, macro = window(with_map=True)
    panel = win.macro_panel
    assert panel.complete.isEnabled()

    panel.complete.click()

    dialog = win.macros.dialog
    assert dialog is not None and dialog.goal_text() == "Turn on dark theme"
    qtbot.waitUntil(lambda: dialog.save.isEnabled(), timeout=20000)  # worked out off the GUI thread
    assert dialog.rows() == ["1. open the 'Settings' app", "2. tap 'Display' (from the app map)",
                             "3. turn on 'Dark theme' (from the app map)"]
    assert dialog.save.text() == "Save as v2" and "towards 'Display'" in dialog.status.text()
    assert store.macro_versions(macro.id) == [1]  # nothing is saved before the user says so

    dialog.save.click()

    qtbot.waitUntil(lambda: "v2, 3 steps" in panel.list.item(0).text(), timeout=10000)
    assert store.macro_versions(macro.id) == [1, 2] and len(store.load_macro(macro.id, 1).steps) == 1
    assert any("Completed from the app map" in n.message for n in win.notifications.history)


def test_without_a_map_the_dialog_says_to_explore_first_and_nothing_can_be_saved(qtbot, window):
    win, store, macro = window(with_map=False)

    win.macro_panel.complete.click()

    dialog = win.macros.dialog
    qtbot.waitUntil(lambda: "explore" in dialog.status.text(), timeout=20000)
    assert "tapwise explore Settings" in dialog.status.text() and not dialog.save.isEnabled()
    dialog.reject()
    qtbot.waitUntil(lambda: win.macros.dialog is None, timeout=5000)
    assert store.macro_versions(macro.id) == [1]


def test_another_goal_can_be_asked_in_the_dialog(qtbot, window):
    win, _store, _macro = window(with_map=True)
    win.macro_panel.complete.click()
    dialog = win.macros.dialog
    qtbot.waitUntil(lambda: dialog.save.isEnabled(), timeout=20000)

    dialog.goal.setText("Turn on airplane mode")
    dialog.ask.click()

    qtbot.waitUntil(lambda: dialog.save.isEnabled() and "Airplane" in " ".join(dialog.rows()), timeout=20000)
    assert dialog.rows()[-1].endswith("turn on 'Airplane mode' (from the app map)")
    dialog.reject()
