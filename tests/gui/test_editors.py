"""Specifications for the action editor, timeline, task panel, macro library, settings dialog,
notifications and layer controls."""

from __future__ import annotations

from enum import Enum
from typing import Literal

import pytest
from pydantic import BaseModel, Field
from PySide6.QtCore import Qt

from agent.macros.types import Macro, MacroStep
from agent.types import (
    Action,
    ActionType,
    Decision,
    DecisionKind,
    Step,
    StepOutcome,
    Target,
)
from app.compose import PLANNERS
from vision.geometry import Point
from widgets.action_editor import ActionEditor
from widgets.layer_panel import LayerPanel
from widgets.macro_panel import MacroLibraryPanel
from widgets.notifications import Level, NotificationArea
from widgets.overlays import Layer
from widgets.settings_dialog import SettingsDialog
from widgets.task_panel import RunState, TaskPanel
from widgets.timeline import StepTimeline

from .samples import sample_image, sample_proposal


# ---- action editor -------------------------------------------------------------------
def test_editor_round_trips_a_tap(qtbot):
    ed = ActionEditor(Action.tap(100, 200, target=Target(element_id="e2", description="Wi-Fi switch")))
    qtbot.addWidget(ed)
    a = ed.build_action()
    assert a.type is ActionType.TAP and a.touch == Point(100, 200)
    assert a.target.description == "Wi-Fi switch"


def test_editor_pick_on_mirror_sets_the_touch_point(qtbot):
    ed = ActionEditor(Action.tap(1, 1))
    qtbot.addWidget(ed)
    with qtbot.waitSignal(ed.pickRequested) as sig:
        qtbot.mouseClick(ed.pick_touch, Qt.MouseButton.LeftButton)
    assert sig.args == ["touch"] and ed.picking == "touch"
    ed.set_picked_point(Point(540, 700), Target(element_id="e3", description="Bluetooth"))
    a = ed.build_action()
    assert a.touch == Point(540, 700) and a.target.element_id == "e3"
    assert ed.picking == ""


def test_editor_refuses_to_accept_an_invalid_action_and_says_why(qtbot):
    ed = ActionEditor(Action.type_text("hi"))
    qtbot.addWidget(ed)
    ed.text.setText("")
    with qtbot.assertNotEmitted(ed.actionAccepted):
        ed._try_accept()
    assert "type needs non-empty text" in ed.error.text()


def test_editor_builds_a_swipe_with_its_finger_direction(qtbot):
    ed = ActionEditor()
    qtbot.addWidget(ed)
    ed.type_combo.setCurrentIndex(ed.type_combo.findData(ActionType.SWIPE))
    ed.touch_x.setValue(540)
    ed.touch_y.setValue(1800)
    ed.lift_x.setValue(540)
    ed.lift_y.setValue(600)
    with qtbot.waitSignal(ed.actionAccepted) as sig:
        ed._try_accept()
    assert sig.args[0].finger_direction().value == "up"


def test_editor_shows_only_the_fields_of_the_chosen_type(qtbot):
    ed = ActionEditor(Action.open_app("Clock"))
    qtbot.addWidget(ed)
    assert ed.form.isRowVisible(ed.app) and not ed.form.isRowVisible(ed.text)
    assert ed.build_action().app == "Clock"


# ---- timeline ------------------------------------------------------------------------
def _steps():
    p = sample_proposal()
    return [
        Step(0, proposal=p, decision=Decision(DecisionKind.APPROVE), executed=p.action),
        Step(1, proposal=p, decision=Decision(DecisionKind.REJECT, feedback="wrong one"), outcome=StepOutcome.REJECTED),
    ]


def test_timeline_lists_steps_and_selecting_one_shows_prompts_and_replies(qtbot):
    tl = StepTimeline()
    qtbot.addWidget(tl)
    s0, s1 = _steps()
    tl.add_step(s0, sample_image(216, 480))
    tl.add_step(s1)
    assert tl.count() == 2
    assert "rejected" in tl.list.item(1).text() and "[reject]" in tl.list.item(1).text()
    with qtbot.waitSignal(tl.stepSelected) as sig:
        tl.select_step(1)
    assert sig.args == ["", 1]  # the default section, step 1
    assert "wrong one" in tl.details.toPlainText()
    assert "PROMPT TEXT: turn wifi off" in tl.prompts.toPlainText()
    assert '{"action": "tap"}' in tl.replies.toPlainText()


def test_timeline_replaces_a_step_with_the_same_index(qtbot):
    tl = StepTimeline()
    qtbot.addWidget(tl)
    s0, _ = _steps()
    tl.add_step(s0)
    tl.add_step(Step(0, outcome=StepOutcome.ERROR, error="device gone"))
    assert tl.count() == 1 and "error" in tl.list.item(0).text()


# ---- task panel ----------------------------------------------------------------------
def test_task_panel_offers_all_nine_planners_and_emits_the_request(qtbot):
    tp = TaskPanel(planners=[(p.name, p.label) for p in PLANNERS])
    qtbot.addWidget(tp)
    ids = [tp.planner.itemData(i) for i in range(tp.planner.count())]
    assert ids == [p.name for p in PLANNERS]
    assert {"zeroshot-", "zeroshot+", "cotsc-", "cotsc+", "react-", "react+"} <= set(ids)
    tp.set_models(["llama3.2:3b", "qwen2.5:7b"], current="qwen2.5:7b")
    tp.goal.setPlainText("Turn off Wi-Fi")
    with qtbot.waitSignal(tp.startRequested) as sig:
        qtbot.mouseClick(tp.start, Qt.MouseButton.LeftButton)
    req = sig.args[0]
    assert (req.goal, req.model, req.autonomy) == ("Turn off Wi-Fi", "qwen2.5:7b", "approve")


def test_task_panel_needs_a_goal(qtbot):
    tp = TaskPanel()
    qtbot.addWidget(tp)
    tp.set_models(["m"])
    with qtbot.assertNotEmitted(tp.startRequested):
        qtbot.mouseClick(tp.start, Qt.MouseButton.LeftButton)
    assert "goal" in tp.error.text()


def test_task_panel_buttons_follow_the_run_state(qtbot):
    tp = TaskPanel()
    qtbot.addWidget(tp)
    assert tp.start.isEnabled() and not tp.abort.isEnabled()
    tp.set_state(RunState.RUNNING)
    assert not tp.start.isEnabled() and tp.abort.isEnabled() and not tp.step.isEnabled()
    with qtbot.waitSignal(tp.pauseRequested) as sig:
        tp.pause.setChecked(True)
    assert sig.args == [True]
    tp.set_state(RunState.PAUSED)
    assert tp.step.isEnabled()
    tp.set_state(RunState.IDLE)
    assert not tp.pause.isChecked()


# ---- macro library -------------------------------------------------------------------
def _macros():
    step = MacroStep(Action.tap(1, 1), description="tap the Wi-Fi switch in Network")
    return [Macro("wifi off", steps=(step,)), Macro("alarm", parameters=("time",))]


def test_macro_panel_lists_macros_and_runs_the_selected_one(qtbot):
    mp = MacroLibraryPanel()
    qtbot.addWidget(mp)
    ms = _macros()
    mp.set_macros(ms)
    assert mp.list.count() == 2 and not mp.run.isEnabled()
    mp.select(ms[0].id)
    assert "wifi off" in mp.details.text()
    assert mp.steps.item(0).text() == "1. tap the Wi-Fi switch in Network"
    with qtbot.waitSignal(mp.runRequested) as sig:
        qtbot.mouseClick(mp.run_approve, Qt.MouseButton.LeftButton)
    assert sig.args == [ms[0].id, True]


def test_macro_record_button_toggles_recording(qtbot):
    mp = MacroLibraryPanel()
    qtbot.addWidget(mp)
    with qtbot.waitSignal(mp.recordToggled) as sig:
        qtbot.mouseClick(mp.record, Qt.MouseButton.LeftButton)
    assert sig.args == [True] and "Stop" in mp.record.text()
    mp.set_recording(True, steps=3)
    assert "3 steps" in mp.record.text()


def test_macro_edit_dialog_bumps_the_version_and_parses_parameters(qtbot):
    mp = MacroLibraryPanel()
    qtbot.addWidget(mp)
    ms = _macros()
    mp.set_macros(ms)
    mp.select(ms[1].id)
    mp._on_edit()
    dlg = mp._dialog
    dlg.parameters.setText("time, label")
    with qtbot.waitSignal(mp.macroEdited) as sig:
        dlg._ok()
    edited = sig.args[0]
    assert edited.parameters == ("time", "label") and edited.version == 2 and edited.id == ms[1].id


# ---- settings dialog -----------------------------------------------------------------
class Mode(str, Enum):
    FAST = "fast"
    GOOD = "good"


class Inner(BaseModel):
    url: str = "http://127.0.0.1:11434"
    timeout_s: float = Field(30.0, gt=0)


class Sample(BaseModel):
    name: str = "tapwise"
    retries: int = Field(3, ge=0, description="how many times to retry")
    verbose: bool = False
    mode: Mode = Mode.FAST
    theme: Literal["light", "dark"] = "light"
    note: str | None = None
    ollama: Inner = Inner()


def test_settings_dialog_makes_an_editor_per_field_and_returns_a_validated_model(qtbot):
    dlg = SettingsDialog(Sample())
    qtbot.addWidget(dlg)
    dlg.editor("retries").setValue(5)
    dlg.editor("verbose").setChecked(True)
    dlg.editor("mode").setCurrentIndex(1)
    dlg.editor("theme").setCurrentIndex(1)
    dlg.editor("ollama.url").setText("http://host:1")
    dlg._ok()
    m = dlg.result_model()
    assert m == Sample(retries=5, verbose=True, mode=Mode.GOOD, theme="dark", ollama=Inner(url="http://host:1"))


def test_settings_dialog_shows_the_validation_error_and_stays_open(qtbot):
    dlg = SettingsDialog(Sample())
    qtbot.addWidget(dlg)
    dlg.editor("ollama.timeout_s").setValue(0)
    dlg._ok()
    assert dlg.result_model() is None
    assert "ollama.timeout_s" in dlg.error.text()


# ---- notifications -------------------------------------------------------------------
def test_errors_stay_with_details_one_click_away_and_can_be_dismissed(qtbot):
    area = NotificationArea(info_timeout_ms=0)
    qtbot.addWidget(area)
    card = area.notify(Level.ERROR, "Device disconnected", "Traceback: adb said bye")
    assert not area.isHidden()
    assert not card.detail.isVisibleTo(card)
    qtbot.mouseClick(card.details_button, Qt.MouseButton.LeftButton)
    assert card.detail.isVisibleTo(card) and "adb said bye" in card.detail.toPlainText()
    qtbot.mouseClick(card.close_button, Qt.MouseButton.LeftButton)
    assert area.cards == [] and len(area.history) == 1


def test_info_notices_expire_and_the_stack_is_bounded(qtbot):
    area = NotificationArea(limit=2, info_timeout_ms=50)
    qtbot.addWidget(area)
    area.notify(Level.WARNING, "a")
    area.notify(Level.WARNING, "b")
    area.notify(Level.INFO, "c")
    assert [c.notice.message for c in area.cards] == ["c", "b"]
    qtbot.waitUntil(lambda: [c.notice.message for c in area.cards] == ["b"], timeout=2000)


# ---- layer controls ------------------------------------------------------------------
def test_layer_panel_emits_style_changes(qtbot):
    lp = LayerPanel()
    qtbot.addWidget(lp)
    with qtbot.waitSignal(lp.styleChanged) as sig:
        lp.checks[Layer.MARKS].setChecked(True)
    assert sig.args[0] is Layer.MARKS and sig.args[1].visible
    with qtbot.waitSignal(lp.styleChanged) as sig:
        lp.sliders[Layer.BLOCKS].setValue(30)
    assert sig.args[1].opacity == pytest.approx(0.3)
    lp.set_color(Layer.BLOCKS, "#123456")
    assert lp.styles()[Layer.BLOCKS].color == "#123456"


# ---- knowledge browser ---------------------------------------------------------------
def test_knowledge_panel_lists_tasks_edits_context_and_draws_the_graph(qtbot):
    from agent.knowledge.graph import InteractionGraph, PageNode
    from agent.knowledge.types import TaskRecord
    from widgets.knowledge_panel import KnowledgePanel

    kp = KnowledgePanel()
    qtbot.addWidget(kp)
    task = TaskRecord("turn on airplane mode", ("open Settings", "tap Network & internet"), app="com.android.settings")
    graph = InteractionGraph()
    graph.nodes = {"p1": PageNode("p1", "com.android.settings", (("Network & internet", 0.5, 0.3),)),
                   "p2": PageNode("p2", "com.android.settings", (("Airplane mode", 0.5, 0.3),))}
    from collections import Counter

    graph.edges = {("p1", "text:network & internet"): Counter({"p2": 2})}
    kp.set_data([task], {"contacts": {"mom": {"phone": "555"}}, "language": "en"}, graph.picture())
    assert kp.task_table.rowCount() == 1
    kp.task_table.setCurrentCell(0, 0)
    assert "2. tap Network & internet" in kp.task_steps.toPlainText()
    with qtbot.waitSignal(kp.taskDeleteRequested) as sig:
        kp.delete_task.click()
    assert sig.args == [task.id]
    assert kp.context_paths() == ["contacts.mom.phone", "language"]
    with qtbot.waitSignal(kp.contextEdited) as sig:
        kp.context_table.item(0, 1).setText("556")
    assert sig.args == ["contacts.mom.phone", 556]
    kp.new_path.setText("home.city")
    kp.new_value.setText("Lyon")
    with qtbot.waitSignal(kp.contextEdited) as sig:
        kp.add_record.click()
    assert sig.args == ["home.city", "Lyon"]
    assert kp.graph_nodes == 2


def test_settings_dialog_edits_the_real_settings_model_and_hides_secrets(qtbot):
    from pydantic import SecretStr

    from app.settings import LLMSettings, Settings

    s = Settings(llm=LLMSettings(api_key=SecretStr("sk-123")))
    dlg = SettingsDialog(s)
    qtbot.addWidget(dlg)
    key = dlg.editor("llm.api_key")
    assert key.echoMode() == key.EchoMode.Password and key.text() == "sk-123"
    dlg.editor("llm.model").setText("qwen2.5:7b")
    dlg.editor("device.mirror_max_fps").setValue(60)
    dlg._ok()
    out = dlg.result_model()
    assert out.llm.model == "qwen2.5:7b" and out.device.mirror_max_fps == 60
    assert out.llm.api_key.get_secret_value() == "sk-123"


def test_step_details_show_where_the_step_time_went() -> None:
    from widgets.timeline import step_html

    step = Step(2, outcome=StepOutcome.EXECUTED,
                timings_ms=(("frame", 41.0), ("hierarchy", 16.7), ("parse", 3.2), ("llm", 1250.0), ("execute", 30.4)))
    html = step_html(step)
    assert "Timings" in html
    assert "frame 41 ms · hierarchy 17 ms · parse 3 ms · llm 1250 ms · execute 30 ms" in html
