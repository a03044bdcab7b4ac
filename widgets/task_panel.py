"""The task panel: goal, planner, autonomy mode, model, whether to record the run on
video, and run controls (with keyboard shortcuts; Tab in the goal box moves to the next
field).  While a run is recorded a red "● REC" line says so (``set_recording``).

Emits a frozen ``TaskRequest`` on Start and plain intent signals for pause, single
step and abort; the window decides what they do.  The planner list and the model list
are given to it (the planners from the one list in ``app.compose``; the models from the
LLM server, asked off the GUI thread).  No I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from agent.types import Autonomy
from widgets.icons import icon
from widgets.shortcuts import key_for

#: What the user sees for each autonomy mode.
AUTONOMY_MODES: tuple[tuple[Autonomy, str], ...] = (
    (Autonomy.APPROVE, "Approve every step"),
    (Autonomy.CONFIDENT, "Ask only when unsure or sensitive"),
    (Autonomy.AUTO, "Fully automatic"),
)


class RunState(StrEnum):
    IDLE = "idle"
    RUNNING = "running"
    PAUSED = "paused"
    WAITING = "waiting"  # a proposal awaits the user's decision


@dataclass(frozen=True, slots=True)
class TaskRequest:
    goal: str
    planner: str
    autonomy: str
    model: str


class TaskPanel(QWidget):
    startRequested = Signal(object)  # TaskRequest
    pauseRequested = Signal(bool)  # True = pause, False = resume
    stepRequested = Signal()
    abortRequested = Signal()
    modelPicked = Signal(str)  # the user picked a model in the list (not typed)
    recordToggled = Signal(bool)  # the "Record a video" box
    choiceChanged = Signal()  # the planner or the model shown changed

    def __init__(self, planners: Sequence[tuple[str, str]] = (), parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.goal = QPlainTextEdit()
        self.goal.setPlaceholderText("What should the phone do? e.g. “Turn off Wi-Fi”")
        self.goal.setMaximumHeight(70)
        self.goal.setTabChangesFocus(True)  # Tab moves on to the next field, it types no tab
        self.planner = QComboBox()
        self.set_planners(planners)
        self.autonomy = QComboBox()
        for mode, title in AUTONOMY_MODES:
            self.autonomy.addItem(title, mode.value)
        self.model = QComboBox()
        self.model.setEditable(True)
        for combo in (self.planner, self.autonomy, self.model):
            # long planner names must not widen the dock: the list shows them in full
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            combo.setMinimumContentsLength(14)
        self.model.setPlaceholderText("no models found")
        self.model.activated.connect(lambda i: self.modelPicked.emit(self.model.itemText(i)))
        self.planner.currentIndexChanged.connect(lambda _i: self.choiceChanged.emit())
        self.model.currentTextChanged.connect(lambda _t: self.choiceChanged.emit())
        self.start = QPushButton(icon("mdi6.play", "#2e7d32"), "Start")
        self.pause = QPushButton(icon("mdi6.pause"), "Pause")
        self.pause.setCheckable(True)
        self.step = QPushButton(icon("mdi6.debug-step-over"), "Step")
        self.abort = QPushButton(icon("mdi6.stop", "#c62828"), "Abort")
        self.status = QLabel("Idle")
        self.status.setWordWrap(True)
        self.record = QCheckBox("Record a video of the run")
        self.record.setToolTip("Write the mirror's stream to an MP4 with the steps marked (phones streamed over "
                               "scrcpy; the size limit is in Settings). What flashes on the screen is caught "
                               "either way.")
        self.record.toggled.connect(self.recordToggled.emit)
        self.rec = QLabel("")
        self.rec.setStyleSheet("color:#c62828;font-weight:bold")
        self.rec.setVisible(False)
        self.error = QLabel("")
        self.error.setStyleSheet("color:#b00020")
        form = QFormLayout()
        form.addRow("Goal", self.goal)
        form.addRow("Planner", self.planner)
        form.addRow("Autonomy", self.autonomy)
        form.addRow("Model", self.model)
        form.addRow("", self.record)
        buttons = QHBoxLayout()
        for b in (self.start, self.pause, self.step, self.abort):
            buttons.addWidget(b)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addLayout(form)
        lay.addLayout(buttons)
        lay.addWidget(self.error)
        lay.addWidget(self.rec)
        lay.addWidget(self.status)
        for button, what in ((self.start, "Start the task"), (self.pause, "Pause / resume"),
                             (self.step, "One step while paused"), (self.abort, "Abort the task")):
            keys = key_for(what)
            button.setToolTip(f"{what} ({keys})")
            sc = QShortcut(QKeySequence(keys), self)
            sc.setContext(Qt.ShortcutContext.WindowShortcut)
            sc.activated.connect(button.click)  # a disabled button ignores it
        self.start.clicked.connect(self._on_start)
        self.pause.toggled.connect(self.pauseRequested.emit)
        self.step.clicked.connect(self.stepRequested.emit)
        self.abort.clicked.connect(self.abortRequested.emit)
        self._state = RunState.IDLE
        self.set_state(RunState.IDLE)

    def set_planners(self, planners: Sequence[tuple[str, str]]) -> None:
        """The planners offered, as (id, what the user reads), the first preselected."""
        keep = self.planner.currentData()
        self.planner.clear()
        for pid, title in planners:
            self.planner.addItem(title, pid)
        if keep is not None and self.planner.findData(keep) >= 0:
            self.planner.setCurrentIndex(self.planner.findData(keep))

    def set_defaults(self, planner: str = "", autonomy: str = "") -> None:
        """Preselect a planner and autonomy mode by id (unknown ids are ignored; old
        autonomy names such as ``approve_all`` are read as today's)."""
        if planner and self.planner.findData(planner) >= 0:
            self.planner.setCurrentIndex(self.planner.findData(planner))
        try:
            mode = Autonomy(autonomy).value if autonomy else ""
        except ValueError:
            mode = ""
        if mode and self.autonomy.findData(mode) >= 0:
            self.autonomy.setCurrentIndex(self.autonomy.findData(mode))

    def set_models(self, models: list[str], current: str = "") -> None:
        keep = current or self.model.currentText()
        self.model.clear()
        self.model.addItems(models)
        if keep:
            i = self.model.findText(keep)
            if i >= 0:
                self.model.setCurrentIndex(i)
            else:
                self.model.setEditText(keep)
        elif models:
            self.model.setCurrentIndex(0)

    def request(self) -> TaskRequest:
        return TaskRequest(
            goal=self.goal.toPlainText().strip(),
            planner=self.planner.currentData(),
            autonomy=self.autonomy.currentData(),
            model=self.model.currentText().strip(),
        )

    def _on_start(self) -> None:
        req = self.request()
        if not req.goal:
            self.error.setText("Type a goal first.")
            self.goal.setFocus()
            return
        if not req.model:
            self.error.setText("Choose or type a model name (is the Ollama server running?).")
            return
        self.error.setText("")
        self.startRequested.emit(req)

    def set_state(self, state: RunState, message: str = "") -> None:
        self._state = RunState(state)
        idle = self._state is RunState.IDLE
        self.start.setEnabled(idle)
        for w in (self.goal, self.planner, self.autonomy, self.model, self.record):
            w.setEnabled(idle)
        self.pause.setEnabled(not idle)
        self.step.setEnabled(self._state is RunState.PAUSED)
        self.abort.setEnabled(not idle)
        if idle and self.pause.isChecked():
            self.pause.blockSignals(True)
            self.pause.setChecked(False)
            self.pause.blockSignals(False)
        self.status.setText(message or self._state.value.capitalize())

    @property
    def state(self) -> RunState:
        return self._state

    def set_record(self, on: bool) -> None:
        """Check or clear the "Record a video" box without emitting ``recordToggled``."""
        self.record.blockSignals(True)
        self.record.setChecked(on)
        self.record.blockSignals(False)

    def set_recording(self, text: str) -> None:
        """The REC line: shown with ``text`` ("0:12 · 3.2 MB") while a run is recorded,
        hidden when ``text`` is empty."""
        self.rec.setText(f"● REC {text}" if text else "")
        self.rec.setVisible(bool(text))
