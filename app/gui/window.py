"""The main window: lays out the widgets and connects them to the session (phone,
mirror, parser, store) and to the controllers (phone, run, macros, knowledge, episodes,
models).  Opening phones, the mirror and live parsing belong to ``PhoneController``.

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
from dataclasses import replace
from pathlib import Path
from typing import Any, cast

import numpy as np
from PySide6.QtCore import QRectF, QSize, Qt, QTimer, Signal
from PySide6.QtGui import (
    QCloseEvent,
    QDragEnterEvent,
    QDropEvent,
    QImage,
    QKeySequence,
    QPainter,
    QResizeEvent,
)
from PySide6.QtWidgets import (
    QComboBox,
    QDockWidget,
    QFileDialog,
    QFrame,
    QLabel,
    QMainWindow,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QSplitter,
    QTabWidget,
    QToolBar,
    QVBoxLayout,
    QWidget,
)

from agent.device import Device
from agent.types import Action, Decision, DecisionKind, Target
from app.compose import PLANNERS
from app.gui.decisions import DecisionRouter
from app.gui.devices import VIRTUAL_CHOICE, DeviceChoice
from app.gui.phone_controller import PhoneController, PhoneUi
from app.gui.session import LIVE, Session, Viewing, viewing_file, viewing_step
from app.gui.workers import Failure, GuiPoster, SerializedDevice
from app.settings import Settings
from vision.geometry import Point
from vision.types import Screen, ScreenParse
from widgets.action_editor import ActionEditor
from widgets.episodes_panel import EpisodesPanel
from widgets.icons import icon
from widgets.knowledge_panel import KnowledgePanel
from widgets.latent_panel import LatentStatePanel
from widgets.layer_panel import LayerPanel
from widgets.macro_panel import MacroLibraryPanel
from widgets.mirror_mode import MirrorModeBar
from widgets.notifications import Level, NotificationArea
from widgets.overlays import Layer, LayerStyle
from widgets.parse_inspector import ParseInspector
from widgets.proposal import DecisionBar, ProposalCard
from widgets.screen_view import ScreenView, ViewMode, element_words
from widgets.shortcuts import ShortcutsDialog, key_for
from widgets.task_panel import TaskPanel
from widgets.timeline import StepTimeline

log = logging.getLogger(__name__)

IMAGE_FILTER = ("Screens: a screenshot, or a hierarchy beside it (*.png *.jpg *.jpeg *.webp *.bmp *.xml *.uix *.json);;"
                "Images (*.png *.jpg *.jpeg *.webp *.bmp);;"
                "Hierarchies: uiautomator, Appium page source, Rico, DroidBot (*.xml *.uix *.json)")
#: The smallest window the layout is made for: every control stays visible and clickable.
MIN_SIZE = QSize(1024, 700)
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


class MainWindow(QMainWindow):
    """The workbench window."""

    deviceReady = Signal(str)  # serial
    parseShown = Signal(object)  # ScreenParse

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
        self._editor: ActionEditor | None = None
        self._closing = False
        self._fitted_width = 0
        self._inspector_pending: ScreenParse | None = None

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
        self.tabifyDockWidget(self.layers_dock, self.models.dock)
        self._scroll_when_narrow(self.models.dock)
        self.view_menu.insertAction(self._view_menu_docks_end, self.models.dock.toggleViewAction())
        from app.gui.mcp_controller import McpController

        self.mcp = McpController(self)  # MCP clients' calls wait on the same approval card (issue 33)
        self.tabifyDockWidget(self.layers_dock, self.mcp.dock)
        self._scroll_when_narrow(self.mcp.dock)
        self.view_menu.insertAction(self._view_menu_docks_end, self.mcp.dock.toggleViewAction())
        from app.gui.inspect_controller import InspectController

        self.inspect = InspectController(self, self._compare_wanted)
        self.inspector_dock.raise_()
        self.knowledge_dock.visibilityChanged.connect(self._knowledge_shown)
        self.inspector_dock.visibilityChanged.connect(self._inspector_shown)
        self.episodes_dock.visibilityChanged.connect(self._episodes_shown)
        self.deviceReady.connect(lambda _serial: self.macros.device_ready())
        self.phone.deviceReady.connect(self.deviceReady)
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

    def _open_within_screen(self) -> None:
        """Open at 1560x960 where that fits, else within the screen's available area: on a
        1024x700 screen the task panel and the decision bar must show without resizing."""
        from PySide6.QtGui import QGuiApplication

        screen = self.screen() or QGuiApplication.primaryScreen()
        avail = screen.availableGeometry() if screen is not None else None
        if avail is None or avail.isEmpty():
            self.setMinimumSize(MIN_SIZE)
            self.resize(1560, 960)
            return
        self.setMinimumSize(MIN_SIZE.boundedTo(avail.size()))
        size = QSize(1560, 960).boundedTo(avail.size())
        self.resize(size)
        self.move(avail.left() + (avail.width() - size.width()) // 2, avail.top() + (avail.height() - size.height()) // 2)

    def knowledge_changed(self) -> None:
        """Something was learnt: show it if the Knowledge tab is open."""
        if self.knowledge_dock.isVisible():
            self.knowledge.refresh()

    def store(self) -> Any:
        """The episode database (opened on first use)."""
        return self.session.store()

    def agent_device(self) -> SerializedDevice:
        return self.session.agent_device()

    def parser(self) -> Any:
        return self.session.parser()

    def parse_screen(self, screen: Screen, *args: Any, **kwargs: Any) -> ScreenParse:
        return self.session.parse_screen(screen, *args, **kwargs)

    # ---- construction -----------------------------------------------------------------
    def _build_ui(self) -> None:
        self._build_mirror()
        self._build_agent_column()
        self._build_left_tabs()
        self._build_toolbar()
        self._build_status_bar()
        self._wire_views()

    def _build_mirror(self) -> None:
        """The centre: the mode bar, the banner of what is viewed, the notices, the mirror."""
        self.view = ScreenView()
        self._apply_saved_layers()
        self.notifications = NotificationArea(info_timeout_ms=8000)
        self.banner = QLabel("")
        self.banner.setStyleSheet("background:#263238; color:white; padding:4px 8px; font-weight:bold")
        self.banner.setWordWrap(True)  # a long goal in the banner must not widen the window
        self.banner.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.back_to_live = QPushButton(icon("mdi6.cellphone-link", "white"), "Back to live")
        self.back_to_live.setStyleSheet("color:white; background:#455a64")
        self.back_to_live.clicked.connect(self.show_live)
        self.banner_row = QWidget()
        br = QVBoxLayout(self.banner_row)
        br.setContentsMargins(0, 0, 0, 0)
        br.addWidget(self.banner)
        br.addWidget(self.back_to_live)
        self.banner_row.hide()
        central = QWidget()
        cl = QVBoxLayout(central)
        cl.setContentsMargins(2, 2, 2, 2)
        # what a click on the mirror does (inspect / control), then the notices: above the
        # mirror, never over the phone's screen, taking no width of their own
        self.mode_bar = MirrorModeBar()
        for w in (self.mode_bar, self.banner_row, self.notifications):
            cl.addWidget(w)
        cl.addWidget(self.view, 1)
        self.setCentralWidget(central)

    def _build_agent_column(self) -> None:
        """The right dock: task, then proposal and latent state (each scrolls, they share
        the height), then the decision bar, which keeps its size and is always visible."""
        self.task_panel = TaskPanel(planners=[(p.name, p.label) for p in PLANNERS])
        self.proposal_card = ProposalCard()
        self.decision_bar = DecisionBar()
        self.latent_panel = LatentStatePanel()
        self.agent_split = QSplitter(Qt.Orientation.Vertical)
        self.agent_split.setChildrenCollapsible(False)
        for panel in (self.proposal_card, self.latent_panel):
            scroll = QScrollArea()
            scroll.setWidgetResizable(True)
            scroll.setFrameShape(QFrame.Shape.NoFrame)
            scroll.setWidget(panel)
            scroll.setMinimumHeight(60)
            self.agent_split.addWidget(scroll)
        self.agent_split.setStretchFactor(0, 1)  # the estimates get as much room as the card:
        self.agent_split.setStretchFactor(1, 1)  # showing them at every step is the point
        agent_box = QWidget()
        al = QVBoxLayout(agent_box)
        al.setContentsMargins(2, 2, 2, 2)
        al.addWidget(self.task_panel)
        al.addWidget(self.agent_split, 1)
        al.addWidget(self.decision_bar)
        self.agent_dock = self._dock("Task and proposal", agent_box, Qt.DockWidgetArea.RightDockWidgetArea)

    def _build_left_tabs(self) -> None:
        """The left: one column of tabs, so the mirror keeps the full height of the window."""
        left = Qt.DockWidgetArea.LeftDockWidgetArea
        self.inspector = ParseInspector()
        self.layer_panel = LayerPanel(self.view.layer_styles())
        self.timeline = StepTimeline()
        self.episodes_panel = EpisodesPanel()
        self.macro_panel = MacroLibraryPanel()
        self.knowledge_panel = KnowledgePanel()
        # short titles with an icon, and the tabs on the column's edge reading downwards:
        # seven tabs across a 270 px column were elided to "P…", "S…", "E…"
        self.inspector_dock = self._dock("Parse", self.inspector, left, "mdi6.text-search", "Parse inspector")
        self.timeline_dock = self._dock("Steps", self.timeline, left, "mdi6.timeline-text-outline")
        self.episodes_dock = self._dock("Episodes", self.episodes_panel, left, "mdi6.history")
        self.macro_dock = self._dock("Macros", self.macro_panel, left, "mdi6.play-box-multiple-outline")
        self.knowledge_dock = self._dock("Knowledge", self.knowledge_panel, left, "mdi6.book-open-variant")
        self.layers_dock = self._dock("Layers", self.layer_panel, left, "mdi6.layers-outline", "Overlay layers")
        tabs = [self.inspector_dock, self.timeline_dock, self.episodes_dock, self.macro_dock,
                self.knowledge_dock, self.layers_dock]
        for a, b in zip(tabs, tabs[1:], strict=False):
            self.tabifyDockWidget(a, b)
        for d in tabs:  # a tabbed column is as wide as its widest tab: none may widen it
            self._scroll_when_narrow(d)
        self.inspector_dock.raise_()
        self.setTabPosition(left, QTabWidget.TabPosition.West)

    def _build_toolbar(self) -> None:
        """The tool bar: the device picker and the mirror's controls."""
        tb = QToolBar("Device")
        tb.setObjectName("deviceToolbar")
        tb.setIconSize(QSize(18, 18))
        self.addToolBar(tb)
        tb.addWidget(QLabel(" Device: "))
        self.device_combo = QComboBox()
        self.device_combo.setMinimumWidth(220)
        tb.addWidget(self.device_combo)
        self.refresh_action = tb.addAction(icon("mdi6.refresh"), "Refresh devices", self.refresh_devices)
        self.connect_action = tb.addAction(icon("mdi6.connection"), "Connect", self.phone.connect_selected)
        tb.addSeparator()
        self.live_action = tb.addAction(icon("mdi6.cellphone-link"), "Live mirror")
        self.live_action.setCheckable(True)
        self.live_action.setChecked(True)
        self.live_action.toggled.connect(self.phone.toggle_mirror)
        self.parse_action = tb.addAction(icon("mdi6.text-recognition"), "Parse live")
        self.parse_action.setCheckable(True)
        self.parse_action.setChecked(self.phone.live_parse_enabled)
        self.parse_action.toggled.connect(self.phone.toggle_live_parse)
        tb.addAction(icon("mdi6.image-search"), "Parse now", self.parse_now)
        tb.addSeparator()
        tb.addAction(icon("mdi6.folder-image"), "Open screenshot…", self.open_screenshot_dialog)
        tb.addAction(icon("mdi6.content-save"), "Export overlay PNG…", self.export_overlay_dialog)

    def _build_status_bar(self) -> None:
        sb = self.statusBar()
        self.device_status = QLabel("no device")
        self.model_status = QLabel("model: —")
        self.fps_status = QLabel("mirror: — fps")
        self.work_label = QLabel("")
        self.progress = QProgressBar()
        self.progress.setRange(0, 0)
        self.progress.setMaximumWidth(140)
        self.progress.hide()
        for w in (self.device_status, self.model_status, self.fps_status):
            sb.addPermanentWidget(w)
        sb.addWidget(self.work_label)
        sb.addWidget(self.progress)

    def _wire_views(self) -> None:
        """The views that follow each other: a selection, the layer controls, a picked point."""
        self.view.elementSelected.connect(self.inspector.select_element)
        self.inspector.elementSelected.connect(self.view.select_element)
        self.layer_panel.styleChanged.connect(self._layer_style_changed)
        self.view.pointPicked.connect(self._on_point_picked)
        self.timeline.stepSelected.connect(self._on_step_selected)

    # ---- overlay layers (which ones are drawn survives a restart) ----------------------------
    def _apply_saved_layers(self) -> None:
        """Draw the layers the user's settings leave on, and only those."""
        shown = self.session.settings.overlay
        for layer in Layer:
            style = self.view.layer_style(layer)
            tagged = shown.kind_tags if layer in (Layer.WIDGETS, Layer.BLOCKS) else style.tags
            self.view.set_layer_style(layer, replace(style, visible=bool(getattr(shown, layer.value)), tags=tagged))

    def _layer_style_changed(self, layer: Layer, style: LayerStyle) -> None:
        self.view.set_layer_style(layer, style)
        settings = self.session.settings
        update: dict[str, bool] = {}
        if getattr(settings.overlay, layer.value) != style.visible:
            update[layer.value] = style.visible
        if layer is Layer.WIDGETS and settings.overlay.kind_tags != style.tags:
            update["kind_tags"] = style.tags
        if not update:
            return  # a colour or opacity change: not a setting
        overlay = settings.overlay.model_copy(update=update)
        self.session.settings = settings.model_copy(update={"overlay": overlay})
        self.persist_settings()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        width = event.size().width()
        if self._fitted_width == 0 or abs(width - self._fitted_width) > 0.15 * self._fitted_width:
            self._fit_docks(width)

    def _fit_docks(self, width: int) -> None:
        """Share the width: the mirror keeps the middle ~45 %, the docks the sides (the left
        column's vertical tab bar, ~28 px, is counted in its share)."""
        self._fitted_width = width
        self.resizeDocks([self.inspector_dock, self.agent_dock], [int(width * 0.26) - 28, int(width * 0.27)],
                         Qt.Orientation.Horizontal)

    def _dock(self, title: str, widget: QWidget, area: Qt.DockWidgetArea, icon_name: str = "",
              name: str = "") -> QDockWidget:
        d = QDockWidget(title, self)
        d.setObjectName((name or title).replace(" ", "_"))
        if icon_name:
            d.setWindowIcon(icon(icon_name))  # shown on the dock's tab
        d.setWidget(widget)
        d.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetMovable | QDockWidget.DockWidgetFeature.DockWidgetFloatable
                      | QDockWidget.DockWidgetFeature.DockWidgetClosable)
        self.addDockWidget(area, d)
        return d

    @staticmethod
    def _scroll_when_narrow(dock: QDockWidget) -> None:
        """Let a wide tab scroll instead of widening the whole left column (at 1024 px the
        mirror keeps its share while the model manager's ~350 px content scrolls)."""
        content = dock.widget()
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(content)
        dock.setWidget(scroll)

    def _build_menus(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        a = file_menu.addAction(icon("mdi6.folder-image"), "Open screenshot…", self.open_screenshot_dialog)
        a.setShortcut(QKeySequence.StandardKey.Open)
        file_menu.addAction(icon("mdi6.content-save"), "Export overlay PNG…", self.export_overlay_dialog)
        file_menu.addSeparator()
        s = file_menu.addAction(icon("mdi6.cog"), "Settings…", self.open_settings)
        s.setShortcut(QKeySequence("Ctrl+,"))
        file_menu.addSeparator()
        q = file_menu.addAction("Quit", self.close)
        q.setShortcut(QKeySequence.StandardKey.Quit)
        view_menu = self.menuBar().addMenu("&View")
        for d in (self.agent_dock, self.inspector_dock, self.layers_dock, self.timeline_dock,
                  self.episodes_dock, self.macro_dock, self.knowledge_dock):
            view_menu.addAction(d.toggleViewAction())
        self.view_menu = view_menu
        self._view_menu_docks_end = view_menu.addSeparator()  # the model manager's entry goes above
        m = view_menu.addAction(icon("mdi6.gesture-tap"), "Mirror: inspect / control the phone", self.mode_bar.toggle)
        m.setShortcut(QKeySequence(key_for("Switch the mirror between inspecting and controlling the phone")))
        help_menu = self.menuBar().addMenu("&Help")
        k = help_menu.addAction(icon("mdi6.keyboard"), "Keyboard shortcuts…", self.show_shortcuts)
        k.setShortcut(QKeySequence("F1"))

    def show_shortcuts(self) -> ShortcutsDialog:
        """The list of every keyboard shortcut (Help ▸ Keyboard shortcuts, F1)."""
        dlg = ShortcutsDialog(self)
        dlg.finished.connect(dlg.deleteLater)
        dlg.show()
        return dlg

    # ---- notifications and progress ----------------------------------------------------
    def notify(self, level: Level | str, message: str, detail: str = "", key: str = "") -> None:
        log.log(logging.ERROR if Level(level) is Level.ERROR else logging.INFO, "%s %s", message, detail[:200])
        if not self._closing:
            self.notifications.notify(level, message, detail, key=key)

    def notify_failure(self, what: str, failure: Failure) -> None:
        """One card per kind of failure (``what``); the reason and the hint are its details."""
        hint = getattr(failure.error, "hint", "")
        self.notify(Level.ERROR, f"{what}: {failure.message}",
                    (f"What to do: {hint}\n\n" if hint else "") + failure.detail, key=what)

    def busy(self, text: str) -> None:
        self.work_label.setText(text)
        self.progress.setVisible(bool(text))

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

    # ---- the phone (PhoneController does the work) ------------------------------------------
    def refresh_devices(self) -> None:
        self.phone.refresh_devices()

    def connect_device(self, choice: DeviceChoice) -> None:
        self.phone.connect_device(choice)

    def use_device(self, device: Device, choice: DeviceChoice | None = None) -> None:
        """Attach an already-open device (tests, embedding)."""
        self.phone.use_device(device, choice)

    def request_parse(self, screen: Screen, fetch_tree: bool = False, viewing: Viewing = LIVE) -> None:
        """Parse ``screen`` on the parse thread; a newer request replaces a waiting one."""
        self.phone.request_parse(screen, fetch_tree=fetch_tree, viewing=viewing)

    def parse_now(self) -> None:
        self.phone.parse_now()

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

    def show_parse(self, parse: ScreenParse | None, marks: dict[str, str] | None = None) -> None:
        self.view.set_parse(parse, marks)
        if parse is not None and self.session.viewing.live:
            self.phone.show_hierarchy_note()  # live parses and a run's observations
        # filling the inspector's table costs the GUI thread ~10 ms: only while it is seen
        self._inspector_pending = parse
        if self.inspector.isVisible():
            self._fill_inspector()
        self.parseShown.emit(parse)

    def _fill_inspector(self) -> None:
        if self._inspector_pending is not self.inspector.parse:
            self.inspector.set_parse(self._inspector_pending)

    def _inspector_shown(self, shown: bool) -> None:
        if shown:
            self._fill_inspector()

    # ---- viewing something other than the live phone -----------------------------------
    def _set_viewing(self, viewing: Viewing, banner: str) -> None:
        self.session.viewing = viewing
        self.banner.setText(banner)
        self.banner_row.setVisible(not viewing.live)

    def show_live(self) -> None:
        self._set_viewing(LIVE, "")
        self.phone.frame_shown_again()
        demonstrating = self.run.demonstrating or self.macros.demonstrating or self.macros.recorder is not None
        self.view.set_mode(ViewMode.DEMONSTRATE if demonstrating else ViewMode.INSPECT)
        if self.session.live_screen is not None:
            self.view.set_frame(self.session.live_screen.image)
        self.show_parse(self.session.live_parse)
        proposal = self.run.proposal
        self.view.set_proposal(proposal.action if proposal is not None else None)

    def show_screen(self, screen: Screen | np.ndarray, parse: ScreenParse | None, viewing: Viewing,
                    banner: str) -> None:
        self._set_viewing(viewing, banner)
        self.view.set_frame(screen.image if isinstance(screen, Screen) else screen)
        self.show_parse(parse)

    def _on_step_selected(self, section: str, index: int) -> None:
        shot = self.run.step_screen(section, index)
        step = self.timeline.step(index, section)
        title = self.timeline.section_title(section)
        banner = f"Step {index + 1} of “{title}” — the phone keeps running"
        if shot is not None:
            screen, parse, action = shot
            if screen is None:
                self.notify(Level.INFO, f"No screen was recorded for step {index + 1}.", key="no-step-screen")
                return
            self.show_screen(screen, parse, viewing_step(section, index), banner)
            self.view.set_proposal(action)
            return
        ref = self.episodes.step_frame(section, index)
        if ref is None or step is None:
            self.notify(Level.INFO, f"No screen was recorded for step {index + 1}.", key="no-step-screen")
            return
        action = step.executed or (step.proposal.action if step.proposal is not None else None)
        viewing = viewing_step(section, index)

        def shown(screen: Screen) -> None:
            self.show_screen(screen, step.parse, viewing, banner)
            self.view.set_proposal(action)

        self.session.misc.submit(lambda: self.episodes.load_frame(ref), on_done=shown,
                         on_error=lambda f: self.notify_failure("Could not read the step's frame", f))

    def open_screenshot_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open a screenshot to inspect", "", IMAGE_FILTER)
        if path:
            self.open_screenshot(Path(path))

    def open_screenshot(self, path: Path) -> None:
        """Load a screenshot and the hierarchy saved beside it, if any (on a worker), and
        parse them for offline inspection.  Opening the hierarchy file finds its screenshot."""
        def load() -> Screen:
            from vision.imageio import image_beside_tree, load_screen_files

            image_path = image_beside_tree(path) if path.suffix.lower() in (".xml", ".uix", ".json") else path
            arr, tree = load_screen_files(image_path, path if image_path != path else None)
            return Screen(image=arr, device=f"file:{image_path.name}", hierarchy_xml=tree)

        def loaded(screen: Screen) -> None:
            viewing = viewing_file(path.name)
            self.show_screen(screen, None, viewing, f"Screenshot {path.name} (offline inspection)")
            self.request_parse(screen, viewing=viewing)

        self.session.misc.submit(load, on_done=loaded,
                         on_error=lambda f: self.notify_failure(f"Could not open {path.name}", f))

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        for url in event.mimeData().urls():
            if url.isLocalFile():
                self.open_screenshot(Path(url.toLocalFile()))
                break

    def overlay_image(self) -> QImage:
        """The mirror as shown (frame plus visible overlays) at device resolution."""
        scene = self.view.scene()
        rect = scene.sceneRect()
        img = QImage(int(rect.width()), int(rect.height()), QImage.Format.Format_ARGB32)
        img.fill(0)
        p = QPainter(img)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        scene.render(p, QRectF(0, 0, rect.width(), rect.height()), rect)
        p.end()
        return img

    def export_overlay_dialog(self) -> None:
        if self.view.frame is None:
            self.notify(Level.WARNING, "Nothing to export yet.")
            return
        path, _ = QFileDialog.getSaveFileName(self, "Export overlay PNG", "overlay.png", "PNG (*.png)")
        if path:
            self.export_overlay(Path(path))

    def export_overlay(self, path: Path) -> None:
        img = self.overlay_image()  # rendering must happen on the GUI thread; saving need not

        def save() -> Path:
            tmp = path.with_name(path.stem + ".part.png")
            if not img.save(str(tmp)):
                raise OSError(f"could not write {path} (is the folder writable?)")
            tmp.replace(path)
            return path

        self.session.misc.submit(save, on_done=lambda p: self.notify(Level.INFO, f"Overlay saved to {p}"),
                         on_error=lambda f: self.notify_failure("Export failed", f))

    # ---- action editor (Edit decision, pick on mirror) -----------------------------------
    def open_action_editor(self, action: Action | None, on_accept: Callable[[Action], None]) -> ActionEditor:
        size = self.view.parse.screen_size if self.view.parse else (self.session.device.info.size if self.session.device else None)
        ed = ActionEditor(action, size, self)
        ed.pickRequested.connect(lambda _which: self.view.set_mode(ViewMode.PICK))
        ed.actionAccepted.connect(on_accept)
        ed.finished.connect(lambda _r: self._editor_closed(ed))
        self._editor = ed
        ed.show()
        return ed

    def _editor_closed(self, ed: ActionEditor) -> None:
        if self._editor is ed:
            self._editor = None
        if self.view.mode is ViewMode.PICK:
            self.view.set_mode(ViewMode.INSPECT)
        ed.deleteLater()

    def _on_point_picked(self, point: Point, element_id: str) -> None:
        self.view.set_mode(ViewMode.INSPECT)
        if self._editor is None:
            return
        target = None
        el = self.view.parse.element(element_id) if (element_id and self.view.parse) else None
        if el is not None:
            target = Target(element_id=el.id, point=point, description=element_words(el))
        self._editor.set_picked_point(point, target)
        self._editor.raise_()

    # ---- settings ------------------------------------------------------------------------
    def open_settings(self) -> None:
        if self.session.settings is None:
            self.notify(Level.WARNING, "No settings model is loaded.")
            return
        from widgets.settings_dialog import SettingsDialog

        dlg = SettingsDialog(self.session.settings, self)
        dlg.accepted.connect(lambda: self._settings_accepted(dlg.result_model()))
        dlg.finished.connect(dlg.deleteLater)
        dlg.open()

    def _settings_accepted(self, settings: object) -> None:
        if not isinstance(settings, Settings):  # the dialog was left without a valid model
            return
        self.session.settings = settings
        self.session.reset_parser()  # rebuilt with the new configuration on next use
        self.models.settings_changed()
        for layer in Layer:  # the dialog's overlay check boxes drive the Layers tab's
            self.layer_panel.checks[layer].setChecked(bool(getattr(settings.overlay, layer.value)))
        self.layer_panel.set_kind_tags(settings.overlay.kind_tags)

        def save() -> Path:
            from app.settings import save_settings

            return Path(save_settings(settings))

        self.session.misc.submit(save, on_done=lambda p: self.notify(Level.INFO, f"Settings saved to {p}"),
                         on_error=lambda f: self.notify_failure("Could not save settings", f))

    def persist_settings(self) -> None:
        """Save the current settings quietly (the model, planner and autonomy chosen survive a
        restart).  A small file written at once, so that closing the window right after
        cannot lose it."""
        from app.settings import save_settings

        try:
            save_settings(self.session.settings)
        except OSError as exc:
            self.notify(Level.WARNING, "Could not save settings", str(exc), key="settings-save")

    def ensure_model(self, model: str, then: Callable[[], None] | None = None) -> bool:
        """True when ``model`` can be used now; a built-in model that is not running is
        started (then False, and ``then`` runs once it is in use)."""
        from app.model_prefs import is_builtin

        if not is_builtin(model) or self.models.builtin_ready(model):
            return True
        self.models.start_builtin(model, then=then)
        return False

    # ---- decisions from the keyboard go through the bar; helpers for tests ---------------
    def decide(self, decision: Decision) -> None:
        self.decisions.decide(decision)

    def approve(self) -> None:
        self.decision_bar.trigger(DecisionKind.APPROVE)

    # ---- shutdown --------------------------------------------------------------------------
    def closeEvent(self, event: QCloseEvent) -> None:
        self._closing = True
        self.mcp.shutdown()
        self.run.shutdown(timeout=15.0)
        self.macros.shutdown()
        self.phone.shutdown()
        # a parse in progress cannot be interrupted (and killing its native threads at exit
        # aborts the process), so wait for it, with the window already off the screen
        self.session.parse_worker.shutdown(timeout=60.0)
        self.session.misc.shutdown(wait=True)
        self.session.poster.close()
        self.session.close_store()
        super().closeEvent(event)

