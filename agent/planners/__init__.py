"""Planners: the paper's six reasoning variants, VisionTasker's step planner, chain-of-action."""

from __future__ import annotations

from agent.planners.base import PlanContext, PlanError, Planner, Turn
from agent.planners.registry import PLANNER_NAMES, make_planner

__all__ = ["PLANNER_NAMES", "PlanContext", "PlanError", "Planner", "Turn", "make_planner"]
