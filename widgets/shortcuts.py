"""The keyboard shortcuts of the window, in one table, and the dialog that lists them
(Help ▸ Keyboard shortcuts, F1).  Widgets take their keys from here, so the list the
user sees is the list that works.  No I/O.
"""

from __future__ import annotations

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

#: (group, what it does, key sequence in Qt's portable text form)
SHORTCUTS: tuple[tuple[str, str, str], ...] = (
    ("Task", "Start the task", "F5"),
    ("Task", "Pause / resume", "F6"),
    ("Task", "One step while paused", "F7"),
    ("Task", "Abort the task", "Shift+F5"),
    ("Decision", "Approve the proposal", "Ctrl+Return"),
    ("Decision", "Edit the proposed action", "Ctrl+E"),
    ("Decision", "Reject (type the reason first)", "Ctrl+R"),
    ("Decision", "Demonstrate the step on the mirror", "Ctrl+D"),
    ("Decision", "Abort at this step", "Ctrl+Shift+X"),
    ("Decision", "Ask the bigger model for this step", "Ctrl+B"),
    ("Mirror", "Switch the mirror between inspecting and controlling the phone", "Ctrl+M"),
    ("Window", "Open a screenshot", "Ctrl+O"),
    ("Window", "Settings", "Ctrl+,"),
    ("Window", "This list", "F1"),
    ("Window", "Quit", "Ctrl+Q"),
    ("Goal box", "Move to the next field", "Tab"),
)


def key_for(what: str) -> str:
    """The key sequence of the shortcut described as ``what``."""
    for _group, text, keys in SHORTCUTS:
        if text == what:
            return keys
    raise KeyError(what)


class ShortcutsDialog(QDialog):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Keyboard shortcuts")
        self.table = QTableWidget(len(SHORTCUTS), 3)
        self.table.setHorizontalHeaderLabels(["Where", "What", "Keys"])
        self.table.verticalHeader().hide()
        for row, (group, text, keys) in enumerate(SHORTCUTS):
            for col, value in enumerate((group, text, keys)):
                self.table.setItem(row, col, QTableWidgetItem(value))
        self.table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        box = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        box.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(self.table)
        lay.addWidget(box)
        self.resize(460, 420)
