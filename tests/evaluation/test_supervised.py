"""The scripted supervisor: approves what advances a task (by the virtual phone's oracle),
rejects the rest with a reason, demonstrates after two rejections on one screen, and counts
what supervising cost.  Runs the real runner against the scripted model over HTTP."""

from __future__ import annotations

import pytest

from agent.events import RunSettings
from agent.llm.base import RetryPolicy
from agent.llm.ollama_client import OllamaClient
from agent.planners import make_planner
from agent.runner import run_episode
from evaluation.scripted_model import ScriptedLLMServer
from evaluation.supervised import listening_model, summarise, supervise
from phone.virtual.phone import VirtualPhone
from phone.virtual.tasks import load_tasks
from vision.config import PipelineConfig
from vision.pipeline import ScreenParser

TASKS = {t.id: t for t in load_tasks()}
TREE = ScreenParser(PipelineConfig(mode="tree"))


def _supervised(task_id, server, *, feedback=True):
    task = TASKS[task_id]
    phone = VirtualPhone()
    task.setup(phone)
    client = OllamaClient(model="m", host=server.url, policy=RetryPolicy(attempts=1, timeout_s=5))

    def make_run(goal, device, judge):
        return run_episode(goal, device, TREE, make_planner("zeroshot-", client), None, judge=judge,
                           settings=RunSettings(mode="approve", max_wait_s=0.0, feedback=feedback, ask_on_error=True,
                                                confirm_done=True, max_steps=task.step_budget * 2))

    try:
        return supervise(task, phone, phone, make_run)
    finally:
        phone.close()
        client.close()


def test_a_wrong_step_is_rejected_and_the_right_ones_approved():
    with ScriptedLLMServer(models=("m",)) as server:
        server.on("Next action:", "open Settings", "tap Display", "tap Network & internet", "tap Internet",
                  "tap the Wi-Fi switch")
        r = _supervised("settings.wifi_off", server)
    assert r.completed and r.status == "succeeded"
    assert (r.approvals, r.rejections, r.demonstrations, r.proposed_again) == (4, 1, 0, 0)
    assert r.interventions == 1 and len(r.approve_to_next_s) == 3
    assert r.intervened == ('rejected tap Display [zeroshot-]',)  # what was turned down, by which planner


def test_after_two_rejections_on_a_screen_the_supervisor_shows_the_step():
    with ScriptedLLMServer(models=("m",)) as server:
        server.on("Next action:", "open Settings", "tap Display", "tap Sound & vibration", "tap Internet",
                  "tap the Wi-Fi switch")
        r = _supervised("settings.wifi_off", server)
    assert r.completed and r.rejections == 2 and r.demonstrations >= 1
    assert len(r.intervened) == r.interventions
    assert [x.split()[0] for x in r.intervened[:3]] == ["rejected", "rejected", "showed"]


@pytest.mark.parametrize("feedback", [True, False])
def test_the_listening_model_repeats_itself_only_without_feedback(feedback):
    with ScriptedLLMServer(responder=listening_model, models=("m",)) as server:
        r = _supervised("settings.wifi_off", server, feedback=feedback)
    assert r.completed
    assert (r.proposed_again == 0) is feedback
    s = summarise([r])
    assert s.tasks == 1 and s.completed == 1 and s.mean_interventions == r.interventions
