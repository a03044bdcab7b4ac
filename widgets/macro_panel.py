"""The macro library: record / stop, list, edit name and parameters, run with or without
approval, import / export, delete.

It shows ``Macro`` objects and emits intents carrying macro ids; the window does the
recording, running and file I/O.  No I/O here.
"""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from agent.types import Macro
from widgets.icons import icon

ID_ROLE = Qt.ItemDataRole.UserRole + 1


class MacroLibraryPanel(QWidget):
    recordToggled = Signal(bool)  # True = start recording, False = stop
    runRequested = Signal(str, bool)  # macro id, with approval
    editRequested = Signal(str)
    macroEdited = Signal(object)  # Macro (edited copy, version bumped)
    deleteRequested = Signal(str)
    importRequested = Signal()
    exportRequested = Signal(str)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._macros: dict[str, Macro] = {}
        self.record = QPushButton(icon("mdi6.record-rec", "#c62828"), "Record")
        self.record.setCheckable(True)
        self.list = QListWidget()
        self.details = QLabel("")
        self.details.setWordWrap(True)
        self.run = QPushButton(icon("mdi6.play"), "Run")
        self.run_approve = QPushButton(icon("mdi6.play-protected-content"), "Run with approval")
        self.edit = QPushButton(icon("mdi6.pencil"), "Edit…")
        self.delete = QPushButton(icon("mdi6.delete"), "Delete")
        self.import_ = QPushButton(icon("mdi6.import"), "Import…")
        self.export = QPushButton(icon("mdi6.export"), "Export…")
        row1 = QHBoxLayout()
        for b in (self.run, self.run_approve, self.edit):
            row1.addWidget(b)
        row2 = QHBoxLayout()
        for b in (self.delete, self.import_, self.export):
            row2.addWidget(b)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(self.record)
        lay.addWidget(self.list)
        lay.addWidget(self.details)
        lay.addLayout(row1)
        lay.addLayout(row2)
        self.record.toggled.connect(self._on_record)
        self.list.currentItemChanged.connect(lambda *_: self._update())
        self.run.clicked.connect(lambda: self._emit_run(False))
        self.run_approve.clicked.connect(lambda: self._emit_run(True))
        self.edit.clicked.connect(self._on_edit)
        self.delete.clicked.connect(lambda: self.current_id() and self.deleteRequested.emit(self.current_id()))
        self.import_.clicked.connect(self.importRequested.emit)
        self.export.clicked.connect(lambda: self.current_id() and self.exportRequested.emit(self.current_id()))
        self._update()

    def set_macros(self, macros: list[Macro]) -> None:
        current = self.current_id()
        self._macros = {m.id: m for m in macros}
        self.list.clear()
        for m in sorted(macros, key=lambda m: m.name.lower()):
            item = QListWidgetItem(icon("mdi6.script-text-play"), f"{m.name}  (v{m.version}, {len(m.steps)} steps)")
            item.setData(ID_ROLE, m.id)
            item.setToolTip(m.description or m.name)
            self.list.addItem(item)
            if m.id == current:
                self.list.setCurrentItem(item)
        self._update()

    def current_id(self) -> str:
        item = self.list.currentItem()
        return str(item.data(ID_ROLE)) if item is not None else ""

    def select(self, macro_id: str) -> None:
        for r in range(self.list.count()):
            if self.list.item(r).data(ID_ROLE) == macro_id:
                self.list.setCurrentRow(r)

    def set_recording(self, recording: bool, steps: int = 0) -> None:
        self.record.blockSignals(True)
        self.record.setChecked(recording)
        self.record.blockSignals(False)
        self.record.setText(f"Stop recording ({steps} steps)" if recording else "Record")

    def _on_record(self, on: bool) -> None:
        self.set_recording(on)
        self.recordToggled.emit(on)

    def _emit_run(self, approve: bool) -> None:
        if self.current_id():
            self.runRequested.emit(self.current_id(), approve)

    def _update(self) -> None:
        m = self._macros.get(self.current_id())
        for b in (self.run, self.run_approve, self.edit, self.delete, self.export):
            b.setEnabled(m is not None)
        if m is None:
            self.details.setText("<i>Select a macro, or press Record and act on the mirror.</i>")
            return
        steps = "".join(f"<li>{_esc(s.description or s.action.describe())}</li>" for s in m.steps)
        params = ", ".join(m.parameters) or "none"
        self.details.setText(f"<b>{_esc(m.name)}</b> — {_esc(m.description)}<br>parameters: {params}<ol>{steps}</ol>")

    def _on_edit(self) -> None:
        m = self._macros.get(self.current_id())
        if m is None:
            return
        self.editRequested.emit(m.id)
        dlg = MacroEditDialog(m, self)
        dlg.accepted.connect(lambda: self.macroEdited.emit(dlg.edited()))
        dlg.finished.connect(dlg.deleteLater)
        dlg.open()
        self._dialog = dlg


class MacroEditDialog(QDialog):
    """Edit a macro's name, description and parameter names."""

    def __init__(self, macro: Macro, parent=None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Edit macro — {macro.name}")
        self._macro = macro
        self.name = QLineEdit(macro.name)
        self.description = QPlainTextEdit(macro.description)
        self.description.setMaximumHeight(80)
        self.parameters = QLineEdit(", ".join(macro.parameters))
        self.parameters.setPlaceholderText("comma-separated, used as {name} in typed text")
        self.error = QLabel("")
        self.error.setStyleSheet("color:#b00020")
        form = QFormLayout(self)
        form.addRow("Name", self.name)
        form.addRow("Description", self.description)
        form.addRow("Parameters", self.parameters)
        form.addRow(self.error)
        box = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        box.accepted.connect(self._ok)
        box.rejected.connect(self.reject)
        form.addRow(box)

    def edited(self) -> Macro:
        params = tuple(p.strip() for p in self.parameters.text().split(",") if p.strip())
        return replace(
            self._macro,
            name=self.name.text().strip(),
            description=self.description.toPlainText().strip(),
            parameters=params,
            version=self._macro.version + 1,
        )

    def _ok(self) -> None:
        try:
            self.edited()
        except ValueError as exc:
            self.error.setText(str(exc))
            return
        self.accept()


def _esc(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
