"""Planner names -> planner objects (``zeroshot+``, ``cotsc-``, ``visiontasker``, ``chain`` ...)."""

from __future__ import annotations

from agent.llm.base import LLMClient
from agent.planners.base import Planner

PLANNER_NAMES = ("zeroshot+", "zeroshot-", "cotsc+", "cotsc-", "react+", "react-", "visiontasker", "chain")


def make_planner(name: str, client: LLMClient, *, samples: int = 8, temperature: float = 0.5) -> Planner:
    from agent.planners.chain_of_action import ChainOfActionPlanner
    from agent.planners.paper import PaperPlanner
    from agent.planners.visiontasker import VisionTaskerPlanner

    n = name.strip().lower()
    if n in ("visiontasker", "vt"):
        return VisionTaskerPlanner(client)
    if n in ("chain", "chain-of-action", "coa", "autoui"):
        return ChainOfActionPlanner(client)
    if n and n[-1] in "+-" and n[:-1] in ("zeroshot", "cotsc", "react"):
        return PaperPlanner(client, n[:-1], uses_latent=n[-1] == "+", samples=samples, temperature=temperature)
    raise ValueError(f"unknown planner {name!r}; choose one of: {', '.join(PLANNER_NAMES)}")
