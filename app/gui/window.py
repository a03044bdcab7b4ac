"""The main window: composes the widgets, owns the device executor, the mirror loop,
the live parser and the agent run, and keeps every slow call off the GUI thread.

Layout: the mirror in the centre (with notifications above it), the task panel,
proposal card, decision bar and latent state docked right, the parse inspector and
overlay layers left, and the step timeline and macro library at the bottom.
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
from PySide6.QtCore import QRectF, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent, QImage, QKeySequence, QPainter
from PySide6.QtWidgets import (
    QComboBox,
    QDockWidget,
    QFileDialog,
    QLabel,
    QMainWindow,
    QProgressBar,
    QPushButton,
    QTabWidget,
    QToolBar,
    QVBoxLayout,
    QWidget,
)

from agent.device import Device, DeviceGone
from agent.types import Action, Decision, DecisionKind
from app.gui.devices import DeviceChoice, default_choice, list_choices, open_device
from app.gui.mirror import MirrorLoop, frame_signature
from app.gui.workers import Failure, GuiPoster, LatestWins, SerialExecutor, SerializedDevice
from vision.types import Screen, ScreenParse
from widgets.action_editor import ActionEditor
from widgets.icons import icon
from widgets.knowledge_panel import KnowledgePanel
from widgets.latent_panel import LatentStatePanel
from widgets.layer_panel import LayerPanel
from widgets.macro_panel import MacroLibraryPanel
from widgets.notifications import Level, NotificationArea
from widgets.parse_inspector import ParseInspector
from widgets.proposal import DecisionBar, ProposalCard
from widgets.screen_view import ScreenView, ViewMode, element_words
from widgets.task_panel import TaskPanel
from widgets.timeline import StepTimeline

log = logging.getLogger(__name__)

IMAGE_FILTER = "Images (*.png *.jpg *.jpeg *.webp *.bmp)"


def pipeline_config_from(settings: Any) -> Any:
    """Map the user's vision settings onto the parser's ``PipelineConfig``."""
    from vision.config import PipelineConfig

    v = getattr(settings, "vision", None)
    if v is None:
        return PipelineConfig()
    mode = {"fuse": "auto", "only": "tree", "never": "vision"}.get(v.use_hierarchy, "auto")
    detector = {"classic": "cv"}.get(v.detector, v.detector)
    ocr = {"paddleocr": "paddle"}.get(v.ocr, v.ocr)
    # "onnx" means the shipped classifier: "auto" uses it when present and says so in the
    # parse's warnings when it is missing, instead of failing every parse
    icons = {"openclip": "clip", "onnx": "auto"}.get(v.icons, v.icons)
    return PipelineConfig(mode=mode, detector=detector, ocr=ocr, icons=icons,
                          ocr_min_confidence=v.ocr_min_confidence)


def _warm_up() -> None:
    try:
        from app.gui.agent_setup import warm_up

        warm_up()
    except ImportError as exc:  # reported when the user actually needs the missing part
        log.info("warm-up import failed: %s", exc)


class MainWindow(QMainWindow):
    """The workbench window."""

    deviceReady = Signal(str)  # serial
    parseShown = Signal(object)  # ScreenParse

    def __init__(
        self,
        settings: Any = None,
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
        self.settings = settings
        self.device_hint = device_hint
        self.started_at = time.perf_counter()
        self.first_frame_s: float | None = None
        self._store = store
        self._device_factory = device_factory or open_device
        self._parser_factory = parser_factory
        self._parser: Any = None
        self._parser_lock = threading.RLock()
        self._parser_error: str | None = None
        self.poster = GuiPoster(self)
        self.misc = SerialExecutor("misc", self.poster)
        self.parse_worker = LatestWins("parse", self.poster)
        self.executor: SerialExecutor | None = None
        self.device: Device | None = None
        self.device_choice: DeviceChoice | None = None
        self.mirror: MirrorLoop | None = None
        self._last_sig = ""
        self._live_screen: Screen | None = None
        self._live_parse: ScreenParse | None = None
        self.viewing: str = "live"  # "live", "file:<name>" or "step:<n>"
        self.live_parse_enabled = live_parse
        self.run = None  # set by app.gui.run_controller
        self._editor: ActionEditor | None = None
        self._closing = False

        self._build_ui()
        self._build_menus()
        agent_settings = getattr(settings, "agent", None)
        if agent_settings is not None:
            self.task_panel.set_defaults(agent_settings.planner, agent_settings.autonomy)
        model = getattr(getattr(settings, "llm", None), "model", "")
        self.model_status.setText(f"model: {model}" if model else "model: —")
        self.setAcceptDrops(True)
        self.resize(1560, 960)

        from app.gui.run_controller import RunController

        self.run = RunController(self)
        from app.gui.macro_controller import MacroController

        self.macros = MacroController(self)
        self.macro_panel.delete.hide()  # the store keeps every macro version; no deletion yet
        self.macros.refresh()
        from app.gui.knowledge_controller import KnowledgeController

        self.knowledge = KnowledgeController(self)
        self.knowledge_dock.visibilityChanged.connect(lambda shown: shown and self.knowledge.refresh())
        if discover:
            QTimer.singleShot(0, self.refresh_devices)
            QTimer.singleShot(0, self.refresh_models)

    # ---- construction -----------------------------------------------------------------
    def _build_ui(self) -> None:
        self.view = ScreenView()
        self.notifications = NotificationArea(info_timeout_ms=8000)
        self.banner = QLabel("")
        self.banner.setStyleSheet("background:#263238; color:white; padding:4px 8px; font-weight:bold")
        self.back_to_live = QPushButton(icon("mdi6.cellphone-link", "white"), "Back to live")
        self.back_to_live.setStyleSheet("color:white; background:#455a64")
        self.back_to_live.clicked.connect(self.show_live)
        banner_row = QWidget()
        br = QVBoxLayout(banner_row)
        br.setContentsMargins(0, 0, 0, 0)
        br.addWidget(self.banner)
        br.addWidget(self.back_to_live)
        self.banner_row = banner_row
        banner_row.hide()
        central = QWidget()
        cl = QVBoxLayout(central)
        cl.setContentsMargins(2, 2, 2, 2)
        cl.addWidget(self.notifications)
        cl.addWidget(banner_row)
        cl.addWidget(self.view, 1)
        self.setCentralWidget(central)

        # right: task, proposal, decisions, latent state
        self.task_panel = TaskPanel()
        self.proposal_card = ProposalCard()
        self.decision_bar = DecisionBar()
        self.latent_panel = LatentStatePanel()
        agent_box = QWidget()
        al = QVBoxLayout(agent_box)
        al.setContentsMargins(2, 2, 2, 2)
        al.addWidget(self.task_panel)
        al.addWidget(self.proposal_card, 1)
        al.addWidget(self.decision_bar)
        self.agent_dock = self._dock("Task and proposal", agent_box, Qt.DockWidgetArea.RightDockWidgetArea)
        self.latent_dock = self._dock("Latent state", self.latent_panel, Qt.DockWidgetArea.RightDockWidgetArea)
        # left: inspector and layers
        self.inspector = ParseInspector()
        self.layer_panel = LayerPanel(self.view.layer_styles())
        self.inspector_dock = self._dock("Parse inspector", self.inspector, Qt.DockWidgetArea.LeftDockWidgetArea)
        self.layers_dock = self._dock("Overlay layers", self.layer_panel, Qt.DockWidgetArea.LeftDockWidgetArea)
        # bottom: timeline and macros
        self.timeline = StepTimeline()
        self.macro_panel = MacroLibraryPanel()
        # steps and macros share the left column with the inspector (tabs), so the mirror
        # keeps the full height of the window
        self.timeline_dock = self._dock("Steps", self.timeline, Qt.DockWidgetArea.LeftDockWidgetArea)
        self.macro_dock = self._dock("Macros", self.macro_panel, Qt.DockWidgetArea.LeftDockWidgetArea)
        self.knowledge_panel = KnowledgePanel()
        self.knowledge_dock = self._dock("Knowledge", self.knowledge_panel, Qt.DockWidgetArea.LeftDockWidgetArea)
        self.tabifyDockWidget(self.inspector_dock, self.timeline_dock)
        self.tabifyDockWidget(self.timeline_dock, self.macro_dock)
        self.tabifyDockWidget(self.macro_dock, self.knowledge_dock)
        self.inspector_dock.raise_()
        self.setTabPosition(Qt.DockWidgetArea.LeftDockWidgetArea, QTabWidget.TabPosition.North)
        self.resizeDocks([self.inspector_dock, self.agent_dock], [500, 470], Qt.Orientation.Horizontal)
        self.resizeDocks([self.inspector_dock, self.layers_dock], [650, 260], Qt.Orientation.Vertical)
        self.resizeDocks([self.agent_dock, self.latent_dock], [600, 300], Qt.Orientation.Vertical)

        # tool bar: device picker and mirror controls
        tb = QToolBar("Device")
        tb.setObjectName("deviceToolbar")
        tb.setIconSize(QSize(18, 18))
        self.addToolBar(tb)
        tb.addWidget(QLabel(" Device: "))
        self.device_combo = QComboBox()
        self.device_combo.setMinimumWidth(260)
        tb.addWidget(self.device_combo)
        self.refresh_action = tb.addAction(icon("mdi6.refresh"), "Refresh devices", self.refresh_devices)
        self.connect_action = tb.addAction(icon("mdi6.connection"), "Connect", self._connect_selected)
        tb.addSeparator()
        self.live_action = tb.addAction(icon("mdi6.cellphone-link"), "Live mirror")
        self.live_action.setCheckable(True)
        self.live_action.setChecked(True)
        self.live_action.toggled.connect(self._toggle_mirror)
        self.parse_action = tb.addAction(icon("mdi6.text-recognition"), "Parse live")
        self.parse_action.setCheckable(True)
        self.parse_action.setChecked(self.live_parse_enabled)
        self.parse_action.toggled.connect(self._toggle_live_parse)
        tb.addAction(icon("mdi6.image-search"), "Parse now", self.parse_now)
        tb.addSeparator()
        tb.addAction(icon("mdi6.folder-image"), "Open screenshot…", self.open_screenshot_dialog)
        tb.addAction(icon("mdi6.content-save"), "Export overlay PNG…", self.export_overlay_dialog)

        # status bar
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
        self._fps_timer = QTimer(self)
        self._fps_timer.timeout.connect(self._update_fps)
        self._fps_timer.start(1000)

        # wiring between views
        self.view.elementSelected.connect(self.inspector.select_element)
        self.inspector.elementSelected.connect(self.view.select_element)
        self.layer_panel.styleChanged.connect(self.view.set_layer_style)
        self.view.pointPicked.connect(self._on_point_picked)
        self.timeline.stepSelected.connect(self._on_step_selected)

    def _dock(self, title: str, widget: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
        d = QDockWidget(title, self)
        d.setObjectName(title.replace(" ", "_"))
        d.setWidget(widget)
        d.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetMovable | QDockWidget.DockWidgetFeature.DockWidgetFloatable
                      | QDockWidget.DockWidgetFeature.DockWidgetClosable)
        self.addDockWidget(area, d)
        return d

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
        for d in (self.agent_dock, self.latent_dock, self.inspector_dock, self.layers_dock,
                  self.timeline_dock, self.macro_dock, self.knowledge_dock):
            view_menu.addAction(d.toggleViewAction())

    # ---- notifications and progress ----------------------------------------------------
    def notify(self, level: Level | str, message: str, detail: str = "") -> None:
        log.log(logging.ERROR if Level(level) is Level.ERROR else logging.INFO, "%s %s", message, detail[:200])
        if not self._closing:
            self.notifications.notify(level, message, detail)

    def notify_failure(self, what: str, failure: Failure) -> None:
        hint = getattr(failure.error, "hint", "")
        self.notify(Level.ERROR, f"{what}: {failure.message}", (f"What to do: {hint}\n\n" if hint else "") + failure.detail)

    def busy(self, text: str) -> None:
        self.work_label.setText(text)
        self.progress.setVisible(bool(text))

    # ---- models ------------------------------------------------------------------------
    def refresh_models(self) -> None:
        """Ask the LLM server for its models (on a worker) and fill the task panel."""
        from app.gui.agent_setup import list_models

        settings = self.settings
        default = getattr(getattr(settings, "llm", None), "model", "")
        self.task_panel.set_models([default] if default else [], current=default)

        def failed(f: Failure) -> None:
            self.notify(Level.WARNING, f"No model list from the LLM server: {f.message}",
                        getattr(f.error, "hint", "") or f.detail)

        self.misc.submit(lambda: list_models(settings),
                         on_done=lambda models: self.task_panel.set_models(models, current=default),
                         on_error=failed)

    # ---- devices -----------------------------------------------------------------------
    def refresh_devices(self) -> None:
        self.busy("Looking for phones…")
        self.misc.submit(list_choices, on_done=self._on_choices, on_error=lambda f: self.notify_failure("Device list", f))

    def _on_choices(self, result: tuple[list[DeviceChoice], str]) -> None:
        choices, note = result
        self.busy("")
        self.device_combo.clear()
        for c in choices:
            self.device_combo.addItem(icon("mdi6.cellphone" if not c.is_virtual else "mdi6.cellphone-cog"),
                                      c.title + (f" — {c.problem}" if c.problem else ""), c)
        chosen = default_choice(choices, self.device_hint)
        for i in range(self.device_combo.count()):
            if self.device_combo.itemData(i) == chosen:
                self.device_combo.setCurrentIndex(i)
        if note and not chosen.is_virtual:
            self.notify(Level.WARNING, note)
        if self.device is None:
            self.connect_device(chosen)

    def _connect_selected(self) -> None:
        choice = self.device_combo.currentData()
        if choice is not None:
            self.connect_device(choice)

    def connect_device(self, choice: DeviceChoice) -> None:
        if self.run is not None and self.run.active:
            self.notify(Level.WARNING, "Stop the running task before switching phones.")
            return
        self._disconnect()
        self.busy(f"Connecting to {choice.title}…")
        self.device_status.setText(f"connecting: {choice.title}")
        self.executor = SerialExecutor(choice.serial, self.poster)
        self.device_choice = choice
        timeout = getattr(getattr(self.settings, "device", None), "command_timeout_s", 15.0)
        self.executor.submit(self._device_factory, choice, timeout,
                             on_done=self._on_device_open, on_error=self._on_device_failed)

    def use_device(self, device: Device, choice: DeviceChoice | None = None) -> None:
        """Attach an already-open device (tests, embedding)."""
        self._disconnect()
        choice = choice or DeviceChoice(device.info.serial, device.info.model or device.info.serial,
                                        is_virtual=device.info.is_virtual)
        self.executor = SerialExecutor(choice.serial, self.poster)
        self.device_choice = choice
        self._on_device_open(device)

    def _on_device_open(self, device: Device) -> None:
        self.busy("")
        self.device = device
        info = device.info
        size = f" · {info.size}" if info.size else ""
        self.device_status.setText(f"📱 {self.device_choice.title if self.device_choice else info.serial}{size}")
        assert self.executor is not None
        max_fps = getattr(getattr(self.settings, "device", None), "mirror_max_fps", 30)
        self.mirror = MirrorLoop(device, self.executor, max_fps=max_fps, parent=self)
        self.mirror.frameArrived.connect(self._on_frame)
        self.mirror.failed.connect(self._on_mirror_failed)
        if self.live_action.isChecked():
            self.mirror.start()
        self.deviceReady.emit(info.serial)

    def _on_device_failed(self, failure: Failure) -> None:
        self.busy("")
        self.device_status.setText("no device")
        self.notify_failure("Could not open the phone", failure)

    def _on_mirror_failed(self, failure: Failure) -> None:
        if isinstance(failure.error, DeviceGone):
            if self.mirror is not None:
                self.mirror.stop()
            self.device_status.setText("device gone")
        self.notify_failure("Mirror", failure)

    def _disconnect(self) -> None:
        if self.mirror is not None:
            self.mirror.stop()
            self.mirror.deleteLater()
            self.mirror = None
        device, executor = self.device, self.executor
        self.device = None
        self.executor = None
        if executor is not None:
            if device is not None:
                try:
                    executor.call(device.close, timeout=10)
                except Exception as exc:  # closing a dead phone must not block shutdown
                    log.warning("closing the device failed: %s", exc)
            executor.shutdown(wait=True)

    def agent_device(self) -> SerializedDevice:
        """The current device, with every call routed through its serial executor."""
        if self.device is None or self.executor is None:
            raise RuntimeError("no phone is connected")
        return SerializedDevice(self.device, self.executor)

    # ---- mirror and live parse -----------------------------------------------------------
    def _toggle_mirror(self, on: bool) -> None:
        if self.mirror is None:
            return
        if on:
            self.mirror.start()
        else:
            self.mirror.stop()

    def _toggle_live_parse(self, on: bool) -> None:
        self.live_parse_enabled = on
        if on and self._live_screen is not None:
            self.request_parse(self._live_screen, fetch_tree=True)

    def _on_frame(self, screen: Screen) -> None:
        if self.first_frame_s is None:
            self.first_frame_s = time.perf_counter() - self.started_at
            log.info("first mirrored frame after %.2f s", self.first_frame_s)
            self.misc.submit(_warm_up)  # after the first frame, so it does not delay it
        self._live_screen = screen
        if self.viewing != "live":
            return
        sig = frame_signature(screen)
        if sig == self._last_sig and self.view.frame is not None:
            return  # the same pixels: nothing to convert, repaint or parse
        self._last_sig = sig
        self.view.set_frame(screen.image, screen.captured_at)
        if self.live_parse_enabled and not (self.run is not None and self.run.active):
            self.request_parse(screen, fetch_tree=True)

    def _update_fps(self) -> None:
        fps = self.mirror.fps() if self.mirror is not None and self.mirror.running else 0.0
        self.fps_status.setText(f"mirror: {fps:.0f} fps" if fps else "mirror: paused" if self.mirror else "mirror: —")

    def parser(self) -> Any:
        """The screen parser, built on first use (on the parse thread)."""
        if self._parser is None:
            if self._parser_factory is not None:
                self._parser = self._parser_factory()
            else:
                from vision.pipeline import ScreenParser

                self._parser = ScreenParser(pipeline_config_from(self.settings))
        return self._parser

    def parse_screen(self, screen: Screen, *args: Any, **kwargs: Any) -> ScreenParse:
        """Parse on the calling (worker) thread; one parse at a time, as the parser keeps
        per-instance state (model sessions, the previous frame) that is not thread-safe."""
        with self._parser_lock:
            return self.parser().parse(screen, *args, **kwargs)

    def request_parse(self, screen: Screen, fetch_tree: bool = False, purpose: str = "live") -> None:
        """Parse ``screen`` on the parse thread; a newer request replaces a waiting one."""
        device, executor = self.device, self.executor

        def job() -> tuple[str, ScreenParse]:
            s = screen
            if fetch_tree and s.hierarchy_xml is None and device is not None and executor is not None:
                # pixels and tree must come from the same moment: a tree dumped after the
                # phone moved on would be fused with the wrong picture
                try:
                    s = executor.call(lambda: device.screenshot(with_hierarchy=True), timeout=20)
                except Exception as exc:  # the parse still works from the mirrored pixels
                    log.info("no hierarchy for this frame: %s", exc)
            return purpose, self.parse_screen(s)

        self.busy("Parsing screen…")
        self.parse_worker.submit(job, on_done=self._on_parsed, on_error=self._on_parse_failed)

    def parse_now(self) -> None:
        screen = self._live_screen if self.viewing == "live" else None
        if screen is None and self.view.frame is not None:
            screen = Screen(image=np.ascontiguousarray(self.view.frame))
        if screen is None:
            self.notify(Level.WARNING, "Nothing to parse yet: connect a phone or open a screenshot.")
            return
        self.request_parse(screen, fetch_tree=self.viewing == "live", purpose=self.viewing)

    def _on_parsed(self, result: tuple[str, ScreenParse]) -> None:
        purpose, parse = result
        if not self.parse_worker.busy:
            self.busy("")
        if purpose == "live":
            self._live_parse = parse
        if purpose != self.viewing:
            return  # the user moved on (e.g. to a file) before this parse finished
        self.show_parse(parse)

    def _on_parse_failed(self, failure: Failure) -> None:
        self.busy("")
        if isinstance(failure.error, (ImportError, ModuleNotFoundError)):
            if self._parser_error is None:
                self._parser_error = failure.message
                self.notify(Level.ERROR, "The vision pipeline is not available; live parsing is off.", failure.detail)
            self.parse_action.setChecked(False)
            return
        self.notify_failure("Parsing failed", failure)

    def show_parse(self, parse: ScreenParse | None, marks: dict[str, str] | None = None) -> None:
        self.view.set_parse(parse, marks)
        self.inspector.set_parse(parse)
        self.parseShown.emit(parse)

    # ---- viewing something other than the live phone -----------------------------------
    def _set_viewing(self, viewing: str, banner: str) -> None:
        self.viewing = viewing
        self.banner.setText(banner)
        self.banner_row.setVisible(viewing != "live")

    def show_live(self) -> None:
        self._set_viewing("live", "")
        self._last_sig = ""
        self.view.set_mode(ViewMode.INSPECT if not (self.run and self.run.demonstrating) else ViewMode.DEMONSTRATE)
        if self._live_screen is not None:
            self.view.set_frame(self._live_screen.image)
        self.show_parse(self._live_parse)
        proposal = self.run.proposal if self.run is not None else None
        self.view.set_proposal(proposal.action if proposal is not None else None)

    def show_screen(self, screen: Screen | np.ndarray, parse: ScreenParse | None, viewing: str, banner: str) -> None:
        self._set_viewing(viewing, banner)
        self.view.set_frame(screen.image if isinstance(screen, Screen) else screen)
        self.show_parse(parse)

    def _on_step_selected(self, index: int) -> None:
        if self.run is None:
            return
        shot = self.run.step_screen(index)
        if shot is None:
            return
        screen, parse, action = shot
        if screen is None:
            self.notify(Level.INFO, f"No screen was recorded for step {index + 1}.")
            return
        self.show_screen(screen, parse, f"step:{index}", f"Step {index + 1} (past) — the phone keeps running")
        self.view.set_proposal(action)

    def open_screenshot_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open a screenshot to inspect", "", IMAGE_FILTER)
        if path:
            self.open_screenshot(Path(path))

    def open_screenshot(self, path: Path) -> None:
        """Load an image file (on a worker) and parse it for offline inspection."""
        def load() -> Screen:
            from PIL import Image

            with Image.open(path) as im:
                arr = np.asarray(im.convert("RGB")).copy()
            return Screen(image=arr, device=f"file:{path.name}")

        def loaded(screen: Screen) -> None:
            viewing = f"file:{path.name}"
            self.show_screen(screen, None, viewing, f"Screenshot {path.name} (offline inspection)")
            self.request_parse(screen, purpose=viewing)

        self.misc.submit(load, on_done=loaded,
                         on_error=lambda f: self.notify_failure(f"Could not open {path.name}", f))

    def dragEnterEvent(self, event) -> None:
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:
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
            tmp = path.with_name(path.name + ".part")
            if not img.save(str(tmp), "PNG"):
                raise OSError(f"could not write {path} (is the folder writable?)")
            tmp.replace(path)
            return path

        self.misc.submit(save, on_done=lambda p: self.notify(Level.INFO, f"Overlay saved to {p}"),
                         on_error=lambda f: self.notify_failure("Export failed", f))

    # ---- action editor (Edit decision, pick on mirror) -----------------------------------
    def open_action_editor(self, action: Action | None, on_accept) -> ActionEditor:
        size = self.view.parse.screen_size if self.view.parse else (self.device.info.size if self.device else None)
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

    def _on_point_picked(self, point, element_id: str) -> None:
        self.view.set_mode(ViewMode.INSPECT)
        if self._editor is None:
            return
        from agent.types import Target

        target = None
        el = self.view.parse.element(element_id) if (element_id and self.view.parse) else None
        if el is not None:
            target = Target(element_id=el.id, point=point, description=element_words(el))
        self._editor.set_picked_point(point, target)
        self._editor.raise_()

    # ---- settings ------------------------------------------------------------------------
    def open_settings(self) -> None:
        if self.settings is None:
            self.notify(Level.WARNING, "No settings model is loaded.")
            return
        from widgets.settings_dialog import SettingsDialog

        dlg = SettingsDialog(self.settings, self)
        dlg.accepted.connect(lambda: self._settings_accepted(dlg.result_model()))
        dlg.finished.connect(dlg.deleteLater)
        dlg.open()

    def _settings_accepted(self, settings: Any) -> None:
        if settings is None:
            return
        self.settings = settings
        self._parser = None  # rebuilt with the new configuration on next use

        def save() -> Path:
            from app.settings import save_settings

            return save_settings(settings)

        self.misc.submit(save, on_done=lambda p: self.notify(Level.INFO, f"Settings saved to {p}"),
                         on_error=lambda f: self.notify_failure("Could not save settings", f))

    # ---- decisions from the keyboard go through the bar; helpers for tests ---------------
    def decide(self, decision: Decision) -> None:
        if self.run is not None:
            self.run.decide(decision)

    def approve(self) -> None:
        self.decision_bar.trigger(DecisionKind.APPROVE)

    # ---- shutdown --------------------------------------------------------------------------
    def closeEvent(self, event: QCloseEvent) -> None:
        self._closing = True
        self._fps_timer.stop()
        if self.run is not None:
            self.run.shutdown(timeout=15.0)
        self.macros.shutdown()
        self._disconnect()
        # a parse in progress cannot be interrupted (and killing its native threads at exit
        # aborts the process), so wait for it, with the window already off the screen
        self.parse_worker.shutdown(timeout=60.0)
        self.misc.shutdown(wait=True)
        self.poster.close()
        if self._store is not None and getattr(self, "_owns_store", False):
            self._store.close()
        super().closeEvent(event)

    # ---- storage -------------------------------------------------------------------------
    def store(self) -> Any:
        """The episode database (opened on first use)."""
        if self._store is None:
            from app.storage import Store

            path = getattr(self.settings, "database_path", None)
            if path is None:
                from app.settings import Settings

                path = Settings().database_path
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            self._store = Store(path)
            self._owns_store = True
        return self._store
