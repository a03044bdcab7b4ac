"""The window's session: what a running workbench holds besides its widgets.

A ``Session`` owns the connected phone (device and its serial executor), the mirror
loop, the screen parser (and the lock that keeps it to one parse at a time), the episode
store, the worker threads and what the mirror shows (``Viewing``).  The run, macro and
knowledge controllers take a ``Session`` and a ``Workbench`` (the few window services
they use, as a protocol), never the window class itself.

Builds no widgets; does no device I/O on the GUI thread.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from agent.device import Device
from app.gui.workers import Failure, GuiPoster, LatestWins, SerialExecutor, SerializedDevice
from vision.types import Screen, ScreenParse

if TYPE_CHECKING:
    from PySide6.QtWidgets import QDockWidget, QLabel

    from agent.types import Action
    from app.gui.decisions import DecisionRouter
    from app.gui.devices import DeviceChoice
    from app.gui.mirror import MirrorLoop
    from app.model_prefs import PrefsStore
    from app.settings import Settings
    from app.storage import Store
    from vision.config import PipelineConfig
    from widgets.action_editor import ActionEditor
    from widgets.episodes_panel import EpisodesPanel
    from widgets.knowledge_panel import KnowledgePanel
    from widgets.latent_panel import LatentStatePanel
    from widgets.macro_panel import MacroLibraryPanel
    from widgets.notifications import Level, NotificationArea
    from widgets.proposal import DecisionBar, ProposalCard
    from widgets.screen_view import ScreenView
    from widgets.task_panel import TaskPanel
    from widgets.timeline import StepTimeline

log = logging.getLogger(__name__)

#: How much lower the parse thread's CPU priority is than the window's (Linux niceness).
PARSE_NICENESS = 5


class ViewKind(Enum):
    """What the mirror shows."""

    LIVE = "live"  # the connected phone
    FILE = "file"  # a screenshot opened from disk
    STEP = "step"  # a step of the current or of a stored episode


@dataclass(frozen=True, slots=True)
class Viewing:
    kind: ViewKind = ViewKind.LIVE
    name: str = ""  # the file name, or the episode id of a step
    step: int = -1

    @property
    def live(self) -> bool:
        return self.kind is ViewKind.LIVE


LIVE = Viewing()


def viewing_file(name: str) -> Viewing:
    return Viewing(ViewKind.FILE, name)


def viewing_step(episode_id: str, index: int) -> Viewing:
    return Viewing(ViewKind.STEP, episode_id, index)


class Session:
    """The phone, mirror, parser, store and workers of one window."""

    def __init__(self, settings: Settings | None, poster: GuiPoster, *, store: Store | None = None,
                 parser_factory: Callable[[], Any] | None = None, prefs: PrefsStore | None = None) -> None:
        if settings is None:  # the one default: a window opened without a settings file
            from app.settings import Settings

            settings = Settings()
        self.settings: Settings = settings
        if prefs is None:
            from app.model_prefs import PrefsStore

            prefs = PrefsStore.default()
        self.prefs: PrefsStore = prefs  # the model manager's per-model choices, loaded once
        self.poster = poster
        self.misc = SerialExecutor("misc", poster)
        # parsing is background work: at a lower CPU priority it cannot slow the mirror
        self.parse_worker = LatestWins("parse", poster, niceness=PARSE_NICENESS)
        self.executor: SerialExecutor | None = None
        self.device: Device | None = None
        self.mirror: MirrorLoop | None = None
        self.viewing: Viewing = LIVE
        self.live_screen: Screen | None = None
        self.live_parse: ScreenParse | None = None
        #: the UI language the phone shows, as automatic exploration last read it: the app maps
        #: the window lists and completes macros from are that language's (None: not read yet)
        self.maps_language: str | None = None
        self._store = store
        self._owns_store = False
        self._parser_factory = parser_factory
        self._parser: Any = None
        self._parser_lock = threading.RLock()

    # ---- the phone -------------------------------------------------------------------------
    def agent_device(self) -> SerializedDevice:
        """The current device, with every call routed through its serial executor, typing
        ``{{secret:NAME}}`` from the user's vault (``app.compose.agent_device``)."""
        if self.device is None or self.executor is None:
            raise RuntimeError("no phone is connected")
        from app.compose import agent_device

        return agent_device(SerializedDevice(self.device, self.executor))  # type: ignore[return-value]

    # ---- parsing ---------------------------------------------------------------------------
    def parser(self) -> Any:
        """The screen parser, built on first use (on the calling worker thread)."""
        with self._parser_lock:
            if self._parser is None:
                if self._parser_factory is not None:
                    self._parser = self._parser_factory()
                else:
                    from vision.pipeline import ScreenParser

                    self._parser = ScreenParser(pipeline_config_from(self.settings))
            return self._parser

    def reset_parser(self) -> None:
        """Forget the parser (new settings): the next parse builds it again."""
        with self._parser_lock:
            self._parser = None

    def parse_screen(self, screen: Screen, *args: Any, **kwargs: Any) -> ScreenParse:
        """Parse on the calling (worker) thread; one parse at a time, as the parser keeps
        per-instance state (model sessions, the previous frame) that is not thread-safe."""
        with self._parser_lock:
            parse: ScreenParse = self.parser().parse(screen, *args, **kwargs)
            return parse

    # ---- storage ---------------------------------------------------------------------------
    def store(self) -> Store:
        """The episode database (opened on first use)."""
        if self._store is None:
            from app.storage import Store

            path = self.settings.database_path
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            self._store = Store(path)
            self._owns_store = True
        store: Store = self._store
        return store

    def close_store(self) -> None:
        if self._store is not None and self._owns_store:
            self._store.close()


def pipeline_config_from(settings: Settings) -> PipelineConfig:
    """The parser configuration the user's settings ask for."""
    from app.compose import parser_config

    return parser_config(settings)


class Workbench(Protocol):
    """The window services and widgets the controllers use (``MainWindow`` has them)."""

    session: Session
    decisions: DecisionRouter
    view: ScreenView
    task_panel: TaskPanel
    proposal_card: ProposalCard
    decision_bar: DecisionBar
    latent_panel: LatentStatePanel
    timeline: StepTimeline
    timeline_dock: QDockWidget
    macro_panel: MacroLibraryPanel
    knowledge_panel: KnowledgePanel
    episodes_panel: EpisodesPanel
    notifications: NotificationArea
    model_status: QLabel

    @property
    def closing(self) -> bool: ...

    def run_active(self) -> bool: ...

    def knowledge_changed(self) -> None: ...

    def task_ended(self) -> None:
        """A task ended (learnt knowledge is shown; the phone's apps are looked over for maps)."""
        ...

    def connect_device(self, choice: DeviceChoice) -> None: ...

    def notify(self, level: Level | str, message: str, detail: str = "", key: str = "") -> None: ...

    def notify_failure(self, what: str, failure: Failure) -> None: ...

    def busy(self, text: str) -> None: ...

    def show_live(self) -> None: ...

    def show_parse(self, parse: ScreenParse | None, marks: dict[str, str] | None = None) -> None: ...

    def show_screen(self, screen: Screen | Any, parse: ScreenParse | None, viewing: Viewing, banner: str) -> None: ...

    def open_action_editor(self, action: Action | None, on_accept: Callable[[Action], None]) -> ActionEditor: ...

    def ensure_model(self, model: str, then: Callable[[], None] | None = None) -> bool:
        """True when ``model`` can be used now; a built-in model that is not running is
        started (False), and ``then`` is called once it is in use."""
        ...

    def persist_settings(self) -> None:
        """Save the session's settings (the user's choices survive a restart)."""
        ...
