"""Issue 27, met the way a new user met it: notices over the phone that never went away,
a disagreement count stuck at 0, tags piled on tags, a stale overlay after a tap, a
click on the mirror that did something unsaid, and a window larger than the screen."""

from __future__ import annotations

from dataclasses import replace

import pytest
from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtWidgets import QPushButton, QTabBar

from app.gui.window import MainWindow
from vision.geometry import Point, Rect
from vision.types import Disagreement, ScreenParse, StageTiming
from widgets.notifications import Level, NotificationArea
from widgets.overlays import Layer, LayerStyle
from widgets.parse_inspector import ParseInspector
from widgets.screen_view import ScreenView, ViewMode

from .fakes import ScriptedPhone, window_on
from .samples import sample_image, sample_parse


def _disagreeing_parse() -> ScreenParse:
    return replace(sample_parse(), disagreements=(
        Disagreement("only_on_screen", Rect(40, 1200, 700, 1280), "the screen shows 'Terms apply'; no tree node has these words"),
        Disagreement("only_in_tree", Rect(40, 600, 1040, 800), "the tree says 'Bluetooth' here; the screen shows no words there", "e3"),
    ))


class DisagreeingParser:
    def __init__(self) -> None:
        self.calls = 0

    def parse(self, screen, *args, **kwargs) -> ScreenParse:
        self.calls += 1
        return _disagreeing_parse()


@pytest.fixture
def phone():
    return ScriptedPhone()


@pytest.fixture
def win(qtbot, phone):
    w = window_on(qtbot, phone, DisagreeingParser, size=(1560, 960), ready=lambda w: w.inspector.parse is not None)
    yield w
    w.close()


def _in_window(w: MainWindow, widget) -> QRect:
    return QRect(widget.mapTo(w, QPoint(0, 0)), widget.size())


# ---- Messages -----------------------------------------------------------------------------
def test_notices_never_cover_the_mirror_and_the_panels_keep_their_width(win, qtbot):
    docks = (win.inspector_dock.width(), win.agent_dock.width())
    win.notify(Level.ERROR, "The built-in model did not start", "llama-server exited", key="models")
    win.notify(Level.WARNING, "No model list from the LLM server: connection refused " + "and more words " * 30,
               key="model-list")
    win.notify(Level.ERROR, "No model answers at http://127.0.0.1:11434: Start needs a running model.", key="no-model")
    qtbot.wait(50)
    view = _in_window(win, win.view)
    for card in win.notifications.cards:
        assert card.isVisible() and not _in_window(win, card).intersects(view)
    # the whole phone screen is still drawn inside the mirror
    shown = win.view.mapFromScene(win.view.sceneRect()).boundingRect()
    assert win.view.viewport().rect().adjusted(-2, -2, 2, 2).contains(shown)
    assert (win.inspector_dock.width(), win.agent_dock.width()) == docks


def test_a_repeated_notice_is_one_line_with_a_count(qtbot):
    area = NotificationArea(info_timeout_ms=0)
    qtbot.addWidget(area)
    area.resize(500, 200)
    area.show()
    for _ in range(3):
        area.notify(Level.WARNING, "No model list from the LLM server: connection refused, " * 5, key="model-list")
    [card] = area.cards
    assert card.count == 3 and card.repeats.text() == "×3"
    line = card.message.fontMetrics().height()
    assert card.sizeHint().height() < 2.5 * line  # one line, not a paragraph
    assert card.message.shown_text().endswith("…")  # elided to the width, full text in its tooltip
    assert "connection refused" in card.message.toolTip()


def test_a_notice_disappears_when_its_cause_is_gone(win, qtbot):
    win.notify(Level.WARNING, "No model list from the LLM server: connection refused", key="model-list")
    win.notify(Level.ERROR, "The built-in model did not start", "exit 1", key="models")
    assert len(win.notifications.cards) == 2
    # a model server answers (the built-in model came up and the list was read again)
    win.notifications.resolve("model-list", "no-model")
    # the built-in model's newer state replaces its failure
    win.notify(Level.INFO, "Using the built-in model qwen: a small demo-grade model.", key="models")
    assert [c.notice.message for c in win.notifications.cards] == ["Using the built-in model qwen: a small demo-grade model."]


def test_the_model_list_notice_goes_once_a_model_server_answers(win, qtbot):
    """As when the built-in model comes up: the settings point at a server that answers,
    the list is read again, and the notice about the dead server goes."""
    import socket

    from app.settings import LLMSettings, Settings
    from evaluation.scripted_model import ScriptedLLMServer

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    dead = f"http://127.0.0.1:{s.getsockname()[1]}"
    s.close()
    win.session.settings = Settings(llm=LLMSettings(ollama_host=dead, model="llama3.2", timeout_s=3, retries=0))
    win.refresh_models()
    qtbot.waitUntil(lambda: any(c.notice.key == "model-list" for c in win.notifications.cards), timeout=10000)
    server = ScriptedLLMServer().start()
    try:
        win.session.settings = Settings(llm=LLMSettings(ollama_host=server.url, model="scripted-model:latest", timeout_s=5))
        win.refresh_models()
        qtbot.waitUntil(lambda: not any(c.notice.key == "model-list" for c in win.notifications.cards), timeout=10000)
        assert "scripted-model:latest" in [win.task_panel.model.itemText(i) for i in range(win.task_panel.model.count())]
    finally:
        server.stop()


# ---- Parse inspection -------------------------------------------------------------------
def test_disagreements_are_listed_and_picking_one_outlines_it_on_the_mirror(win, qtbot):
    insp = win.inspector
    assert insp.tabs.tabText(insp.tabs.indexOf(insp.disagreements)) == "Tree vs pixels (2)"
    rows = insp.disagreement_rows()
    assert rows[0][0] == "screen only" and "Terms apply" in rows[0][1]
    assert rows[1][0] == "tree only"
    assert insp.disagreements.item(0, 0).toolTip() == "on the screen, not in the accessibility tree"
    insp.select_disagreement(0)
    assert win.view._selected_item.rect == Rect(40, 1200, 700, 1280)
    insp.select_disagreement(1)  # tied to an element: that element is selected everywhere
    assert win.view.selected_id == "e3" and insp.selected_id() == "e3"
    # their own layer, on by default, in the layer panel
    assert win.view.layer_item(Layer.DISAGREEMENTS).isVisible()
    assert win.layer_panel.checks[Layer.DISAGREEMENTS].text() == "Vision vs tree disagreements"


def _left_tabs(win: MainWindow) -> QTabBar:
    return next(b for b in win.findChildren(QTabBar) if b.parent() is win and b.isVisible()
                and "Parse" in [b.tabText(i) for i in range(b.count())])


def _open_tab(win: MainWindow, title: str) -> None:
    bar = _left_tabs(win)
    bar.setCurrentIndex([bar.tabText(i) for i in range(bar.count())].index(title))


def _wanted_now(win: MainWindow, qtbot) -> bool:
    """What the parser is told on the parse thread, where inspection parses run."""
    seen: list[bool] = []
    win.session.parse_worker.submit(win._comparison_wanted, on_done=seen.append, on_error=lambda f: seen.append(False))
    qtbot.waitUntil(lambda: len(seen) == 1, timeout=5000)
    return seen[0]


def test_the_comparison_runs_only_while_the_parse_tab_is_open_and_no_run_goes(win, qtbot):
    assert _wanted_now(win, qtbot)
    _open_tab(win, "Steps")
    qtbot.waitUntil(lambda: not _wanted_now(win, qtbot), timeout=3000)
    _open_tab(win, "Parse")
    qtbot.waitUntil(lambda: _wanted_now(win, qtbot), timeout=3000)


def test_only_inspection_parses_compare_not_a_replay_or_a_run(win, qtbot):
    import threading

    seen: list[bool] = []
    win.session.parse_worker.submit(win._comparison_wanted, on_done=seen.append, on_error=lambda f: seen.append(False))
    qtbot.waitUntil(lambda: len(seen) == 1, timeout=5000)
    other = threading.Thread(target=lambda: seen.append(win._comparison_wanted()))  # a macro replay's observation
    other.start()
    other.join()
    assert seen == [True, False]


def test_the_timings_list_total_once():
    insp = ParseInspector()
    parse = replace(sample_parse(), timings=(StageTiming("ocr", 300.0), StageTiming("detect", 40.0),
                                             StageTiming("total", 352.5)))
    insp.set_parse(parse)
    stages = [insp.timings.item(r, 0).text() for r in range(insp.timings.rowCount())]
    assert stages == ["ocr", "detect", "total"]
    assert insp.timings.item(2, 1).text() == "352.5"


def _view_with(qtbot, layers: set[Layer]) -> ScreenView:
    v = ScreenView()
    qtbot.addWidget(v)
    v.resize(540, 1200)
    v.set_frame(sample_image())
    v.flush()
    for layer in Layer:
        v.set_layer_visible(layer, layer in layers)
    v.set_parse(sample_parse())
    return v


def _overlapping(a: list, b: list) -> list:
    return [(x, y) for x in a for y in b if x.intersects(y)]


def test_set_of_marks_ids_never_cover_the_ocr_words_tags(qtbot):
    v = _view_with(qtbot, {Layer.OCR_TEXT, Layer.MARKS})
    ocr, marks = v.layer_item(Layer.OCR_TEXT).placed, v.layer_item(Layer.MARKS).placed
    assert ocr and marks
    assert _overlapping(ocr, marks) == []


def test_icon_names_never_cover_the_widget_kind_tags(qtbot):
    v = _view_with(qtbot, {Layer.WIDGETS, Layer.ICON_LABELS})
    assert v.layer_item(Layer.WIDGETS).placed == [], "kind words are off by default"
    v.set_layer_style(Layer.WIDGETS, LayerStyle(True, "#1e88e5", 0.85, tags=True))
    kinds, names = v.layer_item(Layer.WIDGETS).placed, v.layer_item(Layer.ICON_LABELS).placed
    assert kinds and names
    assert _overlapping(kinds, names) == []
    # hiding the layer below frees its places again
    v.set_layer_visible(Layer.WIDGETS, False)
    assert v.layer_item(Layer.ICON_LABELS).avoid == []


def test_the_overlay_is_hidden_as_soon_as_the_screen_changes_after_a_tap(win, phone, qtbot):
    boxes = win.view.layer_item(Layer.WIDGETS)
    assert boxes.isVisible()
    other = sample_image()
    other[600:1800] = (20, 90, 200)
    phone.next_image = other  # the tap opened another screen
    qtbot.waitUntil(lambda: not boxes.isVisible(), timeout=5000)
    assert not win.view.overlays_current
    # the new screen is parsed once it settles, and the overlay comes back for it
    qtbot.waitUntil(lambda: boxes.isVisible() and win.view.overlays_current, timeout=10000)


def test_a_blinking_cursor_or_a_clock_tick_keeps_the_overlay(win, phone, qtbot):
    boxes = win.view.layer_item(Layer.WIDGETS)
    shown = win.view.frames_shown
    blink = sample_image()
    blink[700:760, 300:306] = 0  # a text cursor
    blink[10:40, 20:90] = 255  # the clock's digits
    phone.next_image = blink
    qtbot.waitUntil(lambda: win.view.frames_shown > shown, timeout=5000)
    qtbot.wait(100)
    assert boxes.isVisible() and win.view.overlays_current


def test_the_mirror_says_what_a_click_does_and_control_mode_taps_the_phone(win, phone, qtbot):
    bar = win.mode_bar
    assert bar.isVisible() and bar.inspect_button.isChecked()
    assert "selects an element" in bar.hint.text()
    point = Point(540, 700)
    qtbot.mouseClick(win.view.viewport(), Qt.MouseButton.LeftButton, pos=win.view.view_pos_of(point).toPoint())
    assert win.view.selected_id == "e3" and not [c for c in phone.calls if c[0] == "tap"]
    qtbot.mouseClick(bar.control_button, Qt.MouseButton.LeftButton)
    assert win.view.mode is ViewMode.CONTROL and "taps the phone" in bar.hint.text()
    qtbot.mouseClick(win.view.viewport(), Qt.MouseButton.LeftButton, pos=win.view.view_pos_of(point).toPoint())
    qtbot.waitUntil(lambda: any(c[0] == "tap" for c in phone.calls), timeout=5000)
    [tap] = [c for c in phone.calls if c[0] == "tap"]
    assert abs(tap[1] - 540) <= 2 and abs(tap[2] - 700) <= 2
    bar.toggle()  # the shortcut's action: back to inspecting
    assert win.view.mode is ViewMode.INSPECT and bar.inspect_button.isChecked()


# ---- Layout and wording -------------------------------------------------------------------
def test_the_window_opens_within_the_available_screen(qtbot):
    w = MainWindow(None, discover=False, parser_factory=DisagreeingParser)
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    avail = w.screen().availableGeometry()
    assert avail.contains(w.frameGeometry()) or (w.width() <= avail.width() and w.height() <= avail.height())
    w.close()


def test_the_view_menu_lists_the_models_panel(win):
    entries = [a.text() for a in win.view_menu.actions()]
    assert win.models.dock.toggleViewAction().text() in entries
    assert any("inspect / control" in t for t in entries)


def _small_window(qtbot) -> MainWindow:
    w = MainWindow(None, discover=False, parser_factory=DisagreeingParser)
    qtbot.addWidget(w)
    w.resize(1400, 900)
    w.show()
    qtbot.waitExposed(w)
    w.resize(1024, 700)  # the user makes it small again
    qtbot.wait(50)
    return w


def _inside(widget, area) -> bool:
    """Whether ``widget`` is wholly within ``area``'s rectangle (nothing of it cut off)."""
    return area.rect().contains(QRect(widget.mapTo(area, QPoint(0, 0)), widget.size()))


def test_after_resizing_the_models_buttons_show_whole(qtbot):
    w = _small_window(qtbot)
    w.models.dock.raise_()
    qtbot.waitUntil(lambda: w.models.panel.isVisible(), timeout=2000)
    qtbot.wait(50)
    viewport = w.models.panel.parentWidget()  # the dock's scroll area's viewport
    p = w.models.panel
    for b in (p.builtin_stop, p.refresh_button, p.pull_button, p.use_button):
        assert b.width() >= b.sizeHint().width() and _inside(b, viewport), b.text()
    w.close()


def test_after_resizing_the_latent_state_text_is_not_clipped(qtbot):
    from .samples import sample_latent

    w = _small_window(qtbot)
    w.latent_panel.set_state(sample_latent(
        screen_summary="Network & internet page of com.android.settings/.SubSettings: Internet, SIMs, Airplane mode"))
    qtbot.wait(50)
    viewport = w.latent_panel.parentWidget()
    assert w.latent_panel.width() <= viewport.width()
    for label in w.latent_panel.values.values():
        assert _inside(label, w.latent_panel) and label.height() >= label.heightForWidth(label.width())
    w.close()


def test_the_knowledge_goal_column_is_readable_in_a_small_window(qtbot):
    from agent.knowledge.types import TaskRecord

    w = _small_window(qtbot)
    w.knowledge_dock.raise_()
    qtbot.waitUntil(lambda: w.knowledge_panel.isVisible(), timeout=2000)
    qtbot.wait(300)  # the tab's own refresh from the (empty) store has come and gone
    w.knowledge_panel.set_data([TaskRecord("Turn off Wi-Fi in Settings", ("open Settings", "tap Wi-Fi"),
                                           app="com.android.settings", source="demonstration")], {}, None)
    qtbot.wait(10)
    table = w.knowledge_panel.task_table
    widths = [table.columnWidth(c) for c in range(table.columnCount())]
    assert widths[0] == max(widths) and widths[0] >= 0.45 * table.viewport().width(), widths
    assert table.fontMetrics().horizontalAdvance("Turn off Wi-Fi in") <= widths[0]  # was "T…"
    assert table.item(0, 0).toolTip() == "Turn off Wi-Fi in Settings"
    w.close()


def test_counts_of_one_say_step_not_steps(qtbot):
    from agent.macros.types import Macro, MacroStep
    from agent.types import Action
    from widgets.macro_panel import MacroLibraryPanel

    panel = MacroLibraryPanel()
    qtbot.addWidget(panel)
    panel.set_macros([Macro(name="Wi-Fi off", steps=(MacroStep(Action.tap(10, 10), description="tap Wi-Fi"),))])
    assert "(v1, 1 step)" in panel.list.item(0).text()
    panel.set_recording(True, 1)
    assert panel.record.text() == "Stop recording (1 step)"


def test_no_tab_of_the_left_column_pushes_the_decision_bar_off_a_small_window(qtbot):
    w = _small_window(qtbot)
    # a tab whose content is wide (a long unbreakable path in the Knowledge note)
    w.knowledge_panel.set_data([], {}, None, note="stored in /home/someone/.local/share/tapwise/knowledge/"
                               "com.android.settings-and-a-very-long-folder-name-without-spaces/tasks.sqlite")
    w.knowledge_dock.raise_()
    qtbot.wait(100)
    for b in w.decision_bar.findChildren(QPushButton):
        if b.isVisible():
            assert _inside(b, w), b.text()
    assert w.view.width() >= 300  # the mirror keeps a useful share
    w.close()


def test_the_disagreement_list_shows_whole_in_a_small_window(qtbot):
    w = _small_window(qtbot)
    w.show_parse(_disagreeing_parse())
    qtbot.wait(50)
    insp = w.inspector
    insp.tabs.setCurrentWidget(insp.disagreements)
    qtbot.wait(20)
    visible = insp.parentWidget()  # the Parse tab's scroll area viewport
    assert _inside(insp.disagreements, visible)
    assert insp.width() <= visible.width()
    w.close()


@pytest.mark.slow
def test_on_the_files_screen_no_tag_covers_another(qtbot):
    """The Files title showed a stray "n": its OCR tag was covered by a set-of-marks id."""
    from phone.virtual.phone import VirtualPhone
    from vision.config import PipelineConfig
    from vision.pipeline import ScreenParser

    phone = VirtualPhone()
    phone.open_app("Files")
    shot = phone.screenshot(with_hierarchy=True)
    parse = ScreenParser(PipelineConfig(remember_previous=False)).parse(shot)
    v = ScreenView()
    qtbot.addWidget(v)
    v.resize(540, 1200)
    v.set_frame(shot.image)
    v.flush()
    for layer in Layer:
        v.set_layer_visible(layer, True)
    v.set_parse(parse)
    placed = [(layer, r) for layer in Layer for r in v.layer_item(layer).placed]
    clashes = [(a, b) for i, (a, ra) in enumerate(placed) for b, rb in placed[i + 1:] if ra.intersects(rb)]
    assert placed and clashes == []
