"""Tabs whose titles wrap onto a second row when the column is narrow.

``QTabBar`` keeps its tabs on one row and, when they do not fit, elides the titles or
scrolls them sideways; in a 1024x700 window's side column five titles do not fit. Here
the titles are buttons in a flow that wraps, above a stack of pages. The part of the
``QTabWidget`` interface the panels use is kept (``addTab``, ``setCurrentWidget``,
``currentChanged``, ``tabText``, ``setTabToolTip``, ...).
"""
from __future__ import annotations

from PySide6.QtCore import QPoint, QRect, QSize, Qt, Signal
from PySide6.QtWidgets import (
    QButtonGroup,
    QLayout,
    QLayoutItem,
    QSizePolicy,
    QStackedWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

_TAB_STYLE = (
    "QToolButton { padding: 1px 4px; border: 1px solid #b0b0b0; border-radius: 3px; background: #e8e8e8; }"
    " QToolButton:checked { background: palette(base); border-color: #3a7bd5; font-weight: bold; }"
    " QToolButton:hover:!checked { background: #f2f2f2; }")


class FlowLayout(QLayout):
    """Items left to right, on as many rows as the width needs."""

    def __init__(self, parent: QWidget | None = None, spacing: int = 3) -> None:
        super().__init__(parent)
        self._items: list[QLayoutItem] = []
        self._gap = spacing
        self.setContentsMargins(0, 0, 0, 0)

    def addItem(self, item: QLayoutItem) -> None:
        self._items.append(item)

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, index: int) -> QLayoutItem | None:
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index: int) -> QLayoutItem | None:
        return self._items.pop(index) if 0 <= index < len(self._items) else None

    def expandingDirections(self) -> Qt.Orientation:
        return Qt.Orientation(0)

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        return self._place(QRect(0, 0, width, 0), move=False)

    def setGeometry(self, rect: QRect) -> None:
        super().setGeometry(rect)
        self._place(rect, move=True)

    def sizeHint(self) -> QSize:
        return self.minimumSize()

    def minimumSize(self) -> QSize:
        size = QSize()
        for item in self._items:
            size = size.expandedTo(item.minimumSize())
        m = self.contentsMargins()
        return size + QSize(m.left() + m.right(), m.top() + m.bottom())

    def _place(self, rect: QRect, move: bool) -> int:
        m = self.contentsMargins()
        area = rect.adjusted(m.left(), m.top(), -m.right(), -m.bottom())
        x, y, row_h = area.x(), area.y(), 0
        for item in self._items:
            hint = item.sizeHint()
            if x > area.x() and x + hint.width() > area.right() + 1:
                x, y, row_h = area.x(), y + row_h + self._gap, 0
            if move:
                item.setGeometry(QRect(QPoint(x, y), hint))
            x += hint.width() + self._gap
            row_h = max(row_h, hint.height())
        return y + row_h - rect.y() + m.bottom()


class WrapTabs(QWidget):
    """A row (or rows) of tab buttons over a stack of pages."""

    currentChanged = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.bar = QWidget()
        self.bar.setObjectName("wrapTabBar")
        self.bar.setStyleSheet(_TAB_STYLE)
        policy = QSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        policy.setHeightForWidth(True)
        self.bar.setSizePolicy(policy)
        self._flow = FlowLayout(self.bar)
        self._group = QButtonGroup(self)
        self._group.setExclusive(True)
        self._buttons: list[QToolButton] = []
        self.stack = QStackedWidget()
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(3)
        lay.addWidget(self.bar)
        lay.addWidget(self.stack, 1)
        self._group.idClicked.connect(self.setCurrentIndex)
        self.stack.currentChanged.connect(self._changed)

    # ---- the QTabWidget calls the panels use -------------------------------------------
    def addTab(self, page: QWidget, title: str) -> int:
        i = self.stack.addWidget(page)
        button = QToolButton()
        button.setText(title)
        button.setCheckable(True)
        button.setChecked(i == self.stack.currentIndex())
        self._group.addButton(button, i)
        font = button.font()
        font.setPointSizeF(font.pointSizeF() * 0.9)
        button.setFont(font)
        self._flow.addWidget(button)
        self._buttons.append(button)
        return i

    def count(self) -> int:
        return self.stack.count()

    def tabText(self, i: int) -> str:
        return self._buttons[i].text()

    def setTabText(self, i: int, text: str) -> None:
        self._buttons[i].setText(text)
        self.bar.updateGeometry()

    def tabToolTip(self, i: int) -> str:
        return self._buttons[i].toolTip()

    def setTabToolTip(self, i: int, text: str) -> None:
        self._buttons[i].setToolTip(text)

    def tabButton(self, i: int) -> QToolButton:
        return self._buttons[i]

    def widget(self, i: int) -> QWidget | None:
        return self.stack.widget(i)

    def indexOf(self, page: QWidget) -> int:
        return self.stack.indexOf(page)

    def currentIndex(self) -> int:
        return self.stack.currentIndex()

    def currentWidget(self) -> QWidget | None:
        return self.stack.currentWidget()

    def setCurrentIndex(self, i: int) -> None:
        self.stack.setCurrentIndex(i)

    def setCurrentWidget(self, page: QWidget) -> None:
        self.stack.setCurrentWidget(page)

    def _changed(self, i: int) -> None:
        if 0 <= i < len(self._buttons):
            self._buttons[i].setChecked(True)
        self.currentChanged.emit(i)
