"""The window side of model management: mounts the model manager panel as a dock and does
its work off the GUI thread.

- On start and on demand it lists the models (Ollama's and the built-in ones); when no
  Ollama answers it offers the built-in model in one click, saying plainly that it is a
  small demo-grade model.
- It starts the built-in llama.cpp server with loading progress, switches the window's
  LLM settings to it the moment it is ready (no restart), and stops it when the window
  closes (an event filter on the window: the window's own close code is untouched).
- "Use this model" switches the settings to an Ollama model at once; pulling streams
  Ollama's progress into the panel; per-model settings are saved as they change and the
  current model's temperature applies at once.

Results come back to the GUI thread through the window's ``GuiPoster``.
"""

from __future__ import annotations

import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QDockWidget

from widgets.model_manager import ModelManagerPanel, ModelRow
from widgets.notifications import Level

log = logging.getLogger(__name__)



def _settings_of(window: Any) -> Any:
    """The window's settings (held by its session); None for a window without one (tests)."""
    return getattr(getattr(window, "session", None), "settings", None)

class ModelController(QObject):
    """Owns the model panel, the built-in server and the model manager for one window."""

    def __init__(self, window: Any, *, manager: Any = None, prefs: Any = None, auto_refresh: bool = True,
                 builtin_alias: str = "") -> None:
        super().__init__(window)
        from agent.llm.adapters import ADAPTERS
        from app.model_prefs import ModelManager, PrefsStore

        self.window = window
        llm = getattr(_settings_of(window), "llm", None)
        self.manager = manager or ModelManager(getattr(llm, "ollama_host", "http://127.0.0.1:11434"))
        session = getattr(window, "session", None)
        self.prefs = prefs or (session.prefs if session is not None else PrefsStore.default())
        self.panel = ModelManagerPanel(adapters=list(ADAPTERS))
        self.dock = QDockWidget("Models", window)
        self.dock.setObjectName("modelsDock")
        self.dock.setWidget(self.panel)
        window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.dock)
        self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="models")
        self._server: Any = None
        self._cancel = threading.Event()
        self._closed = False
        self.offering_builtin = False  # the panel offers the built-in model: no Ollama answered
        self.builtin_phase = "stopped"
        self.builtin_alias = builtin_alias  # "" = the catalog's default
        self._then: Any = None  # called once a requested built-in model is in use
        self.panel.refreshRequested.connect(self.refresh)
        self.panel.pullRequested.connect(self.pull)
        self.panel.useRequested.connect(self.use_model)
        self.panel.builtinStartRequested.connect(lambda: self.start_builtin(self.builtin_alias))
        self.panel.builtinStopRequested.connect(self.stop_builtin)
        self.panel.prefsChanged.connect(self.save_prefs)
        self.panel.tree.itemSelectionChanged.connect(self._show_prefs)
        window.installEventFilter(self)
        if self.prefs.problem:
            self._notify(Level.WARNING, self.prefs.problem)
        if auto_refresh:
            self.refresh()

    # ---- plumbing ------------------------------------------------------------------------------
    def _post(self, fn: Any) -> None:
        if not self._closed:
            self.window.session.poster.post(fn)

    def _run(self, job: Any, done: Any, failed: Any) -> None:
        def work() -> None:
            try:
                result = job()
            except Exception as exc:  # reported on the GUI thread
                log.info("model job failed: %s", exc, exc_info=True)
                self._post(lambda error=exc: failed(error))  # bound now: ``exc`` is cleared after the block
                return
            self._post(lambda: done(result))

        self._pool.submit(work)

    def _notify(self, level: Level, message: str, detail: str = "") -> None:
        notify = getattr(self.window, "notify", None)
        if notify is not None:
            notify(level, message, detail, key="models")

    def current_model(self) -> str:
        llm = getattr(_settings_of(self.window), "llm", None)
        return str(getattr(llm, "model", "") or "")

    # ---- listing --------------------------------------------------------------------------------
    def refresh(self) -> None:
        """List the models again (on a worker); called on start, by Refresh and on settings changes."""
        llm = getattr(_settings_of(self.window), "llm", None)
        host = getattr(llm, "ollama_host", None)
        if host:
            self.manager.ollama_host = host
        self._run(self.manager.list_models, self._listed,
                  lambda exc: self.panel.set_models([], f"Could not list models: {exc}"))

    def _listed(self, listing: Any) -> None:
        current = self.current_model()
        rows = [ModelRow(m.name, m.source, m.adapter, m.note, m.name == current) for m in listing.models]
        # while the built-in model stands in, that no Ollama answers is not news
        stands_in = not listing.ollama_reachable and self.builtin_phase in ("preparing", "loading", "ready")
        self.panel.set_models(rows, "" if stands_in else "\n".join(listing.problems))
        llm = getattr(_settings_of(self.window), "llm", None)
        uses_ollama = getattr(llm, "backend", "ollama") == "ollama"  # another server answers for itself
        offer = uses_ollama and not listing.ollama_reachable and self.builtin_phase in ("stopped", "failed")
        self.offering_builtin = offer
        self.panel.show_builtin_offer(offer, self.manager.ollama_host or "")
        if offer:
            self.dock.show()
            self.dock.raise_()
            resolve = getattr(getattr(self.window, "notifications", None), "resolve", None)
            if resolve is not None:
                resolve("model-list")  # one message about a missing Ollama: the offer says it

    def settings_changed(self) -> None:
        """The window's settings changed: the list may differ (another Ollama host)."""
        self.refresh()

    # ---- the built-in model ------------------------------------------------------------------
    def builtin_ready(self, alias: str) -> bool:
        """The built-in model ``alias`` is running and the settings point at it."""
        server = self._server
        return (server is not None and self.builtin_phase == "ready" and server.alias == alias
                and self.current_model() == alias)

    def start_builtin(self, alias: str = "", then: Any = None) -> None:
        """Start the built-in model (default: the catalog's default) and switch to it when
        ready; ``then`` is called once it is in use."""
        self._then = then
        from app.builtin_model.catalog import ModelFileError, by_alias, default_model
        from app.builtin_model.server import BuiltinServer, ServerOptions, ServerProgress

        if self.builtin_phase in ("preparing", "loading"):
            return
        try:
            model = by_alias(alias) if alias else default_model()
        except ModelFileError as exc:
            self._builtin_failed(exc)
            return
        if self._server is not None and self._server.running() and self._server.alias == model.alias:
            self._use_builtin_url(self._server.base_url, model.alias)
            self._call_then()
            return
        self.stop_builtin()
        prefs = self.prefs.get(model.alias)
        self._cancel = threading.Event()
        cancel = self._cancel
        server = BuiltinServer(model, ServerOptions(n_ctx=prefs.context_length or 8192))
        self._server = server
        self.builtin_phase = "preparing"
        self.panel.set_builtin_state("preparing", f"preparing {model.title}…", 0.0)

        def progress(p: ServerProgress) -> None:
            self._post(lambda: self._builtin_progress(server, p))

        self._run(lambda: server.start(progress, cancel), lambda url: self._builtin_ready(server, url),
                  self._builtin_failed)

    def _builtin_progress(self, server: Any, p: Any) -> None:
        if server is not self._server or self.builtin_phase not in ("preparing", "loading"):
            return
        self.builtin_phase = p.phase if p.phase in ("preparing", "loading") else self.builtin_phase
        self.panel.set_builtin_state(self.builtin_phase, p.message, p.fraction)
        busy = getattr(self.window, "busy", None)
        if busy is not None:
            busy(p.message)

    def _builtin_ready(self, server: Any, url: str) -> None:
        if server is not self._server:
            return
        self.builtin_phase = "ready"
        self.panel.set_builtin_state("ready", f"{server.model.title} at {url} (small demo-grade model)", 1.0)
        busy = getattr(self.window, "busy", None)
        if busy is not None:
            busy("")
        self._use_builtin_url(url, server.alias)
        self._notify(Level.INFO, f"Using the built-in model {server.alias}: a small demo-grade model, expect mistakes.")
        self._call_then()

    def _call_then(self) -> None:
        then, self._then = self._then, None
        if then is not None:
            then()

    def _builtin_failed(self, exc: BaseException) -> None:
        self._then = None
        self.builtin_phase = "failed"
        self.panel.set_builtin_state("failed", f"could not start: {exc}")
        busy = getattr(self.window, "busy", None)
        if busy is not None:
            busy("")
        self._notify(Level.ERROR, "The built-in model did not start", str(exc))

    def stop_builtin(self) -> None:
        server, self._server = self._server, None
        self._cancel.set()
        if server is not None:
            self._pool.submit(server.stop)
        if self.builtin_phase != "stopped":
            self.builtin_phase = "stopped"
            self.panel.set_builtin_state("stopped", "stopped")

    def _use_builtin_url(self, url: str, alias: str) -> None:
        self._apply_llm(backend="openai", openai_base_url=url, model=alias)

    # ---- choosing, pulling, preferences -----------------------------------------------------
    def use_model(self, name: str, source: str) -> None:
        if source == "builtin":
            self.start_builtin(name)
            return
        self._apply_llm(backend="ollama", model=name)

    def _apply_llm(self, **changes: Any) -> None:
        """Switch the window's LLM settings now; the next step uses them."""
        settings = _settings_of(self.window)
        if settings is None or not hasattr(settings, "llm"):
            return
        prefs = self.prefs.get(str(changes.get("model", settings.llm.model)))
        changes.setdefault("temperature", prefs.temperature)
        self.window.session.settings = settings.model_copy(update={"llm": settings.llm.model_copy(update=changes)})
        persist = getattr(self.window, "persist_settings", None)
        if persist is not None:  # the chosen model survives a restart
            persist()
        status = getattr(self.window, "model_status", None)
        if status is not None:
            status.setText(f"model: {changes.get('model', settings.llm.model)}")
        refresh = getattr(self.window, "refresh_models", None)
        if refresh is not None:
            refresh()
        self.refresh()

    def pull(self, name: str) -> None:
        from app.model_prefs import PullProgress

        def progress(p: PullProgress) -> None:
            self._post(lambda: self.panel.set_pull_progress(p.status, p.fraction))

        def done(_: Any) -> None:
            self.panel.set_pull_progress(f"Pulled {name}", 1.0, done=True)
            self.refresh()

        def failed(exc: BaseException) -> None:
            self.panel.set_pull_progress(str(exc), 0.0, done=True)
            self._notify(Level.ERROR, f"Pull of {name} failed", str(exc))

        self._run(lambda: self.manager.pull(name, progress, self._cancel), done, failed)

    def _show_prefs(self) -> None:
        name = self.panel.selected_name()
        if name:
            from dataclasses import asdict

            self.panel.set_prefs(name, asdict(self.prefs.get(name)))

    def save_prefs(self, model: str, changes: dict) -> None:
        try:
            prefs = self.prefs.set(model, **changes)
        except ValueError as exc:
            self._notify(Level.WARNING, f"Setting not saved: {exc}")
            return
        if model == self.current_model():
            settings = self.window.session.settings
            self.window.session.settings = settings.model_copy(
                update={"llm": settings.llm.model_copy(update={"temperature": prefs.temperature})})

    # ---- lifetime ---------------------------------------------------------------------------
    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.window and event.type() == QEvent.Type.Close:
            self.shutdown()
        return False

    def shutdown(self) -> None:
        """Stop the built-in server and the workers (the window is closing)."""
        if self._closed:
            return
        self._closed = True
        self._cancel.set()
        server, self._server = self._server, None
        if server is not None:
            server.stop(timeout_s=5.0)
        self._pool.shutdown(wait=False, cancel_futures=True)
