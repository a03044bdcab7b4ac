"""Non-blocking notifications: a short stack of one-line, dismissible cards that the
window lays out above the mirror, so they never cover the phone's screen, and whose
width follows the space they are given (a long message is elided, never widening the
window or the panels beside it).

One card per subject (the key, the message unless the caller names one): a repeat at
the same level does not add a card, it bumps a count on the existing one and moves it
to the top; a notice at another level on the same subject replaces the card (the newer
state of the matter wins).  ``resolve(key)`` takes a subject's card away when its cause
is gone.  Each card's detail (a traceback, a hint) is one click away.  Info messages
fade out on their own; errors stay until dismissed or resolved.  Display only; no I/O.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from enum import StrEnum

from PySide6.QtCore import QSize, Qt, QTimer, Signal
from PySide6.QtGui import QPainter, QPaintEvent
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
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

#: The longest message shown on a card's face; the rest goes to its details.
FACE_CHARS = 160


@dataclass(frozen=True, slots=True)
class Notice:
    level: Level
    message: str
    detail: str = ""
    key: str = ""
    at: float = field(default_factory=time.time)


def _face(message: str) -> tuple[str, str]:
    """The first line of ``message``, shortened to ``FACE_CHARS``, and what was cut."""
    first, _, rest = message.partition("\n")
    if len(first) > FACE_CHARS:
        cut = first.rfind(" ", 0, FACE_CHARS)
        cut = cut if cut > FACE_CHARS // 2 else FACE_CHARS
        return first[:cut] + " …", message
    return first, rest.strip()


class ElidedLabel(QLabel):
    """A one-line label that elides its text at the width it is given and asks for no
    width of its own (so a long message never widens what holds it)."""

    def minimumSizeHint(self) -> QSize:
        return QSize(20, super().minimumSizeHint().height())

    def sizeHint(self) -> QSize:
        return QSize(20, super().sizeHint().height())

    def shown_text(self) -> str:
        """The text as drawn at the current width."""
        return self.fontMetrics().elidedText(self.text(), Qt.TextElideMode.ElideRight, max(0, self.contentsRect().width()))

    def paintEvent(self, event: QPaintEvent) -> None:
        p = QPainter(self)
        p.setPen(self.palette().color(self.foregroundRole()))
        p.drawText(self.contentsRect(), int(Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft), self.shown_text())
        p.end()


class NoticeCard(QFrame):
    dismissed = Signal()
    resized = Signal()  # its details were shown or hidden

    def __init__(self, notice: Notice, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.notice = notice
        self.count = 1
        icon_name, fg, bg = _STYLE[notice.level]
        self.setObjectName("noticeCard")
        self.setStyleSheet(f"#noticeCard {{ background:{bg}; border:1px solid {fg}; border-radius:6px; }}")
        glyph = QLabel()
        glyph.setPixmap(icon(icon_name, fg).pixmap(20, 20))
        self.message = ElidedLabel()
        self.message.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.message.setStyleSheet(f"color:{fg}; font-weight:bold")
        self.repeats = QLabel("")
        self.repeats.setStyleSheet(f"color:white; background:{fg}; border-radius:8px; padding:0 6px")
        self.repeats.hide()
        self.details_button = QPushButton("Details")
        self.details_button.setCheckable(True)
        close = QToolButton()
        close.setIcon(icon("mdi6.close"))
        close.setAutoRaise(True)
        close.setToolTip("Dismiss")
        self.detail = QPlainTextEdit(readOnly=True)
        self.detail.setMaximumHeight(160)
        self.detail.hide()
        self.repeats.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        self.details_button.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        # one line: the message takes what width is left, elided; its count and buttons
        # keep their size at its end
        top = QHBoxLayout()
        top.addWidget(glyph)
        top.addWidget(self.message, 1)
        top.addWidget(self.repeats)
        top.addWidget(self.details_button)
        top.addWidget(close)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 2, 4, 2)
        lay.setSpacing(2)
        lay.addLayout(top)
        lay.addWidget(self.detail)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.details_button.toggled.connect(self.detail.setVisible)
        self.details_button.toggled.connect(lambda _on: self.resized.emit())
        close.clicked.connect(self.dismissed.emit)
        self.close_button = close
        self.show_notice(notice)

    def show_notice(self, notice: Notice) -> None:
        """Show ``notice`` (the newest of its kind) on this card."""
        self.notice = notice
        face, extra = _face(notice.message)
        self.message.setText(face)
        self.message.setToolTip(notice.message)
        detail = "\n\n".join(p for p in (extra, notice.detail) if p)
        self.detail.setPlainText(detail)
        self.details_button.setVisible(bool(detail))

    def minimumSizeHint(self) -> QSize:
        return QSize(60, super().minimumSizeHint().height())

    def repeat(self, notice: Notice) -> None:
        self.count += 1
        self.show_notice(notice)
        self.repeats.setText(f"×{self.count}")
        self.repeats.setToolTip(f"This happened {self.count} times")
        self.repeats.show()


class NotificationArea(QWidget):
    """A vertical stack of notices, newest on top, at most ``limit`` cards; hidden when
    empty.  It takes the height its cards need and no width of its own."""

    def __init__(self, parent: QWidget | None = None, limit: int = 3, info_timeout_ms: int = 6000) -> None:
        super().__init__(parent)
        self.limit = limit
        self.info_timeout_ms = info_timeout_ms
        self._lay = QVBoxLayout(self)
        self._lay.setContentsMargins(0, 0, 0, 2)
        self._lay.setSpacing(2)
        self._lay.setAlignment(Qt.AlignmentFlag.AlignTop)
        self._cards: list[NoticeCard] = []
        self._by_key: dict[str, NoticeCard] = {}
        self.history: list[Notice] = []
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Maximum)
        self.setVisible(False)

    def minimumSizeHint(self) -> QSize:
        return QSize(60, super().minimumSizeHint().height())

    # ---- notices --------------------------------------------------------------------------
    def notify(self, level: Level | str, message: str, detail: str = "", key: str = "") -> NoticeCard:
        notice = Notice(Level(level), message, detail, key or message)
        self.history.append(notice)
        card = self._by_key.get(notice.key)
        if card is not None and card in self._cards and card.notice.level is notice.level:
            card.repeat(notice)
            self._cards.remove(card)
            self._lay.removeWidget(card)
        else:
            if card is not None:
                self._remove(card)  # the same subject at another level: the newer state replaces it
            card = NoticeCard(notice, self)
            card.dismissed.connect(lambda c=card: self._remove(c))
            card.resized.connect(self.updateGeometry)
            self._by_key[notice.key] = card
            if notice.level is Level.INFO and self.info_timeout_ms > 0:
                QTimer.singleShot(self.info_timeout_ms, card, lambda c=card: self._remove(c))
        self._lay.insertWidget(0, card)
        self._cards.insert(0, card)
        while len(self._cards) > self.limit:
            self._remove(self._cards[-1])
        self.setVisible(True)
        self.updateGeometry()
        return card

    def resolve(self, *keys: str) -> None:
        """The cause of these subjects' notices is gone: take their cards away."""
        for key in keys:
            card = self._by_key.get(key)
            if card is not None:
                self._remove(card)

    def _remove(self, card: NoticeCard) -> None:
        if card in self._cards:
            self._cards.remove(card)
            self._lay.removeWidget(card)
            card.hide()
            card.deleteLater()
        self._by_key = {k: c for k, c in self._by_key.items() if c is not card}
        self.setVisible(bool(self._cards))
        self.updateGeometry()

    def clear(self) -> None:
        for card in list(self._cards):
            self._remove(card)

    @property
    def cards(self) -> list[NoticeCard]:
        return list(self._cards)
