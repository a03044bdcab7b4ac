"""The OK / Cancel row of the workbench's small dialogs.

Only builds the button box and connects it; what OK checks or saves stays with the dialog.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QDialog, QDialogButtonBox


def ok_cancel(dialog: QDialog, on_ok: Callable[[], None], ok_words: str = "",
              cancel_words: str = "") -> QDialogButtonBox:
    """OK and Cancel for ``dialog``: OK calls ``on_ok`` (the dialog's check, or ``accept``),
    Cancel rejects the dialog; ``ok_words`` / ``cancel_words`` rename the buttons."""
    ok, cancel = QDialogButtonBox.StandardButton.Ok, QDialogButtonBox.StandardButton.Cancel
    box = QDialogButtonBox(ok | cancel)
    if ok_words:
        box.button(ok).setText(ok_words)
    if cancel_words:
        box.button(cancel).setText(cancel_words)
    box.accepted.connect(on_ok)
    box.rejected.connect(dialog.reject)
    return box
