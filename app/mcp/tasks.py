"""``run_task`` for MCP clients: Tapwise's own agent, assembled by ``app.compose`` exactly as
``tapwise run`` and the window assemble it, with its questions answered by the MCP
supervisor.  Qt-free; the LLM client is built per task and closed after it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from agent.types import Autonomy, Decision, Episode
from app.mcp.service import TaskRunner, ToolRefused
from app.mcp.supervisor import Policy

if TYPE_CHECKING:
    from agent.events import AwaitingDecision
    from app.settings import Settings


def task_runner(settings: Settings, device: Any, parser: Any, store: Any, policy: Policy) -> TaskRunner:
    """A ``TaskRunner`` over ``device``: the agent asks at every step under the ``ask`` policy
    and only for what must be asked (sensitive steps) under ``auto``."""
    autonomy = Autonomy.AUTO if policy is Policy.AUTO else Autonomy.APPROVE

    def run(goal: str, decide: Callable[[AwaitingDecision], Decision], max_steps: int | None) -> Episode:
        from agent.events import Finished
        from agent.runner import drive
        from app import compose

        if policy is Policy.READ_ONLY:
            raise ToolRefused("Tapwise serves this phone read-only: running a task is refused")
        try:
            built = compose.build_run(compose.RunRequest(goal, autonomy=autonomy, max_steps=max_steps), settings,
                                      device=device, parser=parser, store=store)
        except ValueError as exc:
            raise ToolRefused(f"the task could not start: {exc}") from exc
        episode: Episode | None = None
        try:
            for ev in drive(built.events, decide):
                if isinstance(ev, Finished):
                    episode = ev.episode
        finally:
            compose.close_client(built.client)
        if episode is None:
            raise ToolRefused("the task ended without an episode")
        return episode

    return run
