"""The workbench as a user meets it day to day: Start with no model answering, one card
per kind of trouble, run history (a stored episode opened on the timeline, exported),
the action editor, the settings dialog, the goal box and the keyboard shortcuts."""

from __future__ import annotations

import json
import socket

import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QApplication

from agent.types import Action, ActionType, Decision, DecisionKind, Episode, EpisodeStatus, Step, StepOutcome
from app.gui.devices import DeviceChoice
from app.gui.window import MainWindow
from app.settings import LLMSettings, Settings
from app.storage import Store
from widgets.action_editor import ActionEditor
from widgets.notifications import Level, NotificationArea
from widgets.settings_dialog import SettingsDialog, human_label
from widgets.shortcuts import ShortcutsDialog, key_for
from widgets.task_panel import RunState

from .fakes import FixedParser, ScriptedPhone
from .samples import sample_parse, sample_proposal, sample_screen


def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens here any more
    return port


def _window(qtbot, settings=None, store=None):
    phone = ScriptedPhone()
    w = MainWindow(settings, discover=False, parser_factory=FixedParser, device_factory=lambda c, t: phone,
                   live_parse=False, store=store)
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    w.connect_device(DeviceChoice("scripted-1", "Scripted phone"))
    qtbot.waitUntil(lambda: w.view.frame is not None, timeout=5000)
    return w


# ---- Start with no model ----------------------------------------------------------------
def test_start_without_a_model_server_refuses_with_one_message_and_a_way_forward(qtbot, tmp_path):
    host = f"http://127.0.0.1:{_closed_port()}"
    settings = Settings(data_dir=tmp_path, llm=LLMSettings(ollama_host=host, model="llama3.2", timeout_s=3,
                                                           retries=0))
    w = _window(qtbot, settings)
    mirror_height = w.view.height()
    w.task_panel.set_models(["llama3.2"], current="llama3.2")
    w.task_panel.goal.setPlainText("Turn off Wi-Fi")
    for _ in range(3):
        qtbot.mouseClick(w.task_panel.start, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: w.task_panel.state is RunState.IDLE and not w.run.active, timeout=15000)
    cards = w.notifications.cards
    assert len(cards) == 1, [c.notice.message for c in cards]
    card = cards[0]
    assert host in card.notice.message and "No model answers" in card.notice.message
    assert card.count == 3 and card.repeats.text() == "×3"
    assert "ollama serve" in card.notice.detail and "Settings" in card.notice.detail
    assert card.details_button.isVisibleTo(w)
    assert w.run.driver is None and w.timeline.sections() == []  # nothing ran
    assert "No model answers" in w.task_panel.error.text()
    # the card sits above the mirror, never over the phone's screen (issue 27)
    view_rect = w.view.geometry().translated(w.view.parentWidget().mapTo(w, w.view.pos()) - w.view.pos())
    card_rect = card.geometry().translated(card.parentWidget().mapTo(w, card.pos()) - card.pos())
    assert not view_rect.intersects(card_rect) and w.view.height() <= mirror_height
    w.close()


# ---- notifications ----------------------------------------------------------------------
def test_repeated_notices_collapse_into_one_card_with_a_count(qtbot):
    area = NotificationArea(info_timeout_ms=0)
    qtbot.addWidget(area)
    for _ in range(4):
        area.notify(Level.ERROR, "Mirror: the phone stopped answering", "Traceback …", key="Mirror")
    area.notify(Level.ERROR, "Mirror: a different wording, same kind", key="Mirror")
    area.notify(Level.WARNING, "Parsing failed")
    assert [c.count for c in area.cards] == [1, 5]
    assert area.cards[1].notice.message == "Mirror: a different wording, same kind"  # the newest wording
    assert len(area.history) == 6


def test_a_long_message_shows_its_first_line_and_keeps_the_rest_in_details(qtbot):
    area = NotificationArea(info_timeout_ms=0)
    qtbot.addWidget(area)
    card = area.notify(Level.ERROR, "The agent stopped: " + "very long reason " * 40)
    assert len(card.message.text()) < 200
    assert "very long reason" in card.detail.toPlainText()
    card.details_button.click()
    assert card.detail.isVisibleTo(area)


# ---- run history ------------------------------------------------------------------------
def _stored_episode(store: Store) -> str:
    ep = Episode(goal="Turn on airplane mode", planner="zeroshot-", model="m")
    store.begin_episode(ep)
    p = sample_proposal(Action.tap(540, 660))
    store.append_step(ep.id, Step(0, parse=sample_parse(), proposal=p, decision=Decision(DecisionKind.APPROVE),
                                  executed=p.action), sample_screen())
    store.append_step(ep.id, Step(1, proposal=p, decision=Decision(DecisionKind.REJECT, feedback="wrong row"),
                                  outcome=StepOutcome.REJECTED), sample_screen())
    store.append_step(ep.id, Step(2, outcome=StepOutcome.ERROR, error="the planner's reply could not be read"))
    store.finish_episode(ep.id, EpisodeStatus.ERROR, "3 failed steps in a row")
    return ep.id


def test_a_stored_episode_opens_on_the_timeline_with_its_frames_and_reason(qtbot, tmp_path):
    store = Store(tmp_path / "t.sqlite")
    episode_id = _stored_episode(store)
    w = _window(qtbot, Settings(data_dir=tmp_path), store=store)
    w.episodes_dock.raise_()
    qtbot.waitUntil(lambda: w.episodes_panel.count() == 1, timeout=5000)
    assert "error" in w.episodes_panel.tree.topLevelItem(0).text(1)
    w.episodes_panel.select(episode_id)
    qtbot.mouseClick(w.episodes_panel.open, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: w.timeline.count(episode_id) == 3, timeout=5000)
    title = w.timeline.section_title(episode_id)
    assert "Turn on airplane mode" in title and "error" in title and "3 failed steps in a row" in title
    outcomes = [w.timeline.step(i, episode_id).outcome for i in range(3)]
    assert outcomes == [StepOutcome.EXECUTED, StepOutcome.REJECTED, StepOutcome.ERROR]
    w.timeline.select_step(1, episode_id)
    assert "wrong row" in w.timeline.details.toPlainText()
    assert "PROMPT TEXT" in w.timeline.prompts.toPlainText()  # the prompts the planner was sent
    qtbot.waitUntil(lambda: w.session.viewing.step == 1 and w.session.viewing.name == episode_id, timeout=5000)
    assert w.view.frame.shape == sample_screen().image.shape  # the stored frame, read back
    w.timeline.select_step(2, episode_id)
    assert "could not be read" in w.timeline.details.toPlainText()
    w.close()
    store.close()


def test_a_stored_episode_exports_as_json_and_as_aitw(qtbot, tmp_path):
    store = Store(tmp_path / "t.sqlite")
    episode_id = _stored_episode(store)
    w = _window(qtbot, Settings(data_dir=tmp_path), store=store)
    w.episodes.export(episode_id, "json", tmp_path / "ep.json")
    w.episodes.export(episode_id, "aitw", tmp_path / "ep-aitw.json")
    qtbot.waitUntil(lambda: (tmp_path / "ep-aitw.json").exists(), timeout=5000)
    doc = json.loads((tmp_path / "ep.json").read_text())
    assert "Turn on airplane mode" in json.dumps(doc) and "3 failed steps in a row" in json.dumps(doc)
    aitw = json.loads((tmp_path / "ep-aitw.json").read_text())
    assert aitw["format"] == "aitw" and len(aitw["episodes"][0]["steps"]) == 1  # only what reached the phone
    w.close()
    store.close()


# ---- action editor ----------------------------------------------------------------------
def test_switching_the_editor_to_tap_never_taps_the_corner(qtbot):
    ed = ActionEditor(Action.simple(ActionType.BACK))
    qtbot.addWidget(ed)
    accepted = []
    ed.actionAccepted.connect(accepted.append)
    ed.type_combo.setCurrentIndex(ed.type_combo.findData("tap"))
    ed._try_accept()
    assert accepted == [] and "needs a point" in ed.error.text()
    ed.touch_x.setValue(300)
    ed.touch_y.setValue(500)
    ed._try_accept()
    assert accepted and accepted[0].touch.x == 300 and accepted[0].touch.y == 500


# ---- settings dialog --------------------------------------------------------------------
def test_settings_dialog_labels_fields_in_words_and_ignores_the_wheel_on_unfocused_combos(qtbot):
    dlg = SettingsDialog(Settings())
    qtbot.addWidget(dlg)
    dlg.show()
    combo = dlg.editor("vision.use_hierarchy")
    before = combo.currentIndex()
    wheel = QWheelEvent(QPointF(5, 5), QPointF(combo.mapToGlobal(QPoint(5, 5))), QPoint(0, 0), QPoint(0, -120),
                        Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(combo, wheel)
    assert combo.currentIndex() == before
    assert human_label("timeout_s") == "Timeout (seconds)"
    assert human_label("ocr_min_confidence") == "OCR min confidence"
    texts = {label.text() for label in dlg.findChildren(type(dlg.error))}
    assert "ollama_host" not in texts and not any("_" in t for t in texts if t)


# ---- goal box and shortcuts --------------------------------------------------------------
def test_tab_in_the_goal_box_moves_on_and_types_no_tab(qtbot):
    w = _window(qtbot)
    w.task_panel.goal.setFocus()
    qtbot.keyClicks(w.task_panel.goal, "Turn off Wi-Fi")
    qtbot.keyClick(w.task_panel.goal, Qt.Key.Key_Tab)
    assert "\t" not in w.task_panel.goal.toPlainText()
    assert not w.task_panel.goal.hasFocus()
    w.close()


def test_shortcuts_are_listed_and_start_has_one(qtbot):
    w = _window(qtbot)
    assert key_for("Start the task") in w.task_panel.start.toolTip()
    dlg = w.show_shortcuts()
    assert isinstance(dlg, ShortcutsDialog)
    keys = {dlg.table.item(r, 2).text() for r in range(dlg.table.rowCount())}
    assert {key_for("Start the task"), "Ctrl+Return", "F1"} <= keys
    dlg.close()
    started = []
    w.task_panel.startRequested.connect(started.append)
    w.task_panel.set_models(["m"])
    w.task_panel.goal.setPlainText("Turn off Wi-Fi")
    w.activateWindow()
    qtbot.keyClick(w, Qt.Key.Key_F5)
    assert started and started[0].goal == "Turn off Wi-Fi"
    qtbot.waitUntil(lambda: not w.run.active, timeout=15000)
    w.close()


@pytest.mark.parametrize("width,height", [(1024, 700), (1600, 1000)])
def test_the_mirror_keeps_a_useful_share_of_the_window(qtbot, width, height):
    w = _window(qtbot)
    w.resize(width, height)
    qtbot.waitUntil(lambda: w.width() == width, timeout=2000)
    QApplication.processEvents()
    assert w.view.width() >= 0.3 * width and w.view.height() >= 0.75 * height
    w.close()


def test_a_restarted_window_shows_the_last_run_again(qtbot, tmp_path):
    store = Store(tmp_path / "t.sqlite")
    episode_id = _stored_episode(store)
    w = _window(qtbot, Settings(data_dir=tmp_path), store=store)
    w.episodes.open_latest()  # what a real start does after the first frame
    qtbot.waitUntil(lambda: w.timeline.count(episode_id) == 3, timeout=5000)
    assert "3 failed steps in a row" in w.timeline.section_title(episode_id)
    w.close()
    store.close()


# ---- macros on a scripted phone ----------------------------------------------------------
def _macro_window(qtbot, tmp_path, macro):
    store = Store(tmp_path / "m.sqlite")
    saved = store.save_macro(macro)
    w = _window(qtbot, Settings(data_dir=tmp_path), store=store)
    w.macros.refresh()
    qtbot.waitUntil(lambda: w.macro_panel.list.count() == 1, timeout=5000)
    w.macro_panel.select(saved.id)
    return w, store


def test_a_macro_with_a_parameter_asks_for_its_value_at_run(qtbot, tmp_path):
    from agent.macros.types import Macro, MacroStep

    macro = Macro("greet", steps=(MacroStep(Action.type_text("Hello {who}"), description="type 'Hello {who}'"),),
                  parameters=("who",))
    w, store = _macro_window(qtbot, tmp_path, macro)
    w.macro_panel.run.click()
    dialog = w.macros.dialog
    assert dialog is not None and list(dialog.fields) == ["who"]
    dialog._ok()  # empty: refused, says what is missing
    assert "who" in dialog.error.text() and dialog.isVisible()
    dialog.fields["who"].setText("Ada")
    dialog._ok()
    qtbot.waitUntil(lambda: w.macros.result is not None, timeout=10000)
    assert w.macros.result.status == "succeeded", w.macros.result
    assert ("text", "Hello Ada") in w.session.device.calls
    w.close()
    store.close()


def test_a_macro_step_is_shown_again_on_the_mirror_and_replaced(qtbot, tmp_path):
    from agent.macros.types import Macro, MacroStep
    from vision.geometry import Point

    macro = Macro("two taps", steps=(MacroStep(Action.tap(100, 100), description="tap the corner"),
                                     MacroStep(Action.simple(ActionType.BACK), description="go back")))
    w, store = _macro_window(qtbot, tmp_path, macro)
    w.macro_panel.steps.setCurrentRow(0)
    w.macro_panel.step_redemo.click()
    assert w.view.mode.value == "demonstrate"
    qtbot.mouseClick(w.view.viewport(), Qt.MouseButton.LeftButton, pos=w.view.view_pos_of(Point(600, 700)).toPoint())
    qtbot.waitUntil(lambda: "v2" in w.macro_panel.list.item(0).text(), timeout=10000)
    edited = w.macro_panel.macro(w.macro_panel.current_id())
    first = edited.steps[0].action
    assert first.type is ActionType.TAP and abs(first.touch.x - 600) <= 3 and abs(first.touch.y - 700) <= 3
    assert edited.steps[1].description == "go back"  # the other step is untouched
    assert any(c[0] == "tap" for c in w.session.device.calls)  # the shown step was done on the phone
    w.close()
    store.close()


def test_start_checks_the_model_against_what_the_server_has(tmp_path):
    from app.gui.run_start import NoModelAnswers, check_model
    from tests.agent.fake_ollama import FakeLLMServer

    with FakeLLMServer() as server:  # a real HTTP server, asked by the real Ollama client
        settings = Settings(data_dir=tmp_path, llm=LLMSettings(ollama_host=server.url, timeout_s=5, retries=0))
        check_model(settings, "fake-model")  # "fake-model:latest" is on the server
        with pytest.raises(NoModelAnswers) as missing:
            check_model(settings, "llama3.2")
        assert "llama3.2" in str(missing.value) and "fake-model:latest" in missing.value.hint
    with FakeLLMServer(models=()) as empty:
        settings = Settings(data_dir=tmp_path, llm=LLMSettings(ollama_host=empty.url, timeout_s=5, retries=0))
        with pytest.raises(NoModelAnswers) as none:
            check_model(settings, "llama3.2")
        assert "no model yet" in str(none.value) and "ollama pull llama3.2" in none.value.hint
