"""The task panel: goal, planner, autonomy mode, model, and run controls.

Emits a frozen ``TaskRequest`` on Start and plain intent signals for pause, single
step and abort; the window decides what they do.  The model list is given to it (the
window asks the Ollama server off the GUI thread).  No I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from widgets.icons import icon

#: Planner ids (as the agent names them: ``+`` with latent-state estimation, ``-`` without)
#: and what the user sees.  The six latent-state variants first.
PLANNERS: tuple[tuple[str, str], ...] = (
    ("zeroshot-", "Zero-shot"),
    ("zeroshot+", "Zero-shot + latent state"),
    ("cotsc-", "CoT self-consistency"),
    ("cotsc+", "CoT self-consistency + latent state"),
    ("react-", "ReAct"),
    ("react+", "ReAct + latent state"),
    ("visiontasker", "VisionTasker step planner"),
    ("chain", "Chain-of-action (Auto-UI)"),
    ("prompt2task", "Prompt2Task pipeline"),
)

AUTONOMY_MODES: tuple[tuple[str, str], ...] = (
    ("approve_all", "Approve every step"),
    ("confident", "Ask only when unsure or sensitive"),
    ("auto", "Fully automatic"),
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

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.goal = QPlainTextEdit()
        self.goal.setPlaceholderText("What should the phone do? e.g. “Turn off Wi-Fi”")
        self.goal.setMaximumHeight(70)
        self.planner = QComboBox()
        for pid, title in PLANNERS:
            self.planner.addItem(title, pid)
        self.planner.setCurrentIndex(1)  # zero-shot with latent state
        self.autonomy = QComboBox()
        for mid, title in AUTONOMY_MODES:
            self.autonomy.addItem(title, mid)
        self.model = QComboBox()
        self.model.setEditable(True)
        self.model.setPlaceholderText("no models found")
        self.start = QPushButton(icon("mdi6.play", "#2e7d32"), "Start")
        self.pause = QPushButton(icon("mdi6.pause"), "Pause")
        self.pause.setCheckable(True)
        self.step = QPushButton(icon("mdi6.debug-step-over"), "Step")
        self.abort = QPushButton(icon("mdi6.stop", "#c62828"), "Abort")
        self.status = QLabel("Idle")
        self.status.setWordWrap(True)
        self.error = QLabel("")
        self.error.setStyleSheet("color:#b00020")
        form = QFormLayout()
        form.addRow("Goal", self.goal)
        form.addRow("Planner", self.planner)
        form.addRow("Autonomy", self.autonomy)
        form.addRow("Model", self.model)
        buttons = QHBoxLayout()
        for b in (self.start, self.pause, self.step, self.abort):
            buttons.addWidget(b)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addLayout(form)
        lay.addLayout(buttons)
        lay.addWidget(self.error)
        lay.addWidget(self.status)
        self.start.clicked.connect(self._on_start)
        self.pause.toggled.connect(self.pauseRequested.emit)
        self.step.clicked.connect(self.stepRequested.emit)
        self.abort.clicked.connect(self.abortRequested.emit)
        self._state = RunState.IDLE
        self.set_state(RunState.IDLE)

    def set_defaults(self, planner: str = "", autonomy: str = "") -> None:
        """Preselect a planner and autonomy mode by id (unknown ids are ignored)."""
        if planner and self.planner.findData(planner) >= 0:
            self.planner.setCurrentIndex(self.planner.findData(planner))
        if autonomy and self.autonomy.findData(autonomy) >= 0:
            self.autonomy.setCurrentIndex(self.autonomy.findData(autonomy))

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
        for w in (self.goal, self.planner, self.autonomy, self.model):
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
