"""The main window: connects the widgets (``WindowLayout``) and their actions
(``WindowActions``) to the session (phone, mirror, parser, store) and to the controllers
(phone, run, macros, knowledge, episodes, models, MCP, inspection), and starts the
background discovery after the first mirrored frame.  Opening phones, the mirror and live
parsing belong to ``PhoneController``.

Layout, from 1024x700 up: the mirror in the centre (notifications float over it), the
task panel, proposal card, latent state and the decision bar (always visible) docked
right; the parse inspector, steps, episodes, macros, knowledge and overlay layers as
tabs on the left.  Every slow call runs on a worker thread.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any, cast

from PySide6.QtCore import QTimer, Signal
from PySide6.QtGui import QCloseEvent

from agent.types import Decision, DecisionKind
from app.gui.decisions import DecisionRouter
from app.gui.devices import VIRTUAL_CHOICE
from app.gui.phone_controller import PhoneController, PhoneUi
from app.gui.session import Session
from app.gui.window_layout import WindowLayout
from app.gui.workers import Failure, GuiPoster, SerializedDevice
from app.settings import Settings
from vision.types import Screen, ScreenParse
from widgets.notifications import Level

log = logging.getLogger(__name__)

#: The thread the session's parse worker (``LatestWins("parse")``) runs inspection parses on.
PARSE_THREAD = "latest-parse"
#: Model listing and phone discovery start after the first mirrored frame, or after this.
AFTER_FIRST_FRAME_LATEST_MS = 4000


def _warm_up() -> None:
    try:
        from app.compose import warm_up

        warm_up()
    except ImportError as exc:  # reported when the user actually needs the missing part
        log.info("warm-up import failed: %s", exc)



class MainWindow(WindowLayout):
    """The workbench window."""

    deviceReady = Signal(str)  # serial

    def __init__(
        self,
        settings: Settings | None = None,
        device_hint: str | None = None,
        *,
        store: Any = None,
        device_factory: Any = None,
        parser_factory: Any = None,
        discover: bool = True,
        live_parse: bool = True,
    ) -> None:
        super().__init__()
        self.setWindowTitle("Tapwise")
        self.setObjectName("tapwiseMain")
        # the Parse tab's tree-versus-pixels comparison: asked of the parser while the tab is
        # open and no run is going (see app/gui/inspect_controller.py)
        self._compare_wanted = threading.Event()
        from app.gui.inspect_controller import comparing_factory

        parser_factory = comparing_factory(parser_factory, lambda: self.session.settings, self._comparison_wanted)
        self.session = Session(settings, GuiPoster(self), store=store, parser_factory=parser_factory)
        self.started_at = time.perf_counter()
        self.phone = PhoneController(self.session, cast("PhoneUi", self), device_hint=device_hint, device_factory=device_factory,
                                     live_parse=live_parse, run_active=self.run_active,
                                     started_at=self.started_at, parent=self)
        self._editor = None
        self._closing = False
        self._fitted_width = 0
        self._inspector_pending = None

        self._build_ui()
        self._build_menus()
        self.decisions = DecisionRouter(self.decision_bar)
        agent_settings = getattr(settings, "agent", None)
        if agent_settings is not None:
            self.task_panel.set_defaults(str(getattr(agent_settings.planner, "value", agent_settings.planner)),
                                         str(getattr(agent_settings.autonomy, "value", agent_settings.autonomy)))
        model = getattr(getattr(settings, "llm", None), "model", "")
        self.model_status.setText(f"model: {model}" if model else "model: —")
        if model:  # the chosen model shows at once; the server's list fills in later
            self.task_panel.set_models([model], current=model)
        self.setAcceptDrops(True)
        self._open_within_screen()

        from app.gui.episode_controller import EpisodeController
        from app.gui.knowledge_controller import KnowledgeController
        from app.gui.macro_controller import MacroController
        from app.gui.run_controller import RunController

        self.run = RunController(self)
        self.macros = MacroController(self)
        self.macros.refresh()
        self.knowledge = KnowledgeController(self)
        from app.gui.auto_explore import AutoExplorer

        # every app of the phone gets a map in its language, by itself (issue 40)
        self.auto_explore = AutoExplorer(self, busy=self._busy_for_maps, on_language=self.knowledge.set_language,
                                         on_maps_changed=self.knowledge_changed, parent=self)
        self.episodes = EpisodeController(self)
        from app.gui.model_controller import ModelController

        # model list + built-in model (issue 15); listing imports the LLM clients on a worker,
        # which would compete with the first mirrored frame: it starts after that frame
        self.models = ModelController(self, auto_refresh=False)
        self._after_first_frame: list[Callable[[], None]] = (
            [self.models.refresh, self.episodes.open_latest] if discover else [])
        if discover:
            QTimer.singleShot(AFTER_FIRST_FRAME_LATEST_MS, self._run_after_first_frame)
        # the right column is the task and the decision bar only: a second dock there
        # would push the bar out of a 1024x700 window, so the model manager is a left tab
        self.add_left_tab(self.models.dock)
        from app.gui.mcp_controller import McpController

        self.mcp = McpController(self)  # MCP clients' calls wait on the same approval card (issue 33)
        self.add_left_tab(self.mcp.dock)
        from app.gui.inspect_controller import InspectController

        self.inspect = InspectController(self, self._compare_wanted)
        self.inspector_dock.raise_()
        self.knowledge_dock.visibilityChanged.connect(self._knowledge_shown)
        self.inspector_dock.visibilityChanged.connect(self._inspector_shown)
        self.episodes_dock.visibilityChanged.connect(self._episodes_shown)
        self.deviceReady.connect(lambda _serial: self.macros.device_ready())
        self.phone.deviceReady.connect(self.deviceReady)
        self.phone.deviceReady.connect(self.auto_explore.device_ready)
        self.phone.firstFrame.connect(self._on_first_frame)
        self.phone.liveFrame.connect(self._on_live_frame)
        if discover:
            if device_hint in ("sim", "virtual", VIRTUAL_CHOICE.serial):
                # the virtual phone was asked for: mirror it at once, list phones after
                QTimer.singleShot(0, lambda: self.connect_device(VIRTUAL_CHOICE))
                self._after_first_frame.append(self.refresh_devices)
            else:
                QTimer.singleShot(0, self.refresh_devices)
            self._after_first_frame.append(self.refresh_models)  # it imports the LLM clients

    @property
    def closing(self) -> bool:
        return self._closing

    def _knowledge_shown(self, shown: bool) -> None:
        if shown:
            self.knowledge.refresh()

    def _episodes_shown(self, shown: bool) -> None:
        if shown:
            self.episodes.refresh()

    def run_active(self) -> bool:
        return self.run.active

    def _comparison_wanted(self) -> bool:
        """Whether this parse compares tree and pixels: only the inspection parses (live or of
        an opened screenshot, made on the parse worker's thread) while the Parse tab is open
        and no run is going; a run's, a macro replay's or an MCP call's observations never
        pay for it."""
        run = getattr(self, "run", None)
        on_parse_thread = threading.current_thread().name == PARSE_THREAD
        return on_parse_thread and self._compare_wanted.is_set() and not (run is not None and run.active)

    def knowledge_changed(self) -> None:
        """Something was learnt: show it if the Knowledge tab is open."""
        if self.knowledge_dock.isVisible():
            self.knowledge.refresh()

    def task_ended(self) -> None:
        """A task ended: what it learnt is shown, and the phone is looked over for maps again."""
        self.knowledge_changed()
        self.auto_explore.task_finished()

    def _busy_for_maps(self) -> bool:
        """Something uses the phone or the decision bar: automatic exploration waits."""
        return (self.run.active or self.macros.active or self.macros.recorder is not None
                or self.knowledge.exploring or self.decisions.owner is not None)

    def store(self) -> Any:
        """The episode database (opened on first use)."""
        return self.session.store()

    def agent_device(self) -> SerializedDevice:
        return self.session.agent_device()

    def parser(self) -> Any:
        return self.session.parser()

    def parse_screen(self, screen: Screen, *args: Any, **kwargs: Any) -> ScreenParse:
        return self.session.parse_screen(screen, *args, **kwargs)

    # ---- models ------------------------------------------------------------------------
    def refresh_models(self) -> None:
        """Ask the LLM server for its models (on a worker) and fill the task panel."""
        from app.builtin_model.catalog import installed_models
        from app.compose import list_models

        settings = self.session.settings
        default = settings.llm.model
        builtin = [m.alias for m in installed_models()]  # always listed: picking one starts it
        self.task_panel.set_models(list(dict.fromkeys([*([default] if default else []), *builtin])), current=default)

        def failed(f: Failure) -> None:
            if self.models.offering_builtin:
                return  # the Models tab says no Ollama answers, with the built-in model in one click
            self.notify(Level.WARNING, f"No model list from the LLM server: {f.message}",
                        getattr(f.error, "hint", "") or f.detail, key="model-list")

        def listed(models: list[str]) -> None:
            self.task_panel.set_models(list(dict.fromkeys([*models, *builtin])), current=default)
            self.notifications.resolve("model-list", "no-model")  # a model server answers now

        self.session.misc.submit(lambda: list_models(settings), on_done=listed, on_error=failed)

    def _on_first_frame(self, _seconds: float) -> None:
        self.session.misc.submit(_warm_up)  # after the first frame, so it does not delay it
        # build the screen parser now, at the parse thread's low priority, so that neither
        # the first live parse nor a run's first observation pays for it (a newer parse
        # request replaces this one and builds it anyway)
        self.session.parse_worker.submit(self.session.parser, on_done=lambda _parser: None,
                                 on_error=lambda f: log.info("the screen parser is not ready: %s", f.message))
        self._run_after_first_frame()

    def _on_live_frame(self, _screen: Screen) -> None:
        if self.decisions.owner is self.run:
            self.run.check_screen_changed()

    def _run_after_first_frame(self) -> None:
        """Background discovery that waits for the first frame (or gives up waiting)."""
        jobs, self._after_first_frame = self._after_first_frame, []
        if self._closing:
            return
        for job in jobs:
            job()

    # ---- decisions from the keyboard go through the bar; helpers for tests ---------------
    def decide(self, decision: Decision) -> None:
        self.decisions.decide(decision)

    def approve(self) -> None:
        self.decision_bar.trigger(DecisionKind.APPROVE)

    # ---- shutdown --------------------------------------------------------------------------
    def closeEvent(self, event: QCloseEvent) -> None:
        self._closing = True
        self.auto_explore.shutdown()
        self.mcp.shutdown()
        self.run.shutdown(timeout=15.0)
        self.macros.shutdown()
        self.phone.shutdown()
        # a parse in progress cannot be interrupted (and killing its native threads at exit
        # aborts the process), so wait for it, with the window already off the screen
        self.session.parse_worker.shutdown(timeout=60.0)
        self.session.misc.shutdown(wait=True)
        self.episodes.videos.stop()  # its decoder posts frames to the GUI thread
        self.session.poster.close()
        self.session.close_store()
        super().closeEvent(event)
