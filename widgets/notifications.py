"""Non-blocking notifications: a short stack of dismissible cards floating over a host
widget (the mirror), so they never take space from it.

One card per kind of message: a repeat of the same kind (same level and key, the key
being the message unless the caller names one) does not add a card, it bumps a count on
the existing one and moves it to the top.  Each card's detail (a traceback, a hint) is
one click away.  Info messages fade out on their own; errors stay until dismissed.
Display only; no I/O.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from enum import StrEnum

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
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
        self.message = QLabel()
        self.message.setWordWrap(True)
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
        # the message gets the card's whole width (the mirror may be narrow); the count
        # and the buttons sit on the line below it
        top = QHBoxLayout()
        top.addWidget(glyph, 0, Qt.AlignmentFlag.AlignTop)
        top.addWidget(self.message, 1)
        top.addWidget(close, 0, Qt.AlignmentFlag.AlignTop)
        actions = QHBoxLayout()
        actions.addStretch(1)
        actions.addWidget(self.repeats)
        actions.addWidget(self.details_button)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 4, 6, 4)
        lay.setSpacing(2)
        lay.addLayout(top)
        lay.addLayout(actions)
        lay.addWidget(self.detail)
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
        self.message.setToolTip(notice.message if face != notice.message else "")
        detail = "\n\n".join(p for p in (extra, notice.detail) if p)
        self.detail.setPlainText(detail)
        self.details_button.setVisible(bool(detail))

    def repeat(self, notice: Notice) -> None:
        self.count += 1
        self.show_notice(notice)
        self.repeats.setText(f"×{self.count}")
        self.repeats.setToolTip(f"This happened {self.count} times")
        self.repeats.show()


class NotificationArea(QWidget):
    """A vertical stack of notices, newest on top, at most ``limit`` cards.

    ``float_over(host)`` makes the area a child of ``host`` drawn over its top edge
    (at most ``max_height_ratio`` of its height) instead of a widget in a layout.
    """

    def __init__(self, parent: QWidget | None = None, limit: int = 3, info_timeout_ms: int = 6000,
                 max_height_ratio: float = 0.45) -> None:
        super().__init__(parent)
        self.limit = limit
        self.info_timeout_ms = info_timeout_ms
        self.max_height_ratio = max_height_ratio
        self._lay = QVBoxLayout(self)
        self._lay.setContentsMargins(0, 0, 0, 0)
        self._lay.setAlignment(Qt.AlignmentFlag.AlignTop)
        self._cards: list[NoticeCard] = []
        self._by_key: dict[tuple[Level, str], NoticeCard] = {}
        self.history: list[Notice] = []
        self._host: QWidget | None = None
        self.setVisible(False)

    # ---- floating over a host ------------------------------------------------------------
    def float_over(self, host: QWidget) -> None:
        self.setParent(host)
        self._host = host
        host.installEventFilter(self)
        self._place()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self._host and event.type() in (QEvent.Type.Resize, QEvent.Type.Show):
            self._place()
        return False

    def _place(self) -> None:
        host = self._host
        if host is None:
            return
        margin = 8
        width = max(100, host.width() - 2 * margin)
        self.setFixedWidth(width)
        # word-wrapped messages: each card gets the height it needs at this width
        wanted = 0
        for card in self._cards:
            h = card.heightForWidth(width) if card.hasHeightForWidth() else card.sizeHint().height()
            card.setFixedHeight(max(h, card.minimumSizeHint().height()))
            wanted += card.height() + self._lay.spacing()
        height = min(wanted, int(host.height() * self.max_height_ratio))
        self.setGeometry(margin, margin, width, max(0, height))
        self.raise_()

    # ---- notices --------------------------------------------------------------------------
    def notify(self, level: Level | str, message: str, detail: str = "", key: str = "") -> NoticeCard:
        notice = Notice(Level(level), message, detail, key or message)
        self.history.append(notice)
        card = self._by_key.get((notice.level, notice.key))
        if card is not None and card in self._cards:
            card.repeat(notice)
            self._cards.remove(card)
            self._lay.removeWidget(card)
        else:
            card = NoticeCard(notice, self)
            card.dismissed.connect(lambda c=card: self._remove(c))
            card.resized.connect(self._place)
            self._by_key[(notice.level, notice.key)] = card
            if notice.level is Level.INFO and self.info_timeout_ms > 0:
                QTimer.singleShot(self.info_timeout_ms, card, lambda c=card: self._remove(c))
        self._lay.insertWidget(0, card)
        self._cards.insert(0, card)
        while len(self._cards) > self.limit:
            self._remove(self._cards[-1])
        self.setVisible(True)
        self._place()
        return card

    def _remove(self, card: NoticeCard) -> None:
        if card in self._cards:
            self._cards.remove(card)
            self._by_key = {k: c for k, c in self._by_key.items() if c is not card}
            card.hide()
            card.deleteLater()
        self.setVisible(bool(self._cards))
        self._place()

    def clear(self) -> None:
        for card in list(self._cards):
            self._remove(card)

    @property
    def cards(self) -> list[NoticeCard]:
        return list(self._cards)
