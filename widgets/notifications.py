"""Non-blocking notifications: a stack of dismissible messages, each with its detail
(a traceback, a hint) one click away.  Info messages fade out on their own; errors stay
until dismissed.  Display only; no I/O.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from enum import StrEnum

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from widgets.icons import icon


class Level(StrEnum):
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"


_STYLE = {
    Level.INFO: ("mdi6.information", "#1565c0", "#e3f2fd"),
    Level.WARNING: ("mdi6.alert", "#b26a00", "#fff8e1"),
    Level.ERROR: ("mdi6.alert-octagon", "#b00020", "#fdecea"),
}


@dataclass(frozen=True, slots=True)
class Notice:
    level: Level
    message: str
    detail: str = ""
    at: float = field(default_factory=time.time)


class NoticeCard(QFrame):
    dismissed = Signal()

    def __init__(self, notice: Notice, parent=None) -> None:
        super().__init__(parent)
        self.notice = notice
        icon_name, fg, bg = _STYLE[notice.level]
        self.setObjectName("noticeCard")
        self.setStyleSheet(f"#noticeCard {{ background:{bg}; border:1px solid {fg}; border-radius:6px; }}")
        glyph = QLabel()
        glyph.setPixmap(icon(icon_name, fg).pixmap(20, 20))
        self.message = QLabel(notice.message)
        self.message.setWordWrap(True)
        self.message.setStyleSheet(f"color:{fg}; font-weight:bold")
        self.details_button = QPushButton("Details")
        self.details_button.setCheckable(True)
        self.details_button.setVisible(bool(notice.detail))
        close = QToolButton()
        close.setIcon(icon("mdi6.close"))
        close.setAutoRaise(True)
        close.setToolTip("Dismiss")
        self.detail = QPlainTextEdit(notice.detail, readOnly=True)
        self.detail.setMaximumHeight(160)
        self.detail.hide()
        top = QHBoxLayout()
        top.addWidget(glyph)
        top.addWidget(self.message, 1)
        top.addWidget(self.details_button)
        top.addWidget(close)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 4, 6, 4)
        lay.addLayout(top)
        lay.addWidget(self.detail)
        self.details_button.toggled.connect(self.detail.setVisible)
        close.clicked.connect(self.dismissed.emit)
        self.close_button = close


class NotificationArea(QWidget):
    """A vertical stack of notices; newest on top, at most ``limit`` kept."""

    def __init__(self, parent=None, limit: int = 5, info_timeout_ms: int = 6000) -> None:
        super().__init__(parent)
        self.limit = limit
        self.info_timeout_ms = info_timeout_ms
        self._lay = QVBoxLayout(self)
        self._lay.setContentsMargins(0, 0, 0, 0)
        self._lay.setAlignment(Qt.AlignmentFlag.AlignTop)
        self._cards: list[NoticeCard] = []
        self.history: list[Notice] = []
        self.setVisible(False)

    def notify(self, level: Level | str, message: str, detail: str = "") -> NoticeCard:
        notice = Notice(Level(level), message, detail)
        self.history.append(notice)
        card = NoticeCard(notice, self)
        card.dismissed.connect(lambda c=card: self._remove(c))
        self._lay.insertWidget(0, card)
        self._cards.insert(0, card)
        while len(self._cards) > self.limit:
            self._remove(self._cards[-1])
        if notice.level is Level.INFO and self.info_timeout_ms > 0:
            QTimer.singleShot(self.info_timeout_ms, card, lambda c=card: self._remove(c))
        self.setVisible(True)
        return card

    def _remove(self, card: NoticeCard) -> None:
        if card in self._cards:
            self._cards.remove(card)
            card.hide()
            card.deleteLater()
        self.setVisible(bool(self._cards))

    @property
    def cards(self) -> list[NoticeCard]:
        return list(self._cards)
