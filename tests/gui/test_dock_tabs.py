"""The left column's tabs are readable at the smallest and at a large window size: every
tab shows its whole title (none is elided to "P…", "S…") and all of them fit."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QTabBar

from app.gui.window import MainWindow

from .fakes import FixedParser


@pytest.mark.parametrize("size", [(1024, 700), (1600, 1000)])
def test_every_left_dock_tab_shows_its_whole_title(qtbot, size):
    win = MainWindow(None, discover=False, parser_factory=FixedParser, live_parse=False)
    qtbot.addWidget(win)
    win.show()
    win.resize(*size)
    qtbot.waitExposed(win)
    qtbot.wait(50)
    bars = [b for b in win.findChildren(QTabBar) if b.parent() is win and b.isVisible()]
    left = next(b for b in bars if "Steps" in [b.tabText(i) for i in range(b.count())])
    titles = [left.tabText(i) for i in range(left.count())]
    assert {"Parse", "Steps", "Episodes", "Macros", "Knowledge", "Layers"} <= set(titles)
    vertical = left.shape() in (QTabBar.Shape.RoundedWest, QTabBar.Shape.RoundedEast)
    for i in range(left.count()):
        rect = left.tabRect(i)
        length = rect.height() if vertical else rect.width()
        assert length >= left.fontMetrics().horizontalAdvance(titles[i]), f"{titles[i]!r} is cut"
        assert left.rect().contains(rect), f"{titles[i]!r} is scrolled out of sight"
    win.close()
