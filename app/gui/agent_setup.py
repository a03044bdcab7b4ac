"""Builds what the window needs from the agent: the LLM client from the user's settings,
the planner (and for Prompt2Task its grounding ladder and assessor), the run settings,
and finally the ``run_episode`` generator.  Qt-free; called from the GUI thread but does
no network I/O itself (clients connect lazily).
"""

from __future__ import annotations

import logging
from collections.abc import Generator
from dataclasses import replace
from typing import Any

from agent.llm.base import CancelToken, RetryPolicy

log = logging.getLogger(__name__)

#: Autonomy ids offered by the task panel (and the settings model) -> the runner's modes.
AUTONOMY = {"approve_all": "approve", "approve": "approve", "confident": "confident", "auto": "auto"}


def warm_up() -> None:
    """Import the agent loop and the vision pipeline ahead of time (on a worker thread), so
    the first Start or parse does not pay for the imports."""
    import agent.planners
    import agent.runner  # noqa: F401
    import vision.pipeline  # noqa: F401


def make_client(settings: Any, model: str) -> Any:
    """An Ollama or OpenAI-compatible client for ``model`` as the settings say."""
    llm = getattr(settings, "llm", None)
    policy = RetryPolicy(attempts=(llm.retries + 1) if llm else 3, timeout_s=llm.timeout_s if llm else 120.0)
    if llm is not None and llm.backend == "openai":
        from agent.llm.openai_client import OpenAIClient

        key = llm.api_key.get_secret_value() if llm.api_key is not None else "not-needed"
        return OpenAIClient(model=model, base_url=llm.openai_base_url, api_key=key, policy=policy)
    from agent.llm.ollama_client import OllamaClient

    host = llm.ollama_host if llm is not None else "http://127.0.0.1:11434"
    return OllamaClient(model=model, host=host, policy=policy)


def list_models(settings: Any) -> list[str]:
    """Model names on the configured server (raises ``LLMError`` with a hint when unreachable)."""
    client = make_client(settings, "")
    try:
        return client.list_models()
    finally:
        close = getattr(client, "close", None)
        if close is not None:
            close()


def build_episode(
    *,
    goal: str,
    planner: str,
    autonomy: str,
    model: str,
    device: Any,
    parser: Any,
    store: Any,
    settings: Any,
    cancel: CancelToken,
    client: Any = None,
) -> tuple[Any, Any]:
    """The ``run_episode`` generator for one task, and the LLM client it uses."""
    from agent.events import RunSettings
    from agent.planners import make_planner
    from agent.runner import run_episode

    client = client if client is not None else make_client(settings, model)
    grounder = assessor = None
    if planner == "prompt2task":
        from agent.grounding.assessment import Assessor
        from agent.grounding.ladder import LadderGrounder

        plan = make_planner("zeroshot+", client)
        grounder, assessor = LadderGrounder(client), Assessor(client)
    else:
        plan = make_planner(planner, client)
    agent_settings = getattr(settings, "agent", None)
    run_settings = RunSettings(
        mode=AUTONOMY.get(autonomy, "approve"),
        model=model,
        max_steps=getattr(agent_settings, "step_budget", 15),
        allow_sensitive=not getattr(agent_settings, "sensitive_needs_approval", True),
    )
    knowledge = knowledge_for(store)
    if knowledge is not None:
        # Solved tasks and the user's demonstrations for similar goals become examples.
        examples = knowledge.tasks.example_lines(goal)
        if examples:
            run_settings = replace(run_settings, examples=examples)
    gen = run_episode(goal, device, parser, plan, store, settings=run_settings, grounder=grounder,
                      assessor=assessor, cancel=cancel)
    if knowledge is not None:
        gen = learning_from(gen, knowledge)
    return gen, client


def knowledge_for(store: Any) -> Any:
    """The accumulated knowledge kept in the project database, or None without one."""
    from app.storage import Store

    if not isinstance(store, Store):
        return None
    from agent.knowledge.base import Knowledge
    from app.knowledge_store import SqliteKnowledgeStore

    try:
        return Knowledge(SqliteKnowledgeStore(store))
    except Exception:  # knowledge is an extra: a run never fails for it
        log.warning("knowledge store unavailable", exc_info=True)
        return None


def learning_from(gen: Generator[Any, Any, Any], knowledge: Any) -> Generator[Any, Any, Any]:
    """Pass ``gen``'s events and decisions through unchanged; when the episode finishes,
    archive it in the task repository and map its pages (on the worker thread that
    drives the generator, never the GUI thread)."""
    from agent.events import Finished

    reply: Any = None
    try:
        while True:
            try:
                event = gen.send(reply)
            except StopIteration as stop:
                return stop.value
            if isinstance(event, Finished):
                try:
                    knowledge.learn_from_episode(event.episode)
                except Exception:  # best effort: the episode is already stored
                    log.warning("could not learn from the episode", exc_info=True)
            reply = yield event
    finally:
        gen.close()
