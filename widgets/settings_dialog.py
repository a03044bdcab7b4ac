"""A settings dialog generated from a pydantic model.

Each field becomes an editor by its annotation (bool, int, float, str, Path, Enum,
Literal; nested models become groups), labelled in words (the field's title, or its
name with units and acronyms spelled out), never by the raw field name.  Combo boxes and
spin boxes change only when focused: the mouse wheel scrolls the dialog instead.
Validation is the model's own: OK builds a new model with ``model_validate`` and shows
the first error next to its field instead of closing.  Takes and returns model
instances; no I/O (saving is the caller's job).
"""

from __future__ import annotations

import enum
import typing
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
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

from widgets.dialog_buttons import ok_cancel

#: Words that read better spelled differently than the field name has them.
_WORDS = {"llm": "LLM", "ocr": "OCR", "api": "API", "url": "URL", "fps": "FPS", "adb": "adb", "id": "ID",
          "dpi": "DPI", "ui": "UI", "gpu": "GPU", "cpu": "CPU", "http": "HTTP", "openai": "OpenAI",
          "ollama": "Ollama", "scrcpy": "scrcpy", "db": "database", "dir": "folder"}
_UNITS = {"s": "seconds", "ms": "milliseconds", "px": "pixels", "mb": "MB", "pct": "%"}


def human_label(name: str) -> str:
    """``timeout_s`` → "Timeout (seconds)", ``ocr_min_confidence`` → "OCR min confidence"."""
    parts = [p for p in name.split("_") if p]
    unit = ""
    if len(parts) > 1 and parts[-1].lower() in _UNITS:
        unit = _UNITS[parts.pop().lower()]
    words = [_WORDS.get(p.lower(), p) for p in parts]
    if words and words[0] == words[0].lower():
        words[0] = words[0][:1].upper() + words[0][1:]
    return " ".join(words) + (f" ({unit})" if unit else "")


class _WheelOnlyWhenFocused:
    """Mixin: the wheel changes the value only after the user clicked into the field;
    otherwise it goes to the dialog, which scrolls."""

    def wheelEvent(self, event: Any) -> None:
        if self.hasFocus():  # type: ignore[attr-defined]
            super().wheelEvent(event)  # type: ignore[misc]
        else:
            event.ignore()


class _Combo(_WheelOnlyWhenFocused, QComboBox):
    def __init__(self) -> None:
        super().__init__()
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)


class _Spin(_WheelOnlyWhenFocused, QSpinBox):
    def __init__(self) -> None:
        super().__init__()
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)


class _DoubleSpin(_WheelOnlyWhenFocused, QDoubleSpinBox):
    def __init__(self) -> None:
        super().__init__()
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)


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
        check = QCheckBox()
        return _Editor(check, check.isChecked, lambda v: check.setChecked(bool(v)), optional)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        enum_box = _Combo()
        members = list(tp)
        for member in members:
            enum_box.addItem(str(member.value))
        return _Editor(
            enum_box, lambda: members[enum_box.currentIndex()], lambda v: enum_box.setCurrentIndex(members.index(v) if v in members else 0),
            optional,
        )
    if origin is typing.Literal:
        lit_box = _Combo()
        choices = list(typing.get_args(tp))
        for choice in choices:
            lit_box.addItem(str(choice))
        return _Editor(
            lit_box, lambda: choices[lit_box.currentIndex()], lambda v: lit_box.setCurrentIndex(choices.index(v) if v in choices else 0),
            optional,
        )
    if tp is int:
        spin = _Spin()
        spin.setRange(-(2**31) + 1, 2**31 - 1)
        return _Editor(spin, spin.value, lambda v: spin.setValue(int(v or 0)), optional)
    if tp is float:
        dspin = _DoubleSpin()
        dspin.setRange(-1e9, 1e9)
        dspin.setDecimals(3)
        return _Editor(dspin, dspin.value, lambda v: dspin.setValue(float(v or 0.0)), optional)
    from pydantic import SecretStr

    if tp is SecretStr:
        secret = QLineEdit()
        secret.setEchoMode(QLineEdit.EchoMode.Password)
        secret.setPlaceholderText("(not set: taken from the environment)")

        def get_secret() -> Any:
            return secret.text() or None if optional else secret.text()

        def set_secret(v: Any) -> None:
            secret.setText(v.get_secret_value() if isinstance(v, SecretStr) else ("" if v is None else str(v)))

        return _Editor(secret, get_secret, set_secret, optional)
    line = QLineEdit()
    if tp is Path or (isinstance(tp, type) and issubclass(tp, Path)):
        line.setPlaceholderText("path")
    if optional:
        line.setPlaceholderText("(not set)")

    def get() -> Any:
        text = line.text()
        if optional and text == "":
            return None
        return text

    return _Editor(line, get, lambda v: line.setText("" if v is None else str(v)), optional)


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
        self.buttons = ok_cancel(self, self._ok)
        lay = QVBoxLayout(self)
        lay.addWidget(scroll)
        lay.addWidget(self.error)
        lay.addWidget(self.buttons)
        self.resize(560, 600)

    def _build_group(self, model: BaseModel, editors: dict, prefix: str) -> QWidget:
        box = QWidget() if not prefix else QGroupBox(human_label(prefix.rstrip(".").rsplit(".", 1)[-1]))
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
            label = QLabel(info.title or human_label(name))
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
