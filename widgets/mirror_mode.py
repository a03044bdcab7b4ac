"""The mirror's mode bar: what a click on the mirror does, said in words and switchable.

Two buttons, Inspect (a click selects an element) and Control (a click taps the phone, a
drag swipes, a long press holds), and a one-line hint for the mode the mirror is in,
including the modes other parts of the window put it in (demonstrating a step, picking a
point for the action editor).  Emits ``modeChosen`` with the ``ViewMode`` the user picked;
follows ``set_mode`` without echoing it.  Display only; no I/O.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QButtonGroup, QHBoxLayout, QSizePolicy, QToolButton, QWidget

from widgets.icons import icon
from widgets.notifications import ElidedLabel
from widgets.screen_view import ViewMode
from widgets.shortcuts import key_for

HINTS = {
    ViewMode.INSPECT: "A click selects an element; nothing is sent to the phone.",
    ViewMode.CONTROL: "A click taps the phone, a drag swipes, a long press holds.",
    ViewMode.DEMONSTRATE: "Demonstrating: do the step on the mirror (tap, drag or type).",
    ViewMode.PICK: "Picking: click the point the action should use.",
}


class MirrorModeBar(QWidget):
    """Inspect / Control switch with the current mode's hint."""

    modeChosen = Signal(object)  # ViewMode.INSPECT or ViewMode.CONTROL

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.inspect_button = QToolButton()
        self.inspect_button.setText("Inspect")
        self.inspect_button.setIcon(icon("mdi6.cursor-default-click-outline"))
        self.control_button = QToolButton()
        self.control_button.setText("Control")
        self.control_button.setIcon(icon("mdi6.gesture-tap"))
        keys = key_for("Switch the mirror between inspecting and controlling the phone")
        for b in (self.inspect_button, self.control_button):
            b.setCheckable(True)
            b.setAutoRaise(True)
            b.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.inspect_button.setToolTip(f"{HINTS[ViewMode.INSPECT]} ({QKeySequence(keys).toString()} switches)")
        self.control_button.setToolTip(f"{HINTS[ViewMode.CONTROL]} ({QKeySequence(keys).toString()} switches)")
        self._group = QButtonGroup(self)
        self._group.setExclusive(True)
        self._group.addButton(self.inspect_button)
        self._group.addButton(self.control_button)
        self.hint = ElidedLabel()
        self.hint.setStyleSheet("color:#5f6368")
        self.hint.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(4)
        lay.addWidget(self.inspect_button)
        lay.addWidget(self.control_button)
        lay.addWidget(self.hint, 1)
        self._mode = ViewMode.INSPECT
        self.inspect_button.clicked.connect(lambda: self._chosen(ViewMode.INSPECT))
        self.control_button.clicked.connect(lambda: self._chosen(ViewMode.CONTROL))
        self.set_mode(ViewMode.INSPECT)

    @property
    def mode(self) -> ViewMode:
        return self._mode

    def set_mode(self, mode: ViewMode) -> None:
        """Show ``mode`` (the mirror's) without emitting."""
        self._mode = ViewMode(mode)
        self._group.setExclusive(False)
        self.inspect_button.setChecked(self._mode is ViewMode.INSPECT)
        self.control_button.setChecked(self._mode is ViewMode.CONTROL)
        self._group.setExclusive(True)
        self.hint.setText(HINTS[self._mode])
        self.hint.setToolTip(HINTS[self._mode])

    def toggle(self) -> None:
        """Inspect becomes Control and back (the keyboard shortcut)."""
        self._chosen(ViewMode.CONTROL if self._mode is ViewMode.INSPECT else ViewMode.INSPECT)

    def _chosen(self, mode: ViewMode) -> None:
        self.set_mode(mode)
        self.modeChosen.emit(mode)
