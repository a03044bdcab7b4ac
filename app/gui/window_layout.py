"""How the window is laid out: the mirror in the centre (the mode bar, the banner of what
is viewed and the notices above it), the task, proposal, latent state and decision bar
docked right, the inspector, steps, episodes, macros, knowledge and layer tabs on the
left, the tool bar, the status bar and the menus; and how the docks share the width.

``WindowLayout`` builds widgets and binds them to the actions of ``WindowActions``; it
starts no work and owns no controller (``MainWindow`` adds the controllers' docks).
Which overlay layers are drawn is a setting and survives a restart.
"""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QKeySequence, QResizeEvent
from PySide6.QtWidgets import (
    QComboBox,
    QDockWidget,
    QFrame,
    QLabel,
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

from agent.cost import origin
from app.compose import PLANNERS
from app.gui.window_actions import WindowActions
from widgets.episodes_panel import EpisodesPanel
from widgets.icons import icon
from widgets.knowledge_panel import KnowledgePanel
from widgets.latent_panel import LatentStatePanel
from widgets.layer_panel import LayerPanel
from widgets.macro_panel import MacroLibraryPanel
from widgets.mirror_mode import MirrorModeBar
from widgets.notifications import NotificationArea
from widgets.overlays import Layer, LayerStyle
from widgets.parse_inspector import ParseInspector
from widgets.proposal import DecisionBar, ProposalCard
from widgets.screen_view import ScreenView
from widgets.shortcuts import ShortcutsDialog, key_for
from widgets.task_panel import TaskPanel
from widgets.timeline import StepTimeline

#: The smallest window the layout is made for: every control stays visible and clickable.
MIN_SIZE = QSize(1024, 700)


class WindowLayout(WindowActions):
    """The window's widgets, docks, tool bar, status bar and menus."""

    _fitted_width: int

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
        self.timeline = StepTimeline(origin_of=origin)
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

    def add_left_tab(self, dock: QDockWidget) -> None:
        """A controller's dock as one more tab of the left column, listed in the View menu."""
        self.tabifyDockWidget(self.layers_dock, dock)
        self._scroll_when_narrow(dock)
        self.view_menu.insertAction(self._view_menu_docks_end, dock.toggleViewAction())

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
        file_menu.addAction(icon("mdi6.lock"), "Secrets…", self.open_secrets)
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
