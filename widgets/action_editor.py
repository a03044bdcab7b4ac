"""The action editor: a dialog that builds a validated ``Action``.

Fields appear for the chosen action type; "Pick on mirror" emits ``pickRequested`` and
the window feeds the clicked point back through ``set_picked_point``.  The dialog is
non-modal so the mirror stays clickable.  It validates by constructing the ``Action``;
an invalid combination shows the reason instead of closing.  No I/O.
"""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from agent.types import Action, ActionType, Direction, Target
from vision.geometry import Point, Size
from widgets.icons import icon


class ActionEditor(QDialog):
    """Edit or create one action."""

    pickRequested = Signal(str)  # "touch" or "lift"
    actionAccepted = Signal(object)  # Action

    def __init__(self, action: Action | None = None, screen: Size | None = None, parent=None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Edit action")
        self.setModal(False)
        self._screen = screen or Size(1080, 2400)
        self._target: Target | None = None
        self._picking = ""
        self._touch_set = False  # a touch point came from the action, a pick or the user's typing

        self.type_combo = QComboBox()
        for t in ActionType:
            self.type_combo.addItem(t.value.replace("_", " "), t.value)
        self.touch_x, self.touch_y, self.lift_x, self.lift_y = (self._coord(i % 2 == 0) for i in range(4))
        self.pick_touch = QPushButton(icon("mdi6.crosshairs-gps"), "Pick on mirror")
        self.pick_lift = QPushButton(icon("mdi6.crosshairs-gps"), "Pick on mirror")
        self.direction = QComboBox()
        self.direction.addItem("(from points)", None)
        for d in Direction:
            self.direction.addItem(f"finger {d.value}", d.value)
        self.text = QLineEdit()
        self.app = QLineEdit(placeholderText="app name or package")
        self.duration = QSpinBox()
        self.duration.setRange(0, 10000)
        self.duration.setSuffix(" ms")
        self.duration.setSpecialValueText("default")
        self.target_label = QLabel("")
        self.target_label.setWordWrap(True)
        self.error = QLabel("")
        self.error.setStyleSheet("color:#b00020")
        self.error.setWordWrap(True)

        self.heading = QLabel("<b>Edit the action</b> — change its type or values, or pick its point on the mirror")
        self.heading.setWordWrap(True)
        self.setObjectName("actionEditor")
        self.setStyleSheet("#actionEditor { border: 2px solid #1565c0; }")
        self.form = QFormLayout()
        self.form.addRow("Action", self.type_combo)
        self._touch_row = self._point_row(self.touch_x, self.touch_y, self.pick_touch)
        self._lift_row = self._point_row(self.lift_x, self.lift_y, self.pick_lift)
        self.form.addRow("Touch point", self._touch_row)
        self.form.addRow("Lift point", self._lift_row)
        self.form.addRow("Direction", self.direction)
        self.form.addRow("Text", self.text)
        self.form.addRow("App", self.app)
        self.form.addRow("Duration", self.duration)
        self.form.addRow("Target", self.target_label)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        lay = QVBoxLayout(self)
        lay.addWidget(self.heading)
        lay.addLayout(self.form)
        lay.addWidget(self.error)
        lay.addWidget(self.buttons)

        self.type_combo.currentIndexChanged.connect(self._update_fields)
        for spin in (self.touch_x, self.touch_y):
            spin.valueChanged.connect(self._touch_edited)
        self.pick_touch.clicked.connect(lambda: self._request_pick("touch"))
        self.pick_lift.clicked.connect(lambda: self._request_pick("lift"))
        self.buttons.accepted.connect(self._try_accept)
        self.buttons.rejected.connect(self.reject)
        if action is not None:
            self.set_action(action)
        self._update_fields()

    def _coord(self, is_x: bool) -> QSpinBox:
        s = QSpinBox()
        s.setRange(0, (self._screen.width if is_x else self._screen.height) - 1)
        s.setPrefix("x " if is_x else "y ")
        return s

    @staticmethod
    def _point_row(x: QSpinBox, y: QSpinBox, pick: QPushButton) -> QWidget:
        w = QWidget()
        h = QHBoxLayout(w)
        h.setContentsMargins(0, 0, 0, 0)
        h.addWidget(x)
        h.addWidget(y)
        h.addWidget(pick)
        return w

    # ---- fields ---------------------------------------------------------------------
    def action_type(self) -> ActionType:
        return ActionType(self.type_combo.currentData())

    def _update_fields(self) -> None:
        t = self.action_type()
        gesture = t in (ActionType.TAP, ActionType.LONG_PRESS, ActionType.SWIPE)
        shown = {
            self._touch_row: gesture,
            self._lift_row: t is ActionType.SWIPE,
            self.direction: t is ActionType.SWIPE,
            self.text: t is ActionType.TYPE,
            self.app: t is ActionType.OPEN_APP,
            self.duration: t in (ActionType.LONG_PRESS, ActionType.SWIPE),
        }
        for w, visible in shown.items():
            self.form.setRowVisible(w, visible)
        self.error.setText("")

    def _touch_edited(self, _value: int) -> None:
        self._touch_set = True

    def set_action(self, action: Action) -> None:
        self.type_combo.setCurrentIndex(self.type_combo.findData(action.type.value))
        point = action.touch or (action.target.point if action.target is not None else None)
        for spin, value in ((self.touch_x, point.x if point else 0), (self.touch_y, point.y if point else 0)):
            spin.blockSignals(True)
            spin.setValue(value)
            spin.blockSignals(False)
        self._touch_set = point is not None
        if action.lift is not None:
            self.lift_x.setValue(action.lift.x)
            self.lift_y.setValue(action.lift.y)
        self.direction.setCurrentIndex(max(0, self.direction.findData(action.direction.value if action.direction else None)))
        self.text.setText(action.text or "")
        self.app.setText(action.app or "")
        self.duration.setValue(action.duration_ms or 0)
        self._set_target(action.target)
        self._update_fields()

    def _set_target(self, target: Target | None) -> None:
        self._target = target
        if target is None:
            self.target_label.setText("<i>none</i>")
        else:
            self.target_label.setText(target.description or target.element_id or "")

    # ---- picking ----------------------------------------------------------------------
    def _request_pick(self, which: str) -> None:
        self._picking = which
        self.error.setText(f"Click the mirror to set the {which} point…")
        self.pickRequested.emit(which)

    @property
    def picking(self) -> str:
        return self._picking

    def set_picked_point(self, point: Point, target: Target | None = None) -> None:
        """Receive the point the user clicked on the mirror (and what it hit)."""
        which = self._picking or "touch"
        x, y = (self.touch_x, self.touch_y) if which == "touch" else (self.lift_x, self.lift_y)
        x.setValue(point.x)
        y.setValue(point.y)
        if which == "touch":
            self._touch_set = True
            self._set_target(target)
        self._picking = ""
        self.error.setText("")

    # ---- result -----------------------------------------------------------------------
    def build_action(self) -> Action:
        """The action described by the fields; ``ValueError`` says what is wrong."""
        t = self.action_type()
        if t in (ActionType.TAP, ActionType.LONG_PRESS, ActionType.SWIPE) and not self._touch_set:
            raise ValueError(f"a {t.value.replace('_', ' ')} needs a point: press “Pick on mirror” "
                             "and click the spot, or type its x and y")
        touch = Point(self.touch_x.value(), self.touch_y.value())
        duration = self.duration.value() or None
        if t in (ActionType.TAP, ActionType.LONG_PRESS):
            a = Action(t, touch=touch, target=self._target, duration_ms=duration if t is ActionType.LONG_PRESS else None)
        elif t is ActionType.SWIPE:
            lift = Point(self.lift_x.value(), self.lift_y.value())
            d = self.direction.currentData()
            a = Action(t, touch=touch, lift=lift, direction=Direction(d) if d else None, duration_ms=duration)
            if a.direction is None:
                a = replace(a, direction=a.finger_direction())
        elif t is ActionType.TYPE:
            a = Action(t, text=self.text.text(), target=self._target)
        elif t is ActionType.OPEN_APP:
            a = Action(t, app=self.app.text().strip())
        else:
            a = Action(t)
        return a

    def _try_accept(self) -> None:
        try:
            action = self.build_action()
        except ValueError as exc:
            self.error.setText(f"Not a valid action: {exc}")
            return
        self._result = action
        self.actionAccepted.emit(action)
        self.accept()

    @property
    def result_action(self) -> Action | None:
        return getattr(self, "_result", None)
