"""The window's side of the run's guards: the consent question asked in a dialog, the
Secrets dialog over the user's vault, and the name a recording asks for when the user
types into a password field.

Consent and secret names are asked from worker threads (a run's model call, a recording
step); ``on_gui`` runs the question on the GUI thread through the session's poster and
blocks the worker until the user answers (a dialog closed with the window answers "no";
a worker whose run was stopped, or whose window closed, stops waiting and takes "no").
The vault is read and written on the GUI thread: a file of a few hundred bytes, or one
keyring call.  Values never reach a log, a notice or the status bar.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from PySide6.QtCore import QCoreApplication, QThread
from PySide6.QtWidgets import QWidget

from agent.privacy.types import ConsentAnswer, ConsentQuestion

log = logging.getLogger(__name__)
T = TypeVar("T")

#: How long a worker waits for an answer before it takes "no" (the user walked away).
ANSWER_TIMEOUT_S = 1800.0
#: How often a waiting worker looks whether its run was stopped or the window closed.
LOOK_S = 0.2


def on_gui(poster: Any, fn: Callable[[], T], default: T, cancelled: Callable[[], bool] | None = None) -> T:
    """``fn()`` run on the GUI thread; the calling worker waits for it (``default`` if the
    window closed, ``cancelled()`` became true, or nobody answered within ``ANSWER_TIMEOUT_S``)."""
    app = QCoreApplication.instance()
    if app is None or QThread.currentThread() is app.thread():
        return fn()
    box: dict[str, T] = {}
    done = threading.Event()

    def run() -> None:
        try:
            box["v"] = fn()
        except Exception:  # a broken dialog answers "no", never crashes the run
            log.exception("asking the user failed")
        finally:
            done.set()

    poster.post(run)
    deadline = time.monotonic() + ANSWER_TIMEOUT_S
    while not done.wait(LOOK_S):
        if poster.closed or (cancelled is not None and cancelled()):
            return default
        if time.monotonic() > deadline:
            log.warning("no answer from the user; taking %r", default)
            return default
    return box.get("v", default)


class DialogConsentGate:
    """A ``ConsentGate`` that asks in a ``ConsentDialog`` over ``parent``."""

    def __init__(self, poster: Any, parent: Callable[[], QWidget | None],
                 cancelled: Callable[[], bool] | None = None) -> None:
        self.poster = poster
        self.parent = parent
        self.cancelled = cancelled  # the run was stopped: a question still open is answered "no"
        self.dialog: Any = None  # the open dialog (tests and screenshots look at it)

    def ask(self, question: ConsentQuestion) -> ConsentAnswer:
        def show() -> ConsentAnswer:
            from widgets.consent_dialog import ConsentDialog

            dlg = ConsentDialog(question, self.parent())
            self.dialog = dlg
            try:
                dlg.exec()
                return dlg.answer
            finally:
                self.dialog = None
                dlg.deleteLater()

        answer = on_gui(self.poster, show, ConsentAnswer.NO, self.cancelled)
        self.poster.post(self._dismiss)  # a question given up on does not stay open
        return answer

    def _dismiss(self) -> None:
        if self.dialog is not None:
            self.dialog.reject()


class VaultController:
    """Opens the Secrets dialog and keeps what the user types in it in the vault."""

    def __init__(self, parent: Callable[[], QWidget | None], open_vault: Callable[[], Any] | None = None) -> None:
        self.parent = parent
        self._open = open_vault
        self.dialog: Any = None

    def vault(self) -> Any:
        if self._open is not None:
            return self._open()
        from app.vault import open_vault

        return open_vault()

    def show(self) -> Any:
        from widgets.vault_dialog import VaultDialog

        if self.dialog is None:
            self.dialog = VaultDialog(self.parent())
            self.dialog.setRequested.connect(self._set)
            self.dialog.deleteRequested.connect(self._delete)
            self.dialog.finished.connect(lambda _r: self._closed())
        self._refresh()
        self.dialog.show()
        self.dialog.raise_()
        return self.dialog

    def _closed(self) -> None:
        if self.dialog is not None:
            self.dialog.deleteLater()
            self.dialog = None

    def _refresh(self) -> None:
        try:
            vault = self.vault()
            self.dialog.set_names(vault.names(), vault.where)
        except Exception as exc:  # VaultError, a keyring that did not answer: said in the dialog
            self.dialog.show_problem(str(exc))

    def _set(self, name: str, value: str) -> None:
        try:
            self.vault().set(name, value)
        except Exception as exc:  # a bad name, an unusable vault: the message names no value
            self.dialog.show_problem(str(exc))
            return
        self.dialog.saved(name)
        self._refresh()

    def _delete(self, name: str) -> None:
        try:
            self.vault().delete(name)
        except Exception as exc:
            self.dialog.show_problem(str(exc))
            return
        self._refresh()


def secret_namer(poster: Any, parent: Callable[[], QWidget | None],
                 open_vault: Callable[[], Any] | None = None) -> Callable[[str, Any], str | None]:
    """What a recording asks when the user types into a password field: a name (the value
    is kept in the vault under it), or None when the user would rather not record the step."""

    def name_it(value: str, field: Any) -> str | None:
        def ask() -> str | None:
            from agent.secrets import check_name
            from widgets.vault_dialog import SecretNameDialog

            vault = open_vault() if open_vault is not None else _user_vault()
            try:
                names = vault.names()
            except Exception:  # the names are a hint only
                names = []
            dlg = SecretNameDialog(getattr(field, "label", "") or getattr(field, "text", "") or "password", names,
                                   parent())
            while dlg.exec():
                try:
                    name = check_name(dlg.chosen())
                    vault.set(name, value)
                    return name
                except Exception as exc:  # a bad name or an unusable vault: ask again, saying why
                    dlg.problem.setText(str(exc))
                    dlg.problem.show()
            return None

        return on_gui(poster, ask, None)

    return name_it


def _user_vault() -> Any:
    from app.vault import open_vault

    return open_vault()
