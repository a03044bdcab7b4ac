"""Supervision that compounds, in the window (issue 41).

The window runs on the virtual phone with the scripted model over real HTTP.  First run of
"Turn on airplane mode": approve "Open Settings", reject "Display" with a reason, edit "Apps"
into "Network & internet" (picked on the mirror), demonstrate the Airplane mode switch on
the mirror: the run succeeds.  Second run of the same goal: every step is proposed from memory (the card says
"From memory: you approved this on …"), the model hears nothing, the Steps tab marks the
steps "from memory" and the run's header says it made no model call.  The Knowledge tab's
memory list shows the decisions per app, and "Forget" deletes one.
"""

from __future__ import annotations

import pytest

pytest.importorskip("phone.virtual.phone", reason="needs the virtual phone")

from agent.types import DecisionKind, EpisodeStatus
from phone.virtual.tasks import load_tasks
from tests.agent.fake_ollama import FakeLLMServer
from widgets.task_panel import RunState

from .e2e_support import AIRPLANE_SWITCH, NETWORK_ROW, click_mirror, make_settings, open_window
from .test_supervised_journey import _answered
from .test_supervised_journey import _next_question as _question

AIRPLANE = next(t for t in load_tasks() if t.id == "settings.airplane_on")


def _start(win, qtbot):
    AIRPLANE.setup(win.session.device)
    qtbot.waitUntil(lambda: win.task_panel.state is RunState.IDLE, timeout=10000)
    win.task_panel.goal.setPlainText("Turn on airplane mode")
    win.task_panel.start.click()


def _done(win, qtbot):
    qtbot.waitUntil(lambda: win.run.driver is None and win.task_panel.state is RunState.IDLE, timeout=30000)
    assert win.run.result.status is EpisodeStatus.SUCCEEDED


@pytest.mark.slow
def test_what_the_user_decided_is_proposed_from_memory_the_next_time(qtbot, tmp_path):
    script = ("open Settings", "tap Display", "tap Apps", "tap Battery")
    with FakeLLMServer().on("", *script) as server:
        settings = make_settings(tmp_path, server.url, virtual_phone="window")
        win = open_window(settings, qtbot)
        try:
            win.task_panel.set_models(["fake-model:latest"], current="fake-model:latest")
            win.task_panel.planner.setCurrentIndex(win.task_panel.planner.findData("zeroshot-"))
            bar, card = win.decision_bar, win.proposal_card
            _start(win, qtbot)
            assert _question(qtbot, win).action.describe() == "open Settings"
            bar.trigger(DecisionKind.APPROVE)
            _answered(qtbot, win)
            assert _question(qtbot, win).action.describe().startswith("tap Display")
            bar.feedback.setText("airplane mode is under Network & internet")
            bar.trigger(DecisionKind.REJECT)
            _answered(qtbot, win)
            assert _question(qtbot, win).action.describe().startswith("tap Apps")
            bar.trigger(DecisionKind.EDIT)  # edited into a tap on "Network & internet", picked on the mirror
            win._editor.pick_touch.click()
            click_mirror(win, NETWORK_ROW, qtbot)
            win._editor._try_accept()
            _answered(qtbot, win)
            _question(qtbot, win)  # "Battery": the user shows the switch instead
            bar.trigger(DecisionKind.DEMONSTRATE)
            click_mirror(win, AIRPLANE_SWITCH, qtbot)
            _done(win, qtbot)
            asked_first = server.chat_requests
            first_section = win.run.section
            assert "model calls" in win.timeline.section_title(first_section)

            AIRPLANE.setup(win.session.device)
            _start(win, qtbot)
            sources = []
            for _ in range(3):
                _question(qtbot, win)
                assert card.source.isVisible()
                sources.append(card.source.text())
                bar.trigger(DecisionKind.APPROVE)
                _answered(qtbot, win)
            _done(win, qtbot)
            assert server.chat_requests == asked_first  # the model heard nothing this time
            assert sources[0].startswith("★ From memory: you approved this on ")
            assert sources[1].startswith("★ From memory: you edited this on ")
            assert sources[2].startswith("★ From memory: you demonstrated this on ")
            section = win.run.section
            rows = [win.timeline.list.item(r).text() for r in range(win.timeline.list.count())]
            mine = [r for r in rows if r.endswith("from memory")]
            assert len(mine) == 3, rows
            assert "0 model calls" in win.timeline.section_title(section)
            assert "0 interventions" in win.timeline.section_title(section)

            win.knowledge_dock.show()
            win.knowledge_dock.raise_()
            memory = win.knowledge_panel.memory
            qtbot.waitUntil(lambda: memory.tree.topLevelItemCount() == 2, timeout=10000)
            apps = sorted(memory.tree.topLevelItem(i).text(0) for i in range(2))
            assert apps == ["Home screen — 1 decision", "Settings — 2 decisions"], apps
            settings_branch = next(memory.tree.topLevelItem(i) for i in range(2)
                                   if memory.tree.topLevelItem(i).text(0).startswith("Settings"))
            memory.tree.setCurrentItem(settings_branch.child(0))
            memory.forget.click()
            qtbot.waitUntil(lambda: any(memory.tree.topLevelItem(i).text(0).startswith("Settings — 1 decision")
                                        for i in range(memory.tree.topLevelItemCount())), timeout=10000)
        finally:
            win.close()
