"""A settings dialog generated from a pydantic model.

Each field becomes an editor by its annotation (bool, int, float, str, Path, Enum,
Literal; nested models become groups).  Validation is the model's own: OK builds a new
model with ``model_validate`` and shows the first error next to its field instead of
closing.  Takes and returns model instances; no I/O (saving is the caller's job).
"""

from __future__ import annotations

import enum
import typing
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QLabel,
    QLineEdit,
    QScrollArea,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)


def _unwrap_optional(tp: Any) -> tuple[Any, bool]:
    origin = typing.get_origin(tp)
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) == 1:
            return args[0], True
    return tp, False


class _Editor:
    """Reads and writes one field's value on its widget."""

    def __init__(self, widget: QWidget, get, set_, optional: bool) -> None:
        self.widget, self.get, self.set, self.optional = widget, get, set_, optional


def _editor_for(annotation: Any, value: Any) -> _Editor:
    tp, optional = _unwrap_optional(annotation)
    origin = typing.get_origin(tp)
    if tp is bool:
        w = QCheckBox()
        return _Editor(w, w.isChecked, lambda v: w.setChecked(bool(v)), optional)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        w = QComboBox()
        members = list(tp)
        for member in members:
            w.addItem(str(member.value))
        return _Editor(
            w, lambda: members[w.currentIndex()], lambda v: w.setCurrentIndex(members.index(v) if v in members else 0),
            optional,
        )
    if origin is typing.Literal:
        w = QComboBox()
        choices = list(typing.get_args(tp))
        for choice in choices:
            w.addItem(str(choice))
        return _Editor(
            w, lambda: choices[w.currentIndex()], lambda v: w.setCurrentIndex(choices.index(v) if v in choices else 0),
            optional,
        )
    if tp is int:
        w = QSpinBox()
        w.setRange(-(2**31) + 1, 2**31 - 1)
        return _Editor(w, w.value, lambda v: w.setValue(int(v or 0)), optional)
    if tp is float:
        w = QDoubleSpinBox()
        w.setRange(-1e9, 1e9)
        w.setDecimals(3)
        return _Editor(w, w.value, lambda v: w.setValue(float(v or 0.0)), optional)
    from pydantic import SecretStr

    if tp is SecretStr:
        w = QLineEdit()
        w.setEchoMode(QLineEdit.EchoMode.Password)
        w.setPlaceholderText("(not set: taken from the environment)")

        def get_secret() -> Any:
            return w.text() or None if optional else w.text()

        def set_secret(v: Any) -> None:
            w.setText(v.get_secret_value() if isinstance(v, SecretStr) else ("" if v is None else str(v)))

        return _Editor(w, get_secret, set_secret, optional)
    w = QLineEdit()
    if tp is Path or (isinstance(tp, type) and issubclass(tp, Path)):
        w.setPlaceholderText("path")
    if optional:
        w.setPlaceholderText("(not set)")

    def get() -> Any:
        text = w.text()
        if optional and text == "":
            return None
        return text

    return _Editor(w, get, lambda v: w.setText("" if v is None else str(v)), optional)


class SettingsDialog(QDialog):
    """Edit a pydantic model instance; ``result_model()`` holds the validated copy."""

    def __init__(self, model: BaseModel, parent=None, title: str = "Settings") -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self._model = model
        self._result: BaseModel | None = None
        self.editors: dict[str, _Editor | dict] = {}
        self._errors: dict[str, QLabel] = {}
        body = QWidget()
        body_layout = QVBoxLayout(body)
        body_layout.addWidget(self._build_group(model, self.editors, prefix=""))
        body_layout.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(body)
        self.error = QLabel("")
        self.error.setStyleSheet("color:#b00020")
        self.error.setWordWrap(True)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self._ok)
        self.buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(scroll)
        lay.addWidget(self.error)
        lay.addWidget(self.buttons)
        self.resize(560, 600)

    def _build_group(self, model: BaseModel, editors: dict, prefix: str) -> QWidget:
        box = QWidget() if not prefix else QGroupBox(prefix.rstrip(".").rsplit(".", 1)[-1].replace("_", " ").title())
        form = QFormLayout(box)
        for name, info in type(model).model_fields.items():
            value = getattr(model, name)
            if isinstance(value, BaseModel):
                sub: dict = {}
                editors[name] = sub
                form.addRow(self._build_group(value, sub, prefix=f"{prefix}{name}."))
                continue
            ed = _editor_for(info.annotation, value)
            ed.set(value)
            if info.description:
                ed.widget.setToolTip(info.description)
            editors[name] = ed
            label = QLabel(info.title or name.replace("_", " ").capitalize())
            if info.description:
                label.setToolTip(info.description)
            err = QLabel("")
            err.setStyleSheet("color:#b00020")
            err.hide()
            self._errors[f"{prefix}{name}"] = err
            col = QWidget()
            cl = QVBoxLayout(col)
            cl.setContentsMargins(0, 0, 0, 0)
            cl.addWidget(ed.widget)
            cl.addWidget(err)
            form.addRow(label, col)
        return box

    def values(self) -> dict[str, Any]:
        def collect(editors: dict) -> dict[str, Any]:
            return {k: collect(v) if isinstance(v, dict) else v.get() for k, v in editors.items()}

        return collect(self.editors)

    def editor(self, dotted: str) -> QWidget:
        node: Any = self.editors
        for part in dotted.split("."):
            node = node[part]
        return node.widget

    def _ok(self) -> None:
        for e in self._errors.values():
            e.hide()
        data = self._model.model_dump()
        _deep_update(data, self.values())
        try:
            self._result = type(self._model).model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first.get("loc", ()))
            msg = first.get("msg", "invalid value")
            self.error.setText(f"{where}: {msg}")
            if where in self._errors:
                self._errors[where].setText(msg)
                self._errors[where].show()
            return
        self.accept()

    def result_model(self) -> BaseModel | None:
        return self._result


def _deep_update(base: dict, new: dict) -> None:
    for k, v in new.items():
        if isinstance(v, dict) and isinstance(base.get(k), dict):
            _deep_update(base[k], v)
        else:
            base[k] = v
