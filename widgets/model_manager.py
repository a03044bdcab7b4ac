"""The model manager panel: the models Tapwise can use, the built-in model's offer and
state, pulling an Ollama model with a progress bar, and per-model settings.

When no Ollama answers, the built-in model's offer is the one message that says so (the
listing's red problem line is folded into it).  The model list's columns share the
dock's width, eliding what does not fit (whole on hover).

A view only: it is given plain rows and states and emits intent signals (refresh, pull,
use a model, start/stop the built-in model, settings changed); the controller
(``app.gui.model_controller``) does the work off the GUI thread.  No I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from widgets.icons import icon

#: The offer shown when no Ollama answers: plain about what the built-in model is.
BUILTIN_OFFER = ("No Ollama server answered. You can use the built-in model instead: it runs on this "
                 "computer and needs no setup, but it is a small demo-grade model — expect many wrong "
                 "steps. For real work, install Ollama and pull a GUI model (e.g. qwen3-vl:4b).")


@dataclass(frozen=True)
class ModelRow:
    """One model in the list (what the controller gives the panel)."""

    name: str
    source: str  # "ollama" | "builtin"
    adapter: str = ""
    note: str = ""
    current: bool = False


class ModelManagerPanel(QWidget):
    refreshRequested = Signal()
    pullRequested = Signal(str)
    useRequested = Signal(str, str)  # name, source
    builtinStartRequested = Signal()
    builtinStopRequested = Signal()
    prefsChanged = Signal(str, object)  # model name, dict of changed fields

    def __init__(self, adapters: Sequence[str] = (), parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._loading_prefs = False
        self._offering = False
        layout = QVBoxLayout(self)

        self.offer = QFrame()
        self.offer.setObjectName("builtinOffer")
        self.offer.setStyleSheet("#builtinOffer { background:#fff8e1; border:1px solid #ffb300; border-radius:4px }")
        ol = QVBoxLayout(self.offer)
        self.offer_text = QLabel(BUILTIN_OFFER)
        self.offer_text.setWordWrap(True)
        self.use_builtin = QPushButton(icon("mdi6.play-circle"), "Use the built-in model")
        self.use_builtin.clicked.connect(self.builtinStartRequested)
        ol.addWidget(self.offer_text)
        ol.addWidget(self.use_builtin)
        layout.addWidget(self.offer)
        self.offer.hide()

        builtin_row = QHBoxLayout()
        self.builtin_state = QLabel("Built-in model: stopped")
        self.builtin_state.setWordWrap(True)
        self.builtin_stop = QPushButton(icon("mdi6.stop-circle"), "Stop")
        self.builtin_stop.clicked.connect(self.builtinStopRequested)
        self.builtin_stop.setEnabled(False)
        builtin_row.addWidget(self.builtin_state, 1)
        builtin_row.addWidget(self.builtin_stop)
        layout.addLayout(builtin_row)
        self.builtin_progress = QProgressBar()
        self.builtin_progress.setRange(0, 100)
        self.builtin_progress.hide()
        layout.addWidget(self.builtin_progress)

        top = QHBoxLayout()
        top.addWidget(QLabel("Models"), 1)
        self.refresh_button = QPushButton(icon("mdi6.refresh"), "Refresh")
        self.refresh_button.clicked.connect(self.refreshRequested)
        top.addWidget(self.refresh_button)
        layout.addLayout(top)
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(["model", "source", "adapter", "note"])
        self.tree.setRootIsDecorated(False)
        # the columns share the dock's width (long names and notes are elided, whole on
        # hover): no sideways scrolling in a narrow column
        header = self.tree.header()
        header.setStretchLastSection(False)
        for col, mode in enumerate((QHeaderView.ResizeMode.Stretch, QHeaderView.ResizeMode.ResizeToContents,
                                    QHeaderView.ResizeMode.ResizeToContents, QHeaderView.ResizeMode.Stretch)):
            header.setSectionResizeMode(col, mode)
        header.setMinimumSectionSize(24)
        self.tree.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.tree.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.tree.itemSelectionChanged.connect(self._selected)
        self.tree.itemDoubleClicked.connect(lambda item, _col: self._use(item))
        layout.addWidget(self.tree, 1)
        self.problem = QLabel("")
        self.problem.setWordWrap(True)
        self.problem.setStyleSheet("color:#b71c1c")
        layout.addWidget(self.problem)
        self.use_button = QPushButton(icon("mdi6.check"), "Use this model")
        self.use_button.setEnabled(False)
        self.use_button.clicked.connect(lambda: self._use(self.tree.currentItem()))
        layout.addWidget(self.use_button)

        pull_row = QHBoxLayout()
        self.pull_name = QLineEdit()
        self.pull_name.setPlaceholderText("Ollama model to pull, e.g. qwen3-vl:4b")
        self.pull_name.setMinimumWidth(60)
        self.pull_button = QPushButton(icon("mdi6.download"), "Pull")
        self.pull_button.clicked.connect(self._pull)
        self.pull_name.returnPressed.connect(self._pull)
        pull_row.addWidget(self.pull_name, 1)
        pull_row.addWidget(self.pull_button)
        layout.addLayout(pull_row)
        self.pull_progress = QProgressBar()
        self.pull_progress.hide()
        self.pull_status = QLabel("")
        layout.addWidget(self.pull_progress)
        layout.addWidget(self.pull_status)

        form = QFormLayout()
        # a narrow dock puts each field under its label instead of pushing the panel wider
        form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.prefs_title = QLabel("Settings for: —")
        form.addRow(self.prefs_title)
        self.context = QSpinBox()
        self.context.setRange(0, 262144)
        self.context.setSingleStep(1024)
        self.context.setSpecialValueText("model default")
        self.temperature = QDoubleSpinBox()
        self.temperature.setRange(0.0, 2.0)
        self.temperature.setSingleStep(0.1)
        self.image_side = QSpinBox()
        self.image_side.setRange(0, 4096)
        self.image_side.setSingleStep(64)
        self.image_side.setSpecialValueText("as the adapter says")
        self.adapter = QComboBox()
        self.adapter.addItem("chosen from the name", "")
        self.adapter.addItem("none (generic planners)", "none")
        for a in adapters:
            self.adapter.addItem(a, a)
        form.addRow("Context length", self.context)
        form.addRow("Temperature", self.temperature)
        form.addRow("Image size (longest side)", self.image_side)
        form.addRow("Adapter", self.adapter)
        layout.addLayout(form)
        for w in (self.context, self.image_side):
            w.valueChanged.connect(self._prefs_edited)
        self.temperature.valueChanged.connect(self._prefs_edited)
        self.adapter.currentIndexChanged.connect(self._prefs_edited)
        self._set_prefs_enabled(False)

    # ---- given by the controller ----------------------------------------------------------
    def set_models(self, rows: Sequence[ModelRow], problem: str = "") -> None:
        selected = self.selected_name()
        self.tree.clear()
        for r in rows:
            item = QTreeWidgetItem([r.name + ("  ✓" if r.current else ""), r.source, r.adapter or "—", r.note])
            item.setData(0, Qt.ItemDataRole.UserRole, (r.name, r.source))
            for c in range(4):
                item.setToolTip(c, item.text(c))
            self.tree.addTopLevelItem(item)
            if r.name == selected:
                self.tree.setCurrentItem(item)
        self.problem.setText(problem)
        self._show_problem()

    def show_builtin_offer(self, shown: bool, where: str = "") -> None:
        """Offer the built-in model because no Ollama answers (at ``where``).  The offer is
        then the one message about it: the listing's own problem goes into its tooltip."""
        self._offering = shown
        text = BUILTIN_OFFER.replace("No Ollama server answered.", f"No Ollama server answered at {where}.") \
            if where else BUILTIN_OFFER
        self.offer_text.setText(text)
        self.offer.setToolTip(self.problem.text())
        self.offer.setVisible(shown)
        self._show_problem()

    def _show_problem(self) -> None:
        self.problem.setVisible(bool(self.problem.text()) and not self._offering)

    def set_builtin_state(self, phase: str, message: str, fraction: float | None = None) -> None:
        """``phase``: stopped, preparing, loading, ready, failed."""
        self.builtin_state.setText(f"Built-in model: {message}")
        busy = phase in ("preparing", "loading")
        self.builtin_progress.setVisible(busy)
        if busy:
            if fraction is None:
                self.builtin_progress.setRange(0, 0)
            else:
                self.builtin_progress.setRange(0, 100)
                self.builtin_progress.setValue(int(fraction * 100))
        self.builtin_stop.setEnabled(phase in ("preparing", "loading", "ready"))
        self.use_builtin.setEnabled(phase in ("stopped", "failed"))
        if phase == "ready":
            self.offer.hide()  # taken: the missing Ollama is not news any more (its line stays hidden)

    def set_pull_progress(self, status: str, fraction: float | None, done: bool = False) -> None:
        self.pull_status.setText(status)
        self.pull_progress.setVisible(not done)
        self.pull_button.setEnabled(done)
        if fraction is None:
            self.pull_progress.setRange(0, 0)
        else:
            self.pull_progress.setRange(0, 100)
            self.pull_progress.setValue(int(fraction * 100))

    def set_prefs(self, model: str, prefs: dict) -> None:
        self._loading_prefs = True
        try:
            self.prefs_title.setText(f"Settings for: {model}")
            self.context.setValue(int(prefs.get("context_length", 0)))
            self.temperature.setValue(float(prefs.get("temperature", 0.0)))
            self.image_side.setValue(int(prefs.get("image_max_side", 0)))
            i = self.adapter.findData(prefs.get("adapter", ""))
            self.adapter.setCurrentIndex(max(0, i))
            self._set_prefs_enabled(True)
        finally:
            self._loading_prefs = False

    # ---- queries ----------------------------------------------------------------------------
    def selected_name(self) -> str:
        item = self.tree.currentItem()
        data = item.data(0, Qt.ItemDataRole.UserRole) if item else None
        return str(data[0]) if data else ""

    # ---- internals --------------------------------------------------------------------------
    def _set_prefs_enabled(self, on: bool) -> None:
        for w in (self.context, self.temperature, self.image_side, self.adapter):
            w.setEnabled(on)

    def _selected(self) -> None:
        self.use_button.setEnabled(self.tree.currentItem() is not None)

    def _use(self, item: QTreeWidgetItem | None) -> None:
        data = item.data(0, Qt.ItemDataRole.UserRole) if item else None
        if data:
            self.useRequested.emit(str(data[0]), str(data[1]))

    def _pull(self) -> None:
        name = self.pull_name.text().strip()
        if name:
            self.set_pull_progress(f"Pulling {name}…", None)
            self.pullRequested.emit(name)

    def _prefs_edited(self) -> None:
        if self._loading_prefs:
            return
        name = self.prefs_title.text().removeprefix("Settings for: ")
        if not name or name == "—":
            return
        self.prefsChanged.emit(name, {
            "context_length": self.context.value(),
            "temperature": round(self.temperature.value(), 2),
            "image_max_side": self.image_side.value(),
            "adapter": self.adapter.currentData() or "",
        })
