"""``run_task`` over MCP: Tapwise's own agent (planner and LLM client assembled by
``app.compose``, the model a scripted server over real HTTP) carries out a task, and its
every step waits for the same supervisor as the client's own calls."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.types import Implementation

from agent.types import Decision, DecisionKind
from app import compose
from app.mcp.episodes import EpisodeBook
from app.mcp.server import build_server
from app.mcp.service import PhoneService
from app.mcp.supervisor import Policy, PolicySupervisor
from app.mcp.tasks import task_runner
from app.settings import AgentSettings, LLMSettings, Settings, VisionSettings
from app.storage import Store
from phone.virtual.phone import VirtualPhone
from tests.agent.fake_ollama import FakeLLMServer
from tests.mcp.support import Person, text_of


def test_run_task_runs_the_agent_with_each_step_approved_by_the_user(tmp_path: Path) -> None:
    llm = FakeLLMServer().on("", "open Clock", "done").start()
    phone, person = VirtualPhone(), Person()
    store = Store(tmp_path / "t.db")
    settings = Settings(data_dir=tmp_path, llm=LLMSettings(ollama_host=llm.url, model="fake-model:latest",
                                                           timeout_s=10, retries=1),
                        vision=VisionSettings(use_hierarchy="only"),
                        agent=AgentSettings(planner="zeroshot-", constrained_replies=False))
    parser = compose.make_parser(settings)
    service = PhoneService(phone, parser.parse, PolicySupervisor(Policy.ASK, person), EpisodeBook(store),
                           store=store, task_runner=task_runner(settings, phone, parser, store, Policy.ASK))
    out: dict[str, Any] = {}

    async def go() -> None:
        async with Client(build_server(service), client_info=Implementation(name="planner-bot", version="1")) as c:
            out["task"] = await c.call_tool("run_task", {"goal": "Open the clock app", "max_steps": 4})

    worker = threading.Thread(target=anyio.run, args=(go,))
    worker.start()
    try:
        first = person.next_review()
        assert first.tool == "run_task" and first.client == "planner-bot"
        # the launcher's Clock icon is the only element the goal names: taken on the screen's evidence
        assert first.proposal.action.describe() in ("tap Clock", "open Clock")
        assert phone.foreground()[0] != "com.google.android.deskclock"  # nothing before approval
        person.answer(Decision(DecisionKind.APPROVE))
        while worker.is_alive():  # any further step (the completion) is approved too
            try:
                person.next_review(timeout=2)
            except Exception:
                continue
            person.answer(Decision(DecisionKind.APPROVE))
        worker.join(60)
        text = text_of(out["task"])
        assert not out["task"].is_error, text
        assert "ended succeeded" in text and "com.google.android.deskclock" in text
        assert phone.foreground()[0] == "com.google.android.deskclock"
        goals = [r["goal"] for r in store.list_episodes()]
        assert "Open the clock app" in goals  # the agent's own run, stored like any run
    finally:
        service.close()
        store.close()
        phone.close()
        llm.stop()
