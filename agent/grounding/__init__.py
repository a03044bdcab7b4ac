"""Grounding (element id, strict text match, LLM grounder, Prompt2Task ladder) and assessment."""

from agent.grounding.base import ElementGrounder, GroundContext, Grounded, Grounder, GroundingError

__all__ = ["ElementGrounder", "GroundContext", "Grounded", "Grounder", "GroundingError"]
