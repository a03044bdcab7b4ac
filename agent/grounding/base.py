"""Grounding: turn an action aimed at words or an element id into one with a screen point.

``ElementGrounder`` tries, in order: the element id the planner named, strict text match
(LCS similarity), then optionally the LLM grounder over the element list.  The level
that succeeded is recorded as evidence.  A miss raises ``GroundingError`` carrying the
available elements so the runner can ask the planner again.  Elements a dialog covers
are never candidates.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Protocol

from agent.grounding.match import best_text_match, runner_up
from agent.llm.base import CancelToken
from agent.screen_text import element_list
from agent.types import Action, ActionType, LLMCall, Target
from vision.row_parts import tap_point
from vision.types import Element, ScreenParse


class GroundingError(RuntimeError):
    def __init__(self, message: str, available: str = "", calls: tuple[LLMCall, ...] = (),
                 blocked: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.available = available
        self.calls = calls
        self.blocked = blocked  # the agent needs the user to show the way


@dataclass(frozen=True, slots=True)
class GroundContext:
    goal: str
    parse: ScreenParse
    history: tuple[str, ...] = ()
    cancel: CancelToken | None = None


@dataclass(frozen=True, slots=True)
class Grounded:
    action: Action
    evidence: tuple[str, ...] = ()
    calls: tuple[LLMCall, ...] = ()
    element: Element | None = None


class Grounder(Protocol):
    def ground(self, action: Action, ctx: GroundContext) -> Grounded: ...


def uncovered(parse: ScreenParse) -> ScreenParse:
    """The parse without the elements a dialog covers (they cannot be touched)."""
    if not parse.covered_ids:
        return parse
    return replace(parse, elements=parse.uncovered())


def needs_grounding(action: Action) -> bool:
    if action.type in (ActionType.TAP, ActionType.LONG_PRESS):
        return action.touch is None
    if action.type is ActionType.TYPE:
        t = action.target
        return t is not None and t.point is None and bool(t.element_id or t.description)
    return False


def aim_at(action: Action, element: Element, parse: ScreenParse | None = None) -> Action:
    """The action pointed at the element: its centre, or for a list row or tile found in the
    pixels (given the ``parse`` it is in) the middle of its title's line (``vision.row_parts``)."""
    point = tap_point(element, parse.elements) if parse is not None else element.rect.center
    old = action.target or Target()
    target = replace(old, element_id=element.id, point=point, description=old.description or element.display_name)
    if action.type is ActionType.TYPE:
        return replace(action, target=target)
    return replace(action, touch=point, target=target)


@dataclass
class ElementGrounder:
    llm: object | None = None  # an ``LLMGrounder``; None for text matching only
    threshold: float = 0.75

    def ground(self, action: Action, ctx: GroundContext) -> Grounded:
        if not needs_grounding(action):
            return Grounded(action, ("no grounding needed",))
        target = action.target
        assert target is not None
        if target.element_id:
            e = ctx.parse.element(target.element_id)
            if e is not None and not e.covered:
                return Grounded(aim_at(action, e, ctx.parse), (f"element id [{e.id}]",), element=e)
        if target.description:
            hit = best_text_match(target.description, uncovered(ctx.parse), self.threshold)
            if hit is not None:
                e, score = hit
                rival = runner_up(target.description, uncovered(ctx.parse), e)
                return Grounded(aim_at(action, e, ctx.parse), (f"text match [{e.id}] {e.display_name!r} sim={score} next={rival}",),
                                element=e)
        if self.llm is not None:
            return self.llm.ground(action, ctx)  # type: ignore[attr-defined]
        what = f"[{target.element_id}]" if target.element_id else repr(target.description)
        raise GroundingError(f"no element {what} on this screen", available=element_list(ctx.parse))
