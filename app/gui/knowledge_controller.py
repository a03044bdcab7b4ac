"""The knowledge browser's wiring: reads the task repository, the context library, the
interaction graph and the app maps from the database on a worker thread, and applies
the user's edits (context records, forgetting a task) there too.

"Explore this app" explores the app in front on the phone (``agent.knowledge.explore``)
on its own worker thread, every device call going through the phone's serial executor
and every database write through the misc worker; progress reaches the panel's bar
through the GUI poster; Stop cancels it.  Maps are read and stored per UI language
(``agent.knowledge.map_language``): the view lists the maps of the language the phone
shows (``set_language``, told by ``app.gui.auto_explore``).  A phone that is not virtual
is explored only after the user agreed to the risks shown.  Never imports the window."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from agent.llm.base import CancelToken
from app.gui.session import Workbench
from app.gui.workers import SerialExecutor
from widgets.notifications import Level

log = logging.getLogger(__name__)

USER = "default"
#: Pause after each exploring action: the phone animates and the mirror's frames lag the
#: accessibility tree, and a screen's thumbnail must show that screen.
SETTLE_S = 0.35


class KnowledgeController:
    def __init__(self, ui: Workbench) -> None:
        self.w = ui
        panel = ui.knowledge_panel
        panel.contextEdited.connect(self.set_context)
        panel.contextDeleted.connect(self.delete_context)
        panel.taskDeleteRequested.connect(self.delete_task)
        panel.memoryDeleteRequested.connect(self.forget_decision)
        panel.maps.exploreRequested.connect(self.explore_app)
        panel.maps.stopRequested.connect(self.stop_exploring)
        panel.maps.exportRequested.connect(self.export_map)
        self._explorer: SerialExecutor | None = None
        self._cancel: CancelToken | None = None
        from PySide6.QtCore import QCoreApplication

        app = QCoreApplication.instance()
        if app is not None:  # an exploration stops with the application
            app.aboutToQuit.connect(self.shutdown)

    def _kstore(self) -> Any:
        from app.knowledge_store import SqliteKnowledgeStore

        return SqliteKnowledgeStore(self.w.session.store())

    def refresh(self) -> None:
        def load() -> tuple[list, dict, Any]:
            from agent.knowledge.graph import InteractionGraph

            ks = self._kstore()
            return ks.tasks(), ks.load_context(USER), InteractionGraph.from_data(ks.load_graph()).picture()

        self.w.session.misc.submit(load, on_done=lambda r: self.w.knowledge_panel.set_data(*r),
                           on_error=lambda f: self.w.notify_failure("Could not read the knowledge base", f))
        self.refresh_maps()
        self.refresh_memory()

    # ---- decision memory --------------------------------------------------------------------
    def refresh_memory(self) -> None:
        def load() -> list:
            from agent.memory.memory import DecisionMemory

            return DecisionMemory(self._kstore()).all()

        self.w.session.misc.submit(load, on_done=lambda rows: self.w.knowledge_panel.memory.set_entries(
            rows, _app_labels(rows)), on_error=lambda f: self.w.notify_failure("Could not read the decision memory", f))

    def forget_decision(self, entry_id: str) -> None:
        """Delete one remembered decision (it is never proposed again)."""
        def forget() -> None:
            self._kstore().delete_decision(entry_id)

        self.w.session.misc.submit(forget, on_done=lambda _r: self.refresh_memory(),
                                   on_error=lambda f: self.w.notify_failure("Could not forget the decision", f))

    # ---- app maps ----------------------------------------------------------------------------
    def _maps_store(self, language: str | None) -> Any:
        """The maps of ``language`` (``agent.knowledge.map_language``); None: as they are kept."""
        from agent.knowledge.map_language import LanguageMaps

        return self._kstore() if language is None else LanguageMaps(self._kstore(), language)

    @property
    def language(self) -> str | None:
        """The phone's UI language: the maps shown are its (None: not known yet)."""
        return self.w.session.maps_language

    def set_language(self, language: str) -> None:
        """The phone shows ``language``: the map view lists that language's maps."""
        self.w.session.maps_language = language
        self.refresh_maps()

    def refresh_maps(self, show: str = "") -> None:
        language = self.language

        def load() -> list:
            from agent.knowledge.guide import AppMaps

            return [m.picture() for m in AppMaps(self._maps_store(language)).all()]

        self.w.session.misc.submit(load, on_done=lambda maps: self.w.knowledge_panel.maps.set_maps(maps, show),
                                   on_error=lambda f: self.w.notify_failure("Could not read the app maps", f))

    @property
    def exploring(self) -> bool:
        return self._cancel is not None

    def explore_app(self) -> None:
        """Explore the app in front on the phone (asks first on a real phone)."""
        session = self.w.session
        if self.exploring:
            return
        if session.device is None or session.executor is None:
            self.w.notify(Level.WARNING, "Connect a phone first, then open the app to explore on it.")
            return
        if self.w.run_active():
            self.w.notify(Level.WARNING, "A task is running: explore when it has finished.")
            return
        device = session.device
        session.executor.submit(device.foreground, on_done=lambda fg: self._start(fg[0]),
                                on_error=lambda f: self.w.notify_failure("Could not tell which app is in front", f))

    def _start(self, package: str) -> None:
        from agent.knowledge.explore import RISKS

        session = self.w.session
        if not package or "launcher" in package.lower():
            self.w.notify(Level.WARNING, "Open the app to explore on the phone first (the home screen is in front).")
            return
        if session.device is None:
            return
        if not session.device.info.is_virtual and not self._consent(package, RISKS):
            self.w.notify(Level.INFO, "Exploration cancelled: nothing was tapped.")
            return
        from agent.screen_text import app_words

        label = app_words(package)  # "com.android.settings" -> "Settings", when the phone cannot say
        try:
            from agent.device import KnowsApps

            if isinstance(session.device, KnowsApps):
                label = next((n for n, p in session.device.installed_apps() if p == package), label)
        except Exception as exc:  # the name is only for show
            log.info("could not list the phone's apps: %s", exc)
        self._cancel = CancelToken()
        if self._explorer is None:
            self._explorer = SerialExecutor("explore", session.poster)
        device = session.agent_device()
        maps_view = self.w.knowledge_panel.maps
        maps_view.set_progress(0.0, f"exploring {label}…", True)
        cancel = self._cancel

        def progress(p: Any) -> None:
            text = f"{label}: {p.steps}/{p.max_steps} steps · {p.screens} screens · {p.transitions} transitions — {p.message}"
            session.poster.post(lambda: maps_view.set_progress(p.fraction, text, not p.done))

        def run() -> Any:
            from agent.knowledge.explore import ExploreBudget, Explorer
            from agent.knowledge.guide import AppMaps
            from agent.knowledge.map_language import map_id, phone_language
            from app.compose import make_parser

            maps = AppMaps(self._maps_store(phone_language(device)))  # the maps of the language shown now
            earlier = session.misc.call(lambda: maps.load(package), timeout=60)

            def save(m: Any) -> None:
                m.label = label
                key, data = map_id(m.package, m.language), m.to_data()  # here: the explorer changes m
                session.misc.submit(lambda: maps.store.save_app_map(key, data))

            explorer = Explorer(device, make_parser(session.settings, mode="tree"), package, app_map=earlier,
                                budget=ExploreBudget(settle_s=SETTLE_S), progress=progress, cancel=cancel,
                                consent=lambda _risks: True, save=save)
            m = explorer.run()
            m.label = label
            session.misc.call(lambda: maps.save(m), timeout=60)
            return m.language, m.coverage()

        self._explorer.submit(run, on_done=lambda r: self._explored(label, package, *r),
                              on_error=self._failed)

    def _consent(self, package: str, risks: str) -> bool:
        from PySide6.QtWidgets import QMessageBox

        answer = QMessageBox.question(
            self.w.knowledge_panel, "Explore this app on your phone?",
            f"Tapwise will explore {package} on the connected phone.\n\n{risks}",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, QMessageBox.StandardButton.No)
        return answer == QMessageBox.StandardButton.Yes

    def _explored(self, label: str, package: str, language: str, cov: dict[str, int]) -> None:
        self._cancel = None
        self.w.session.maps_language = language
        text = (f"{label} explored: {cov['screens']} screens, {cov['transitions']} transitions, "
                f"{cov['not_tried']} elements not tried.")
        self.w.knowledge_panel.maps.set_progress(1.0, text, False)
        self.w.notify(Level.INFO, text)
        self.refresh_maps(show=package)

    def _failed(self, failure: Any) -> None:
        self._cancel = None
        self.w.knowledge_panel.maps.set_progress(0.0, "exploration stopped by an error", False)
        self.w.notify_failure("Exploring the app failed", failure)
        self.refresh_maps()

    def stop_exploring(self) -> None:
        if self._cancel is not None:
            self._cancel.cancel()

    def export_map(self, package: str, path: str) -> None:
        language = self.language

        def write() -> str:
            data = self._maps_store(language).load_app_map(package)
            if data is None:
                raise FileNotFoundError(f"no stored map of {package}")
            out = Path(path)
            part = out.with_name(out.name + ".part")  # whole or not at all: a reader never sees half a map
            part.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
            part.replace(out)
            return path

        self.w.session.misc.submit(write, on_done=lambda p: self.w.notify(Level.INFO, f"App map written to {p}"),
                                   on_error=lambda f: self.w.notify_failure("Could not export the app map", f))

    def shutdown(self) -> None:
        """Stop an exploration and its worker (the window is closing)."""
        self.stop_exploring()
        if self._explorer is not None:
            self._explorer.shutdown(wait=False)

    def _apply(self, what: str, fn: Any) -> None:
        self.w.session.misc.submit(fn, on_done=lambda _r: self.refresh(),
                           on_error=lambda f: self.w.notify_failure(what, f))

    def set_context(self, path: str, value: Any) -> None:
        def apply() -> None:
            from agent.knowledge.context import ContextLibrary

            ContextLibrary(self._kstore(), USER).set(path, value)

        self._apply(f"Could not save “{path}”", apply)

    def delete_context(self, path: str) -> None:
        def apply() -> None:
            from agent.knowledge.context import ContextLibrary

            ContextLibrary(self._kstore(), USER).delete(path)

        self._apply(f"Could not delete “{path}”", apply)

    def delete_task(self, record_id: str) -> None:
        self._apply("Could not forget the task", lambda: self._kstore().delete_task(record_id))
        self.w.notify(Level.INFO, "The task was removed from the repository.")


def _app_labels(rows: list) -> dict[str, str]:
    """Package -> the app's usual name, for the memory list's branches."""
    from agent.screen_text import app_words, is_home

    return {r.app: "Home screen" if is_home(r.app) else app_words(r.app) for r in rows if r.app}
