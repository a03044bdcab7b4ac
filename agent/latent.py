"""Latent-state estimation: the five aspects, chained, or fused into one structured call.

Chain order (each estimate feeds the later ones): performed action (vs. the commanded
one, from the screens before and after) -> screen summary -> progression -> mistakes;
completion is asked last, once the planner has a candidate next action, because seeing
the contemplated step helps judge whether anything is left to do.  The fused variant
asks for all five in a single JSON reply.  Estimators only talk to the LLM; they keep
no state between calls (the runner passes the history in).

With ``structured=True`` (and a server that enforces JSON schemas, see
``agent.llm.base.accepts_schema``) the calls whose answer has a fixed shape ask for it:
the completion check replies ``{"completed": true|false, "reason": ...}`` and the fused
estimate gets a schema for its seven keys.  The descriptive aspects (performed action,
summary, progression, mistakes) stay free text: that is what they are.

The screen summary is checked against the parse: every description starts with the
screen's gist (``agent.screen_text``), and a summary that calls an app's page the home
screen or the launcher is replaced by the gist, marked as such (``grounded_summary``), before
the later aspects read it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any, Protocol

from agent import prompts
from agent.llm.base import CancelToken, ChatRequest, LLMClient, LLMError, accepts_schema
from agent.screen_text import ScreenGist, gist_in
from agent.types import LatentState, LLMCall


@dataclass(frozen=True, slots=True)
class LatentInput:
    """What an estimate may look at."""

    goal: str
    screen: str  # fenced description of the current screen
    previous_screen: str = ""  # fenced description of the screen before the last action
    commanded: str = ""  # the last action as it was commanded ("" on the first step)
    commanded_history: tuple[str, ...] = ()
    performed_history: tuple[str, ...] = ()  # earlier estimates of performed actions


@dataclass(frozen=True, slots=True)
class Estimate:
    latent: LatentState
    calls: tuple[LLMCall, ...] = ()
    complete: bool = False  # True when ``completion`` is already decided (fused variant)


class LatentEstimator(Protocol):
    name: str

    def estimate(self, inp: LatentInput, cancel: CancelToken | None = None) -> Estimate: ...

    def completion(self, inp: LatentInput, latent: LatentState, next_action: str,
                   cancel: CancelToken | None = None) -> Estimate: ...


def numbered(items: tuple[str, ...] | list[str], empty: str) -> str:
    return "\n".join(f"{i}) {s}" for i, s in enumerate(items, 1)) if items else empty


NO_MISTAKES = "No mistakes."

_TEXT = {"type": "string", "maxLength": 300}

#: The completion check's reply when structured: a verdict first, then why.
COMPLETION_SCHEMA = {
    "type": "object",
    "properties": {"completed": {"type": "boolean"}, "reason": {"type": "string", "maxLength": 200}},
    "required": ["completed", "reason"],
    "additionalProperties": False,
}

#: The fused estimate's reply when structured (the keys the ``latent_fused`` prompt names).
FUSED_SCHEMA = {
    "type": "object",
    "properties": {
        "performed_action": _TEXT, "screen_summary": _TEXT, "progression": _TEXT, "mistakes": _TEXT,
        "completed": {"type": "boolean"}, "completion_reason": {"type": "string", "maxLength": 200},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
    },
    "required": ["performed_action", "screen_summary", "progression", "mistakes", "completed",
                 "completion_reason", "confidence"],
    "additionalProperties": False,
}


#: How a replaced summary says where it comes from.
FROM_THE_PARSE = "from the screen's parse"
_HOME_CLAIM = re.compile(r"\b(home[ -]?screen|launcher|home page|app drawer)\b", re.I)


def contradicts(summary: str, gist: ScreenGist) -> bool:
    """True when ``summary`` calls the screen the home screen while the parse shows an app's
    page (and names neither the app nor the page)."""
    if gist.home is not False or not _HOME_CLAIM.search(summary):
        return False
    low = summary.lower()
    return not any(name in low for name in gist.names())


def grounded_summary(summary: str, screen_text: str) -> str:
    """``summary``, or the screen's gist when the summary contradicts it (marked so)."""
    gist = gist_in(screen_text)
    if gist is None or not contradicts(summary, gist):
        return summary
    said = " ".join(summary.split())
    said = said if len(said) <= 60 else said[:59].rstrip() + "…"
    return f"{gist.text[:1].upper()}{gist.text[1:]} ({FROM_THE_PARSE}; the model said “{said}”)"


def _first_yes_no(text: str) -> bool | None:
    m = re.match(r"\W*(yes|no)\b", text.strip(), re.I)
    if m:
        return m.group(1).lower() == "yes"
    low = text.lower()
    if re.search(r"\b(not (?:yet )?(?:complete|completed|achieved|done)|no\b)", low):
        return False
    if re.search(r"\b(yes|is complete|is done|achieved)\b", low):
        return True
    return None


@dataclass
class ChainedEstimator:
    """Five prompts, one per aspect, in the paper's order (four before planning, one after)."""

    client: LLMClient
    name: str = "chain"
    max_tokens: int = 160
    structured: bool = False
    calls_per_step: int = 5  # four before planning, one after

    def _ask(self, purpose: str, prompt: str, calls: list[LLMCall], cancel: CancelToken | None,
             schema: dict[str, Any] | None = None) -> tuple[str, Any]:
        system = prompts.render("system")
        try:
            reply = self.client.chat(
                ChatRequest(prompt, purpose=purpose, system=system, max_tokens=self.max_tokens,
                            json_schema=schema or False), cancel)
        except LLMError as exc:
            calls.extend(exc.calls)
            raise LLMError(f"latent estimate {purpose!r} failed: {exc.message}", tuple(calls), exc.hint) from None
        calls.extend(reply.calls)
        return reply.text.strip(), reply.data

    def _text(self, purpose: str, prompt: str, calls: list[LLMCall], cancel: CancelToken | None) -> str:
        return self._ask(purpose, prompt, calls, cancel)[0]

    def estimate(self, inp: LatentInput, cancel: CancelToken | None = None) -> Estimate:
        calls: list[LLMCall] = []
        if inp.commanded and inp.previous_screen:
            performed = self._text("latent.performed_action", prompts.render(
                "latent_performed", commanded=inp.commanded, previous_screen=inp.previous_screen, screen=inp.screen),
                calls, cancel)
        else:
            performed = "Nothing yet; this is the first screen." if not inp.commanded else inp.commanded
        summary = grounded_summary(self._text("latent.screen_summary", prompts.render(
            "latent_summary", screen=inp.screen, performed=performed), calls, cancel), inp.screen)
        history = (*inp.performed_history, performed) if inp.commanded else inp.performed_history
        progression = self._text("latent.progression", prompts.render(
            "latent_progression", history=numbered(history, "Nothing yet: the task is just starting."),
            summary=summary, screen=inp.screen), calls, cancel)
        mistakes = self._text("latent.mistakes", prompts.render(
            "latent_mistakes", goal=inp.goal, progression=progression, screen=inp.screen), calls, cancel)
        latent = LatentState(performed_action=performed, screen_summary=summary,
                             progression=progression, mistakes=mistakes)
        return Estimate(latent, tuple(calls))

    def completion(self, inp: LatentInput, latent: LatentState, next_action: str,
                   cancel: CancelToken | None = None) -> Estimate:
        calls: list[LLMCall] = []
        history = (*inp.performed_history, latent.performed_action) if inp.commanded else inp.performed_history
        structured = self.structured and accepts_schema(self.client)
        prompt = prompts.render(
            "latent_completion", goal=inp.goal, history=numbered(history, "Nothing yet: the task is just starting."),
            summary=latent.screen_summary, next_action=next_action)
        if structured:
            prompt += "\n" + prompts.render("latent_completion_json")
        text, data = self._ask("latent.completion", prompt, calls, cancel, COMPLETION_SCHEMA if structured else None)
        if isinstance(data, dict) and isinstance(data.get("completed"), bool):
            verdict: bool | None = data["completed"]
            text = str(data.get("reason", "")) or text
        else:
            verdict = _first_yes_no(text)
        return Estimate(replace(latent, completion=bool(verdict), completion_reason=text), tuple(calls),
                        complete=bool(verdict))


@dataclass
class FusedEstimator:
    """All five aspects in one JSON reply (cheaper; compared against the chain in the benchmark)."""

    client: LLMClient
    name: str = "fused"
    max_tokens: int = 400
    structured: bool = False
    calls_per_step: int = 1  # the completion verdict comes with the estimate

    def estimate(self, inp: LatentInput, cancel: CancelToken | None = None) -> Estimate:
        prompt = prompts.render(
            "latent_fused", goal=inp.goal, history=numbered(inp.commanded_history, "None yet."),
            commanded=inp.commanded or "none (first step)", previous_screen=inp.previous_screen or "(none)",
            screen=inp.screen)
        try:
            schema = FUSED_SCHEMA if self.structured and accepts_schema(self.client) else True
            reply = self.client.chat(ChatRequest(prompt, purpose="latent.fused", system=prompts.render("system"),
                                                 json_schema=schema, max_tokens=self.max_tokens), cancel)
        except LLMError as exc:
            raise LLMError(f"fused latent estimate failed: {exc.message}", exc.calls, exc.hint) from None
        data = reply.data if isinstance(reply.data, dict) else {}
        completed = data.get("completed")
        if isinstance(completed, str):
            completed = completed.strip().lower() in ("true", "yes", "1")
        conf = data.get("confidence")
        try:
            conf = min(1.0, max(0.0, float(conf))) if conf is not None else None
        except (TypeError, ValueError):
            conf = None
        latent = LatentState(
            performed_action=str(data.get("performed_action", "")),
            screen_summary=grounded_summary(str(data.get("screen_summary", "")), inp.screen),
            progression=str(data.get("progression", "")),
            mistakes=str(data.get("mistakes", "")) or NO_MISTAKES,
            completion=bool(completed),
            completion_reason=str(data.get("completion_reason", "")),
            confidence=conf,
        )
        return Estimate(latent, reply.calls, complete=bool(completed))

    def completion(self, inp: LatentInput, latent: LatentState, next_action: str,
                   cancel: CancelToken | None = None) -> Estimate:
        return Estimate(latent, (), complete=bool(latent.completion))
