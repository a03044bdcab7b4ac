"""What every planner shares: the context it is given, the error it raises, the protocol.

A planner turns a ``PlanContext`` (goal, current screen, history, optional latent state,
the user's feedback) into a ``Proposal`` whose action may still be ungrounded (a target
description or element id).  Planners never touch the device and keep no per-episode
state outside ``PlanContext``, so one planner object can serve several episodes.

Shared here as well: structured replies (``Structured``: the per-screen schema from
``agent.structured`` when the client's server enforces one, with the free-text path
kept for the rest), the notes a planner shows (the user's, plus "X changed nothing"
when the last action left the screen as it was) and the reply checks recorded as
evidence (``reply: ...``) for the benchmark.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from agent import prompts
from agent.commands import CommandError, parse_lenient
from agent.effects import returning_actions, unchanged_note_from_text
from agent.llm.base import CancelToken, ChatRequest, LLMClient, LLMError, LLMReply, accepts_schema
from agent.structured import (
    ReplyForm,
    action_form,
    asks_to_hold,
    read_action,
    refuse_placeholder,
    reply_problem,
)
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
    rejected: tuple[Action, ...] = ()  # the user rejected these here: never offered again
    escalate: str = ""  # why the bigger model takes this step (the user asked, the run's model was unsure)
    rejections: int = 0  # how many proposals the user rejected on this screen so far
    replan: int = 0  # 0, or which re-plan of this step (the last proposal could not be grounded or was rejected here)
    offer: tuple[str, ...] = ()  # element ids a structured reply may name, in this order (empty: every element)
    allow_done: bool = True  # False: "complete" is not offered (the screen's evidence rules it out)
    #: with ``escalate``: the runner holds the run's model's grounded step for this screen and
    #: keeps it when the bigger model may not take the step (``EscalationRefused``)
    keeps_own: bool = False


class PlanError(RuntimeError):
    """The planner could not produce an action; ``calls`` keeps the LLM requests it made."""

    def __init__(self, message: str, calls: tuple[LLMCall, ...] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.calls = calls


class EscalationRefused(PlanError):
    """The bigger model may not take a step the runner sent it while holding the run's
    model's own grounded step (``PlanContext.keeps_own``): the runner keeps that step,
    with ``message`` as a line of its evidence, and no model is asked again."""


class Planner(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def uses_latent(self) -> bool: ...

    def propose(self, ctx: PlanContext) -> Proposal: ...


class Wrapping:
    """A planner in front of another one (``inner``): it answers to the inner planner's name
    and latent-state use, and every attribute it lacks (client, samples, hints…) is the inner
    planner's, so the runner sees through it.  Subclasses plan; this only delegates."""

    def __init__(self, inner: Planner) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        if name == "inner" or name.startswith("__"):  # not set yet (unpickling, a half-made wrapper)
            raise AttributeError(name)
        return getattr(self.inner, name)

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def uses_latent(self) -> bool:
        return self.inner.uses_latent


@runtime_checkable
class Recalls(Protocol):
    """A planner that may already know this screen's step (the decision memory): the runner
    asks ``recall`` first, and a proposal it returns is the step, with no latent estimate,
    no model call and no assessment."""

    def recall(self, ctx: PlanContext) -> Proposal | None: ...


#: Evidence that a proposal must be put to the user whatever the autonomy (a healed macro
#: step, an ambiguous match): the rest of the line is the reason shown.
ASK_USER = "ask the user: "


def commanded_history(history: tuple[Turn, ...]) -> str:
    return "\n".join(f"{i}) {t.command}" for i, t in enumerate(history, 1)) if history else "1) None yet."


def plan_notes(ctx: PlanContext) -> tuple[str, ...]:
    """The context's notes plus "X changed nothing" when the last action left the screen as it was."""
    notes = list(ctx.notes)
    if ctx.history:
        note = unchanged_note_from_text(ctx.history[-1].action, ctx.history[-1].screen, ctx.screen)
        if note and note not in notes:
            notes.append(note)
    return tuple(notes)


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
            json: bool = False, max_tokens: int = 256, schema: dict[str, Any] | None = None) -> LLMReply:
        try:
            reply = self.client.chat(ChatRequest(prompt, purpose=purpose, system=prompts.render("system"),
                                                 temperature=temperature, json_schema=schema or json,
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
            refuse_placeholder(answer)
            return parse_lenient(answer, ctx.parse.screen_size), text
        except CommandError as exc:
            if attempt == retries:
                raise PlanError(f"{purpose}: unreadable reply after {retries + 1} tries: {exc}",
                                tuple(step.calls)) from None
            text = step.ask(reask_prompt(text, str(exc)), f"{purpose}.reask", ctx.cancel, max_tokens=60).text
    raise AssertionError("unreachable")  # pragma: no cover


# ---- structured replies --------------------------------------------------------------

_SHOWN_ID = re.compile(r"^\s*\[([A-Za-z]{0,2}\d+)\]", re.M)


def shown_ids(screen: str) -> set[str]:
    """Ids of the elements listed in a screen description (``[7] button "Display"`` lines)."""
    return set(_SHOWN_ID.findall(screen))


@dataclass(frozen=True, slots=True)
class Structured:
    """Whether and how a planner asks for structured replies.

    ``enabled`` is the user's choice (``--constrained/--free``); the schema is only sent
    when the client's server enforces schemas (``accepts_schema``).  ``apps`` are the
    installed apps' names for ``open_app`` (empty: any name).
    """

    enabled: bool = False
    apps: tuple[str, ...] = ()

    def active(self, client: LLMClient) -> bool:
        return self.enabled and accepts_schema(client)

    def form(self, ctx: PlanContext, *, allow_done: bool = True) -> ReplyForm:
        """The reply form for this screen: only elements the description shows (when it lists
        any), without the last action when it changed nothing, without the way back out
        of a detour already taken from this screen and without what the user rejected here."""
        ids = shown_ids(ctx.screen)
        parse = ctx.parse
        if ids:
            parse = ScreenParse(parse.screen_size, tuple(e for e in parse.elements if e.id in ids), parse.blocks)
        exclude = returning_actions([(t.action, t.screen) for t in ctx.history], ctx.screen)
        if ctx.history and unchanged_note_from_text(ctx.history[-1].action, ctx.history[-1].screen, ctx.screen):
            exclude.append(ctx.history[-1].action)
        exclude.extend(ctx.rejected)
        return action_form(parse, apps=self.apps, allow_done=allow_done and ctx.allow_done, exclude=exclude,
                           hold=asks_to_hold(ctx.goal), only=ctx.offer)


def read_structured(reply: LLMReply, form: ReplyForm, ctx: PlanContext) -> tuple[Action, tuple[str, ...]]:
    """The action of a structured reply, or of its text when the server ignored the schema.

    Returns the action and evidence saying which path was taken.  Raises ``CommandError``.
    """
    try:
        return read_action(reply.data, form, ctx.parse), ("reply: structured",)
    except CommandError as exc:
        problem = str(exc)
    texts = [v for v in reply.data.values() if isinstance(v, str)] if isinstance(reply.data, dict) else []
    for text in (*texts, reply.text):
        try:
            refuse_placeholder(text)
            action = parse_lenient(text, ctx.parse.screen_size)
        except CommandError as exc:
            error = exc
            continue
        return action, (f"reply: outside the form ({problem}); read as free text",)
    raise error


def reply_checks(action: Action, ctx: PlanContext) -> tuple[str, ...]:
    """Evidence for a reply whose action names something not on this screen."""
    problem = reply_problem(action, ctx.parse)
    return (f"reply: {problem}",) if problem else ()


def _form_lines(form: ReplyForm) -> str:
    lines = {}
    for line in prompts.render("structured_forms").splitlines():
        kind, _, text = line.partition(": ")
        if text:
            lines[kind.strip()] = text.strip()
    kinds = [("scroll_in" if k == "scroll" and form.scrollable else k) for k in form.kinds]
    return "\n".join(lines[k] for k in kinds if k in lines)


def structured_reply_text(form: ReplyForm, fields: str, goal: str = "") -> str:
    """The instructions for a structured reply: its fields, the action forms this screen
    offers, the apps, and (when given) the goal again: small models keep to what they read last."""
    apps = f"\nApps you can open: {', '.join(form.apps)}." if form.apps else ""
    text = prompts.render("structured_reply", fields=fields, forms=_form_lines(form), apps=apps)
    return f"{text}\nThe task is: {goal}" if goal else text


def reask_evidence(calls: list[LLMCall]) -> tuple[str, ...]:
    """One ``reply: unreadable`` entry per re-ask the step needed."""
    n = sum(1 for c in calls if c.purpose.endswith(".reask"))
    return ("reply: unreadable, asked again",) * n
