"""Planner names -> planner objects (``zeroshot+``, ``cotsc-``, ``visiontasker``, ``chain`` ...)."""

from __future__ import annotations

from collections.abc import Sequence

from agent.llm.base import LLMClient
from agent.planners.base import Planner, Structured

PLANNER_NAMES = ("zeroshot+", "zeroshot-", "cotsc+", "cotsc-", "react+", "react-", "visiontasker", "chain")


def make_planner(name: str, client: LLMClient, *, samples: int = 8, temperature: float = 0.5,
                 constrained: bool = False, apps: Sequence[str] = ()) -> Planner:
    """The planner called ``name``.  ``constrained`` asks for structured replies built per
    screen (used when the client's server enforces JSON schemas); ``apps`` are the
    installed apps' names the replies may open (empty: any name)."""
    from agent.planners.chain_of_action import ChainOfActionPlanner
    from agent.planners.paper import PaperPlanner
    from agent.planners.visiontasker import VisionTaskerPlanner

    structured = Structured(enabled=constrained, apps=tuple(apps))
    n = name.strip().lower()
    if n in ("visiontasker", "vt"):
        return VisionTaskerPlanner(client, structured=structured)
    if n in ("chain", "chain-of-action", "coa", "autoui"):
        return ChainOfActionPlanner(client, structured=structured)
    if n and n[-1] in "+-" and n[:-1] in ("zeroshot", "cotsc", "react"):
        return PaperPlanner(client, n[:-1], uses_latent=n[-1] == "+", samples=samples, temperature=temperature,
                            structured=structured)
    if n == "adapter" or n.startswith("adapter:"):  # a GUI model's own format: agent.planners.adapter
        from agent.planners.adapter import make_adapter_planner

        return make_adapter_planner(n, client)
    raise ValueError(f"unknown planner {name!r}; choose one of: {', '.join(PLANNER_NAMES)}")
