"""The Secrets dialog: the names of the secrets in the vault (never their values), where
they are kept, and Add / Replace / Delete.  A value is typed twice into password boxes
that never show it, handed out once with ``setRequested`` and cleared from the boxes.
Goals and macros refer to a secret as ``{{secret:NAME}}``: the dialog says so and copies
the reference of the selected name.

Also ``SecretNameDialog``: the question a recording asks when the user types into a
password field (under which name the value is kept).  No I/O: the caller keeps the
values (``app.vault``) and says what happened (``set_names``, ``show_problem``).
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from widgets.dialog_buttons import ok_cancel
from widgets.icons import button, icon


def reference_of(name: str) -> str:
    return "{{secret:" + name + "}}"


class _ValueBoxes(QWidget):
    """A name and a value typed twice, hidden."""

    def __init__(self, name: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.name = QLineEdit(name, placeholderText="e.g. bank_pin")
        self.value = QLineEdit(placeholderText="never shown, never stored in a run")
        self.again = QLineEdit(placeholderText="the same again")
        for box in (self.value, self.again):
            box.setEchoMode(QLineEdit.EchoMode.Password)
        form = QFormLayout(self)
        form.setContentsMargins(0, 0, 0, 0)
        form.addRow("Name", self.name)
        form.addRow("Value", self.value)
        form.addRow("Value again", self.again)

    def clear_values(self) -> None:
        self.value.clear()
        self.again.clear()


class VaultDialog(QDialog):
    """See the module docstring."""

    setRequested = Signal(str, str)  # name, value
    deleteRequested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("vaultDialog")
        self.setWindowTitle("Secrets")
        self.setMinimumWidth(460)
        intro = QLabel("Passwords and PINs the agent types without ever seeing them. In a goal or a macro step, "
                       "write <b>{{secret:NAME}}</b>: the model, the stored runs and the exports see only the "
                       "name; the phone gets the value when it is typed.")
        intro.setWordWrap(True)
        self.where = QLabel("")
        self.where.setObjectName("vaultWhere")
        self.where.setWordWrap(True)
        self.where.setStyleSheet("color:#555")
        self.names = QListWidget()
        self.names.setObjectName("vaultNames")
        self.empty = QLabel("No secrets yet: add one below.")
        self.empty.setStyleSheet("color:#777")
        self.copy = button("mdi6.content-copy", "Copy reference",
                           "Copy {{secret:NAME}} of the selected secret, to paste into a goal")
        self.delete = QPushButton(icon("mdi6.delete-outline", "#c62828"), "Delete")
        row = QHBoxLayout()
        row.addWidget(self.copy)
        row.addWidget(self.delete)
        row.addStretch(1)
        self.boxes = _ValueBoxes()
        self.save = QPushButton(icon("mdi6.lock-plus", "#2e7d32"), "Keep this secret")
        self.save.setObjectName("vaultSave")
        self.problem = QLabel("")
        self.problem.setStyleSheet("color:#b00020")
        self.problem.setWordWrap(True)
        self.problem.hide()
        close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        close.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(intro)
        lay.addWidget(self.where)
        lay.addWidget(self.names, 1)
        lay.addWidget(self.empty)
        lay.addLayout(row)
        add = QLabel("<b>Add or replace</b>")
        lay.addWidget(add)
        lay.addWidget(self.boxes)
        lay.addWidget(self.problem)
        lay.addWidget(self.save, 0, Qt.AlignmentFlag.AlignLeft)
        lay.addWidget(close)
        self.names.currentTextChanged.connect(self._picked)
        self.copy.clicked.connect(self._copy)
        self.delete.clicked.connect(self._delete)
        self.save.clicked.connect(self._save)
        self.boxes.again.returnPressed.connect(self._save)
        self._picked("")

    # ---- what the caller tells it -------------------------------------------------------------
    def set_names(self, names: list[str], where: str) -> None:
        current = self.names.currentItem().text() if self.names.currentItem() else ""
        self.names.clear()
        self.names.addItems(names)
        matches = self.names.findItems(current, Qt.MatchFlag.MatchExactly) if current else []
        if matches:
            self.names.setCurrentItem(matches[0])
        self.empty.setVisible(not names)
        self.where.setText(f"Kept in {where}.")
        self._picked(self.names.currentItem().text() if self.names.currentItem() else "")

    def show_problem(self, text: str) -> None:
        self.problem.setText(text)
        self.problem.setVisible(bool(text))

    def saved(self, name: str) -> None:
        """The caller kept ``name``: the boxes are cleared."""
        self.boxes.clear_values()
        self.boxes.name.clear()
        self.show_problem("")

    # ---- the user -------------------------------------------------------------------------------
    def _picked(self, name: str) -> None:
        self.copy.setEnabled(bool(name))
        self.delete.setEnabled(bool(name))
        if name:
            self.boxes.name.setText(name)

    def _copy(self) -> None:
        item = self.names.currentItem()
        if item is not None:
            QGuiApplication.clipboard().setText(reference_of(item.text()))

    def _delete(self) -> None:
        item = self.names.currentItem()
        if item is not None:
            self.deleteRequested.emit(item.text())

    def _save(self) -> None:
        name = self.boxes.name.text().strip()
        value, again = self.boxes.value.text(), self.boxes.again.text()
        if not name:
            self.show_problem("Give the secret a name.")
        elif not value:
            self.show_problem("Type the value (twice).")
        elif value != again:
            self.show_problem("The two values differ: type them again.")
            self.boxes.clear_values()
        else:
            self.show_problem("")
            self.setRequested.emit(name, value)
            self.boxes.clear_values()


class SecretNameDialog(QDialog):
    """Recording typed into a password field: under which name is the value kept?"""

    def __init__(self, field: str, names: list[str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("secretNameDialog")
        self.setWindowTitle("Keep this password as a secret")
        text = QLabel(f"You typed into the password field <b>{_esc(field)}</b>. The macro will not keep what you "
                      "typed: it keeps a reference to a secret, and the value goes to the vault. Name it (an "
                      "existing name replaces that secret's value).")
        text.setWordWrap(True)
        self.name = QLineEdit(placeholderText="e.g. library_password")
        if names:
            self.name.setToolTip("Secrets already kept: " + ", ".join(names))
        self.problem = QLabel("")
        self.problem.setStyleSheet("color:#b00020")
        self.problem.hide()
        buttons = ok_cancel(self, self._ok, "Keep and record", "Do not record this step")
        lay = QVBoxLayout(self)
        lay.addWidget(text)
        lay.addWidget(self.name)
        lay.addWidget(self.problem)
        lay.addWidget(buttons)

    def _ok(self) -> None:
        if not self.name.text().strip():
            self.problem.setText("Give it a name, or choose not to record the step.")
            self.problem.show()
            return
        self.accept()

    def chosen(self) -> str:
        return self.name.text().strip()


def _esc(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
