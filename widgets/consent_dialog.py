"""The consent dialog: the user's answer before something leaves the machine or a step
goes to the bigger model.

For a request to a model server that is not on this machine it shows the server and
model, what was replaced (counts by kind, the placeholders), and exactly the text that
would be sent, placeholders highlighted; Send or Don't send (this run).  For a step that
would go to the bigger model it names the model and why, and asks: this time, for this
task (remembered for this model), or no.  Takes a ``ConsentQuestion`` and returns a
``ConsentAnswer``; no I/O.
"""

from __future__ import annotations

import re

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from agent.privacy.types import ConsentAnswer, ConsentKind, ConsentQuestion
from widgets.icons import icon

_PLACEHOLDER = re.compile(r"<(?:phone|email|number|name)-\d+>")


class ConsentDialog(QDialog):
    """See the module docstring; ``answer`` is set when the dialog closes (NO when dismissed)."""

    def __init__(self, question: ConsentQuestion, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("consentDialog")
        self.question = question
        self.answer = ConsentAnswer.NO
        lay = QVBoxLayout(self)
        head = QLabel()
        head.setWordWrap(True)
        head.setTextFormat(Qt.TextFormat.RichText)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        if question.kind is ConsentKind.SEND:
            self.setWindowTitle("Send this run's requests to a remote model server?")
            head.setText(self._send_words(question))
            lay.addWidget(head)
            self.sent = QPlainTextEdit(question.sent)
            self.sent.setObjectName("consentSent")
            self.sent.setReadOnly(True)
            font = QFont("monospace")
            font.setStyleHint(QFont.StyleHint.Monospace)
            self.sent.setFont(font)
            _highlight(self.sent)
            lay.addWidget(QLabel("<b>Exactly what the first request sends</b> (placeholders in orange):"))
            lay.addWidget(self.sent, 1)
            self._button(buttons, "Don't send", "mdi6.cancel", ConsentAnswer.NO)
            send = self._button(buttons, "Send (this run)", "mdi6.send", ConsentAnswer.ONCE)
            send.setDefault(True)
            self.resize(760, 620)
        else:
            self.setWindowTitle(f"Ask {question.model} for this step?")
            head.setText(self._escalate_words(question))
            lay.addWidget(head)
            self._button(buttons, "No, keep the proposal", "mdi6.cancel", ConsentAnswer.NO)
            self._button(buttons, "For this task", "mdi6.check-all", ConsentAnswer.TASK).setToolTip(
                f"Remembered: {question.model} may take steps of this task from now on")
            once = self._button(buttons, "This step", "mdi6.check", ConsentAnswer.ONCE)
            once.setDefault(True)
        lay.addLayout(buttons)

    @staticmethod
    def _send_words(q: ConsentQuestion) -> str:
        replaced = q.replaced_summary() or "nothing (no phone number, e-mail address or long number on this screen)"
        pics = (f"<br><b style='color:#b00020'>{q.images} screenshot(s) go along: pictures are not redacted.</b>"
                if q.images else "")
        return (f"The model <b>{_esc(q.model)}</b> runs on <b>{_esc(q.server)}</b>, which is not this machine. "
                f"Every request of this run goes there with private values replaced by placeholders, and the "
                f"replies are mapped back here.<br><b>Replaced in this request:</b> {_esc(replaced)}.{pics}")

    @staticmethod
    def _escalate_words(q: ConsentQuestion) -> str:
        where = (f" It runs on <b>{_esc(q.server)}</b>, not on this machine: its requests are redacted and its "
                 "first request asks you again." if q.remote else "")
        return (f"This step would go to the bigger model <b>{_esc(q.model)}</b>: {_esc(q.reason)}.{where}<br>"
                f"Task: <i>{_esc(q.goal)}</i>")

    def _button(self, row: QHBoxLayout, text: str, icon_name: str, answer: ConsentAnswer) -> QPushButton:
        b = QPushButton(icon(icon_name), text)
        b.setObjectName(f"consent_{answer.value}")
        b.clicked.connect(lambda _=False, a=answer: self._answer(a))
        row.addWidget(b)
        return b

    def _answer(self, answer: ConsentAnswer) -> None:
        self.answer = answer
        if answer is ConsentAnswer.NO:
            self.reject()
        else:
            self.accept()


def _highlight(box: QPlainTextEdit) -> None:
    fmt = QTextCharFormat()
    fmt.setBackground(QColor("#ffe0b2"))
    fmt.setForeground(QColor("#8a3c00"))
    doc = box.document()
    text = box.toPlainText()
    for m in _PLACEHOLDER.finditer(text):
        cursor = QTextCursor(doc)
        cursor.setPosition(m.start())
        cursor.setPosition(m.end(), QTextCursor.MoveMode.KeepAnchor)
        cursor.mergeCharFormat(fmt)


def _esc(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
