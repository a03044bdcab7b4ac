"""What the window needs from ``app.compose`` (the one place that assembles a run),
plus the window's own addition: steps the user demonstrated during a run are kept in the
task repository as a demonstration for the goal, even when the run failed.

Qt-free; called from worker threads (building does no network I/O, clients connect
lazily).
"""

from __future__ import annotations

import logging
from typing import Any

from agent.llm.base import CancelToken
from agent.types import DecisionKind, Episode, EpisodeStatus

log = logging.getLogger(__name__)


def warm_up() -> None:
    """Import the agent loop and the vision pipeline ahead of time (on a worker thread), so
    the first Start or parse does not pay for the imports."""
    import agent.planners
    import agent.runner  # noqa: F401
    import vision.pipeline  # noqa: F401


def settings_or_default(settings: Any) -> Any:
    if settings is not None:
        return settings
    from app.settings import Settings

    return Settings()


def make_client(settings: Any, model: str) -> Any:
    """The LLM client the settings describe, for ``model``."""
    from app.compose import make_client as compose_client

    return compose_client(settings_or_default(settings), model=model)


def list_models(settings: Any) -> list[str]:
    """Model names on the configured server (raises ``LLMError`` with a hint when unreachable)."""
    from app.compose import list_models as compose_list

    return compose_list(settings_or_default(settings))


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
    """The ``run_episode`` generator for one task (as ``app.compose`` builds it, with a
    failed step offered to the user instead of ending the run), and its LLM client."""
    from app.compose import RunRequest, build_run, on_finished
    from app.model_prefs import PrefsStore

    run = build_run(RunRequest(goal=goal, planner=planner, autonomy=autonomy, model=model),
                    settings_or_default(settings), device=device, parser=parser, store=store, cancel=cancel,
                    client=client, ask_on_error=True, prefs=PrefsStore.default())
    gen = run.events
    knowledge = run.knowledge
    if knowledge is not None:
        gen = on_finished(gen, lambda episode: learn_demonstrated_steps(knowledge, episode))
    return gen, run.client


def knowledge_for(store: Any) -> Any:
    """The accumulated knowledge kept in the project database, or None without one."""
    from app.compose import knowledge_for as compose_knowledge

    return compose_knowledge(store)


def learn_demonstrated_steps(knowledge: Any, episode: Episode) -> None:
    """Keep an unsuccessful run the user showed steps in as a demonstration for its goal
    (a solved run is already archived by ``app.compose``)."""
    shown = any(s.decision is not None and s.decision.kind is DecisionKind.DEMONSTRATE for s in episode.steps)
    if not shown or episode.status is EpisodeStatus.SUCCEEDED:
        return
    try:
        knowledge.learn_from_demonstration(episode, episode.goal)
    except Exception:  # e.g. nothing reached the phone: nothing to learn
        log.info("the demonstration could not be kept", exc_info=True)
