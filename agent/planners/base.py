"""What every planner shares: the context it is given, the error it raises, the protocol.

A planner turns a ``PlanContext`` (goal, current screen, history, optional latent state,
the user's feedback) into a ``Proposal`` whose action may still be ungrounded (a target
description or element id).  Planners never touch the device and keep no per-episode
state outside ``PlanContext``, so one planner object can serve several episodes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from agent import prompts
from agent.commands import CommandError, parse_lenient
from agent.llm.base import CancelToken, ChatRequest, LLMClient, LLMError, LLMReply
from agent.types import Action, LatentState, LLMCall, Proposal
from vision.types import ScreenParse


@dataclass(frozen=True, slots=True)
class Turn:
    """One earlier step as the planners remember it."""

    command: str  # the action as commanded, in words
    action: Action
    screen: str = ""  # fenced description of the screen the action was taken on
    thought: str = ""
    performed: str = ""  # latent estimate of what really happened ("" without latent state)
    source: str = "agent"  # agent | edit | demonstration


@dataclass(frozen=True, slots=True)
class PlanContext:
    goal: str
    parse: ScreenParse
    screen: str  # fenced description of the current screen
    history: tuple[Turn, ...] = ()
    latent: LatentState | None = None
    notes: tuple[str, ...] = ()  # user feedback, rejected options, grounding failures
    examples: tuple[str, ...] = ()  # demonstrations usable as examples
    step_index: int = 0
    cancel: CancelToken | None = None
    images: tuple[bytes, ...] = ()  # the screenshot as PNG, for vision-language models


class PlanError(RuntimeError):
    """The planner could not produce an action; ``calls`` keeps the LLM requests it made."""

    def __init__(self, message: str, calls: tuple[LLMCall, ...] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.calls = calls


class Planner(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def uses_latent(self) -> bool: ...

    def propose(self, ctx: PlanContext) -> Proposal: ...


def commanded_history(history: tuple[Turn, ...]) -> str:
    return "\n".join(f"{i}) {t.command}" for i, t in enumerate(history, 1)) if history else "1) None yet."


def notes_block(notes: tuple[str, ...]) -> str:
    if not notes:
        return ""
    return "Notes from the user and from earlier attempts on this screen (follow them):\n" + "\n".join(
        f"- {n}" for n in notes) + "\n"


@dataclass
class LLMStep:
    """Small helper: ask, collect the calls, and turn client errors into ``PlanError``."""

    client: LLMClient
    calls: list[LLMCall] = field(default_factory=list)
    images: tuple[bytes, ...] = ()

    def ask(self, prompt: str, purpose: str, cancel: CancelToken | None, *, temperature: float = 0.0,
            json: bool = False, max_tokens: int = 256) -> LLMReply:
        try:
            reply = self.client.chat(ChatRequest(prompt, purpose=purpose, system=prompts.render("system"),
                                                 temperature=temperature, json_schema=json,
                                                 max_tokens=max_tokens, images=self.images), cancel)
        except LLMError as exc:
            self.calls.extend(exc.calls)
            raise PlanError(f"{purpose}: {exc}", tuple(self.calls)) from None
        self.calls.extend(reply.calls)
        return reply


def parse_or_reask(step: LLMStep, ctx: PlanContext, first_text: str, answer_of: Callable[[str], str],
                   reask_prompt: Callable[[str, str], str], purpose: str, retries: int = 1) -> tuple[Action, str]:
    """Parse the answer in ``first_text``; on failure ask again (``retries`` times) with the error."""
    text = first_text
    for attempt in range(retries + 1):
        answer = answer_of(text)
        try:
            return parse_lenient(answer, ctx.parse.screen_size), text
        except CommandError as exc:
            if attempt == retries:
                raise PlanError(f"{purpose}: unreadable reply after {retries + 1} tries: {exc}",
                                tuple(step.calls)) from None
            text = step.ask(reask_prompt(text, str(exc)), f"{purpose}.reask", ctx.cancel, max_tokens=60).text
    raise AssertionError("unreachable")  # pragma: no cover
