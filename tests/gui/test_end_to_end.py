"""End to end: the window on the virtual phone, a scripted fake Ollama server over real
HTTP, a task run in approve-every-step mode where the user approves, rejects with
feedback, edits (target picked on the mirror), demonstrates on the mirror and approves
the finish; the database then holds the episode and every decision."""

from __future__ import annotations

import pytest

pytest.importorskip("phone.virtual.phone", reason="needs the virtual phone")
pytest.importorskip("agent.runner", reason="needs the agent loop")
pytest.importorskip("tests.agent.fake_ollama", reason="needs the fake Ollama server")

from agent.types import DecisionKind, EpisodeStatus, StepOutcome
from app.storage import Store

from .e2e_support import run_scripted_task


@pytest.mark.slow
def test_a_supervised_task_with_every_kind_of_decision_is_stored(qtbot, tmp_path):
    result = run_scripted_task(qtbot=qtbot, tmp=tmp_path)
    assert result["status"] == "succeeded", result
    assert result["phone_state"]["settings"]["airplane_mode"] is True
    with Store(result["db"]) as store:
        episode = store.load_episode(result["episode_id"])
    assert episode.status is EpisodeStatus.SUCCEEDED
    assert episode.goal == "Turn on airplane mode"
    decisions = [s.decision.kind for s in episode.steps]
    # "Turn on airplane mode" is one of the virtual phone's tasks: the phone's own verdict ends the
    # run right after the demonstrated switch, before the model's "done" is even asked for
    assert decisions == [DecisionKind.APPROVE, DecisionKind.REJECT, DecisionKind.EDIT, DecisionKind.DEMONSTRATE]
    rejected = episode.steps[1]
    assert rejected.outcome is StepOutcome.REJECTED
    assert "Network & internet" in rejected.decision.feedback
    edited = episode.steps[2]
    assert edited.executed.target.description.startswith("Network & internet")
    demo = episode.steps[3]
    assert demo.executed.target is not None and "Airplane" in demo.executed.target.description
    assert all(s.screenshot is not None for s in episode.steps)
    assert result["steps"] == 4  # the timeline shows every step, the rejected one too
    assert "succeeded" in result["finish"] and "checked on the phone" in result["finish"]  # how the run ended
    assert result["knowledge_tasks"] == ["Turn on airplane mode"]  # the solved run, in the Knowledge tab


@pytest.mark.slow
def test_closing_the_window_mid_run_stops_the_loop_and_keeps_the_episode(qtbot, tmp_path):
    from tests.agent.fake_ollama import FakeLLMServer

    from .e2e_support import GOAL, make_settings, open_window

    with FakeLLMServer().on("", "open Settings") as server:
        settings = make_settings(tmp_path, server.url)
        win = open_window(settings, qtbot)
        win.task_panel.set_models(["fake-model:latest"], current="fake-model:latest")
        win.task_panel.goal.setPlainText(GOAL)
        win.task_panel.planner.setCurrentIndex(win.task_panel.planner.findData("zeroshot-"))
        win.task_panel.start.click()
        qtbot.waitUntil(lambda: win.decision_bar.enabled, timeout=30000)
        win.close()
        assert win.run.driver is None or not win.run.driver.running
        with Store(settings.database_path) as store:
            rows = store.list_episodes()
        assert len(rows) == 1 and rows[0]["status"] == "aborted", rows
        assert rows[0]["goal"] == GOAL and rows[0]["steps"] == 1  # the step in progress, recorded as aborted
