"""The side panels are usable in the windows newcomers have (1024x700, 1366x800): no tab
of the left column scrolls sideways, the Knowledge tab's own tabs show their whole titles,
and its tables, the Models list and the Parse tab's list fit their width."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QSize
from PySide6.QtWidgets import QAbstractScrollArea, QScrollArea

from app.gui.window import MainWindow
from widgets.model_manager import ModelRow

from .fakes import FixedParser
from .samples import sample_parse, sample_screen


@pytest.fixture
def win(qtbot):
    w = MainWindow(None, discover=False, parser_factory=FixedParser, live_parse=False)
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    yield w
    w.close()


def _docks(w: MainWindow) -> list:
    return [w.inspector_dock, w.timeline_dock, w.episodes_dock, w.macro_dock, w.knowledge_dock, w.layers_dock,
            w.models.dock, w.mcp.dock]


@pytest.mark.parametrize("size", [QSize(1024, 700), QSize(1366, 800)])
def test_no_left_tab_scrolls_sideways(win, qtbot, size):
    w = win
    w.resize(size)
    qtbot.waitUntil(lambda: w.size() == size, timeout=3000)
    w.view.set_frame(sample_screen().image)
    w.show_parse(sample_parse())
    long_goal = "Turn on airplane mode, then open the Clock app and set an alarm for seven in the morning"
    w.episodes_panel.set_episodes([{"id": "ep1", "goal": long_goal, "status": "succeeded", "steps": 12,
                                    "started_at": 1_790_000_000.0}])
    w.models.panel.set_models([ModelRow("qwen2.5-coder-0.5b-instruct-q4-long-name", "builtin", "",
                                        "built-in, small and demo-grade: expect many wrong steps")])
    for dock in _docks(w):
        dock.show()
        dock.raise_()
        qtbot.wait(50)
        if dock is w.inspector_dock:
            w.show_parse(sample_parse())  # filled while shown: a new model must keep to the width
            qtbot.wait(50)
            assert w.inspector.tree.isColumnHidden(5), "the bounds are left out in a narrow column"
        scroll = dock.widget()
        if isinstance(scroll, QScrollArea):
            assert not scroll.horizontalScrollBar().isVisible(), f"{dock.windowTitle()} scrolls sideways at {size}"
        for view in dock.findChildren(QAbstractScrollArea):
            if view.isVisible() and not isinstance(view, QScrollArea) and view.objectName() != "screenView":
                assert not view.horizontalScrollBar().isVisible(), \
                    f"{type(view).__name__} in {dock.windowTitle()} scrolls sideways at {size}"


@pytest.mark.parametrize("size", [QSize(1024, 700), QSize(1366, 800)])
def test_the_knowledge_tabs_show_their_whole_titles(win, qtbot, size):
    w = win
    w.resize(size)
    qtbot.waitUntil(lambda: w.size() == size, timeout=3000)
    w.knowledge_dock.show()
    w.knowledge_dock.raise_()
    w.knowledge_panel.setMinimumHeight(2 * size.height())  # a tall map: the column's scroll bar takes room too
    qtbot.wait(50)
    assert w.knowledge_dock.widget().verticalScrollBar().isVisible()
    tabs = w.knowledge_panel.tabs
    column = w.knowledge_panel.width()
    rows = set()
    for i in range(tabs.count()):
        button = tabs.tabButton(i)
        assert button.isVisible() and button.width() >= button.sizeHint().width(), tabs.tabText(i)
        right = button.mapTo(w.knowledge_panel, button.rect().topRight()).x()
        assert right < column, f"{tabs.tabText(i)} goes past the column at {size}"
        rows.add(button.y())
        assert tabs.tabToolTip(i).startswith(("App maps", "Decision memory", "Task repository", "Context library",
                                               "Interaction graph"))
    assert len(rows) <= 2, "the titles wrap onto two rows at most"
    tabs.tabButton(1).click()
    assert tabs.currentWidget() is w.knowledge_panel.memory


@pytest.mark.parametrize("size", [QSize(1024, 700), QSize(1366, 800)])
def test_a_proposal_card_with_long_lines_never_scrolls_sideways(win, qtbot, size):
    from agent.types import Action, ActionType, Proposal

    w = win
    w.resize(size)
    qtbot.waitUntil(lambda: w.size() == size, timeout=3000)
    why = ("The goal asks for 'weather', 'forecast' in Clock, and no screen of Clock (nor of any other "
           "explored app) shows it: this app does not seem to offer it.")
    w.proposal_card.set_proposal(Proposal(Action.simple(ActionType.IMPOSSIBLE), rationale=why,
                                          planner="zeroshot-+map", evidence=(f"checked on the maps: {why}",)))
    qtbot.wait(50)
    scroll = w.proposal_card.parent()
    while scroll is not None and not isinstance(scroll, QScrollArea):
        scroll = scroll.parent()
    assert scroll is not None
    assert not scroll.horizontalScrollBar().isVisible(), f"the proposal card scrolls sideways at {size}"
