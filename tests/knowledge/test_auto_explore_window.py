"""Maps where they exist, without being told: a window connected to the virtual phone
explores every launchable app that has no map in the phone's language by itself, on a
second virtual phone of the same configuration (the phone the user sees is never
touched), one app at a time, with progress on the Knowledge tab and in the status bar;
switching the phone to German brings German maps; starting a task stops it at once (it
carries on afterwards); on a real phone nothing is tapped before the user agrees, and the
answer is kept per phone."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
pytest.importorskip("pytestqt", reason="the window tests need pytest-qt")

from agent.device import DeviceInfo
from agent.knowledge.explore import ExploreBudget
from agent.knowledge.guide import AppMaps, MapGuide
from agent.knowledge.map_language import LanguageMaps
from phone.virtual.phone import VirtualPhone

pytestmark = [pytest.mark.gui, pytest.mark.slow]

SMALL = ExploreBudget(max_steps=14, max_seconds=60.0)


def _parser():
    from vision.config import PipelineConfig
    from vision.pipeline import ScreenParser

    return ScreenParser(PipelineConfig(mode="tree", ocr="none", detector="none", icons="none"))


class CountingPhone(VirtualPhone):
    """The phone the user sees: counts every input it gets."""

    def __init__(self, *a, real: bool = False, **k) -> None:
        self.inputs = 0
        self.real = real
        super().__init__(*a, **k)

    @property
    def info(self) -> DeviceInfo:
        info = super().info
        return DeviceInfo(serial="real-1" if self.real else info.serial, model=info.model, size=info.size,
                          density_dpi=info.density_dpi, is_virtual=not self.real)

    def tap(self, x: int, y: int) -> None:
        self.inputs += 1
        super().tap(x, y)

    def open_app(self, name_or_package: str) -> None:
        self.inputs += 1
        super().open_app(name_or_package)


def _window(qtbot, tmp_path, phone, *, budget=SMALL, quiet_ms=300):
    from app.gui.devices import DeviceChoice
    from app.gui.window import MainWindow
    from app.settings import AgentSettings, Settings

    settings = Settings(data_dir=tmp_path, agent=AgentSettings(explore_automatically=True))
    w = MainWindow(settings, discover=False, parser_factory=_parser, device_factory=lambda c, t: phone,
                   live_parse=False)
    qtbot.addWidget(w)
    auto = w.auto_explore
    auto.delay_ms, auto.quiet_ms, auto.recheck_ms, auto.budget = 0, quiet_ms, 600000, budget
    w.resize(1024, 700)
    w.show()
    qtbot.waitExposed(w)
    w.connect_device(DeviceChoice(phone.info.serial, "phone", is_virtual=phone.info.is_virtual))
    return w


def _maps(w, language: str) -> dict:
    from app.knowledge_store import SqliteKnowledgeStore

    return {m.package: m for m in AppMaps(LanguageMaps(SqliteKnowledgeStore(w.session.store()), language)).all()}


def _every_app_mapped(w, phone, language: str) -> bool:
    return set(_maps(w, language)) >= {pkg for _name, pkg in phone.installed_apps()} and not w.auto_explore.running


def test_a_fresh_window_on_the_virtual_phone_maps_every_app_by_itself_then_in_german_too(qtbot, tmp_path):
    phone = CountingPhone()
    w = _window(qtbot, tmp_path, phone)
    try:
        w.knowledge_dock.raise_()
        qtbot.waitUntil(lambda: w.auto_explore.running, timeout=60000)
        maps_view = w.knowledge_panel.maps
        qtbot.waitUntil(lambda: maps_view.progress.isVisible() and "by itself" in maps_view.progress.format(),
                        timeout=30000)
        assert w.auto_explore.status.text().startswith("maps: exploring")
        qtbot.waitUntil(lambda: _every_app_mapped(w, phone, "en"), timeout=600000)
        assert phone.inputs == 0, "the phone the user sees is never touched"
        maps = _maps(w, "en")
        assert all(m.language == "en" and m.screens for m in maps.values())
        qtbot.waitUntil(lambda: "apps mapped (en)" in w.auto_explore.status.text(), timeout=60000)
        qtbot.waitUntil(lambda: maps_view.app_box.count() == len(maps), timeout=30000)  # the Knowledge tab lists them

        phone.state["settings"]["language"] = "de"  # Settings > Languages > Deutsch, by the user
        w.task_ended()  # (a task ended, or the minute passed): the phone is looked over again
        qtbot.waitUntil(lambda: _every_app_mapped(w, phone, "de"), timeout=600000)
        german = _maps(w, "de")
        assert all(m.language == "de" for m in german.values()) and set(_maps(w, "en")) == set(maps)
        assert phone.inputs == 0
        # the guide of the German phone reads the German maps: the German goal finds its screen
        fresh = VirtualPhone(lang="de")
        fresh.open_app("com.android.settings")
        screen = fresh.screenshot(with_hierarchy=True)
        hint = MapGuide(german.values()).hint("Schalte den Flugmodus ein", _parser().parse(screen), screen)
        assert hint is not None and "Netzwerk & Internet" in hint.text
    finally:
        w.close()


def test_starting_a_task_stops_exploring_at_once_and_it_carries_on_afterwards(qtbot, tmp_path):
    import threading

    from tests.gui.test_run_flow import scripted_loop

    phone = CountingPhone()
    w = _window(qtbot, tmp_path, phone, budget=ExploreBudget(max_steps=400, max_seconds=120.0))
    try:
        auto = w.auto_explore
        qtbot.waitUntil(lambda: auto.running, timeout=60000)
        log, cleaned = [], threading.Event()
        w.run._make_generator = lambda req: scripted_loop(3, log, cleaned)
        w.task_panel.set_models(["fake-model"])
        w.task_panel.goal.setPlainText("Turn off Wi-Fi")
        w.task_panel.start.click()
        qtbot.waitUntil(lambda: not auto.running, timeout=5000)
        assert "paused" in auto.status.text()
        qtbot.waitUntil(lambda: w.decision_bar.enabled, timeout=10000)
        qtbot.wait(1500)
        assert not auto.running, "no exploring while the task runs"
        stopped = dict(_maps(w, "en"))
        assert stopped and not any(m.complete for m in stopped.values()), "the stopped map is kept, unfinished"
        w.run.abort()
        qtbot.waitUntil(lambda: not w.run.active, timeout=10000)
        qtbot.waitUntil(lambda: auto.running, timeout=30000)  # idle again: it carries on
        first = next(iter(stopped.values()))
        qtbot.waitUntil(lambda: _maps(w, "en")[first.package].steps_used > first.steps_used or
                        len(_maps(w, "en")) > len(stopped), timeout=60000)
        assert phone.inputs == 0
    finally:
        w.close()


def test_on_a_real_phone_nothing_is_explored_before_the_user_agrees_and_the_answer_is_kept(qtbot, tmp_path):
    from PySide6.QtWidgets import QMessageBox

    from app.gui.devices import DeviceChoice

    phone = CountingPhone(real=True)
    w = _window(qtbot, tmp_path, phone)
    try:
        auto = w.auto_explore
        qtbot.waitUntil(lambda: auto.consent_box is not None, timeout=60000)
        box = auto.consent_box
        assert "Explore 8 apps now?" in box.text() and "never types anything" in box.text()
        qtbot.wait(500)
        assert phone.inputs == 0 and not auto.running and not _maps(w, "en")
        box.done(QMessageBox.StandardButton.No)
        qtbot.waitUntil(lambda: "declined" in auto.status.text(), timeout=5000)
        # connected again: the answer is remembered, nothing is asked and nothing tapped
        w.connect_device(DeviceChoice(phone.info.serial, "phone", is_virtual=False))
        qtbot.waitUntil(lambda: "declined" in auto.status.text() and auto.plan is not None, timeout=30000)
        qtbot.wait(500)
        assert auto.consent_box is None and phone.inputs == 0 and not _maps(w, "en")
    finally:
        w.close()


def test_on_a_real_phone_the_user_lets_explore_it_is_explored_and_pauses_when_the_user_works_on_it(qtbot,
                                                                                                      tmp_path):
    from PySide6.QtWidgets import QMessageBox

    from agent.types import Action

    phone = CountingPhone(real=True)
    w = _window(qtbot, tmp_path, phone, budget=ExploreBudget(max_steps=30, max_seconds=60.0), quiet_ms=1500)
    try:
        auto = w.auto_explore
        qtbot.waitUntil(lambda: auto.consent_box is not None, timeout=60000)
        auto.consent_box.done(QMessageBox.StandardButton.Yes)
        qtbot.waitUntil(lambda: auto.running and phone.inputs > 2, timeout=60000)
        # with consent the phone itself is explored (there is no twin of a real phone) ...
        w.view.controlGesture.emit(Action.tap(540, 1200))  # ... until the user works on it
        qtbot.waitUntil(lambda: not auto.running, timeout=5000)
        assert "you are using the phone" in auto.status.text()
        qtbot.waitUntil(lambda: len(_maps(w, "en")) >= 1, timeout=60000)  # what it found is kept
        qtbot.waitUntil(lambda: auto.running, timeout=30000)  # and it carries on once the user stops
    finally:
        w.close()


def test_closing_the_window_while_the_question_is_open_keeps_no_answer_for_the_phone(qtbot, tmp_path):
    from app.knowledge_store import SqliteKnowledgeStore
    from app.storage import Store

    phone = CountingPhone(real=True)
    w = _window(qtbot, tmp_path, phone)
    database = w.session.settings.database_path
    auto = w.auto_explore
    qtbot.waitUntil(lambda: auto.consent_box is not None, timeout=60000)
    w.close()  # the question was never answered ...
    store = Store(database)
    try:  # ... so it is asked again next time, not taken for a "No"
        assert SqliteKnowledgeStore(store).explore_consent(phone.info.serial) is None
    finally:
        store.close()
    assert phone.inputs == 0
