"""Prompt2Task's grounding ladder for instructions, with the level that matched as evidence.

1. history: an instruction grounded before is re-found by the stored element fingerprint;
2. strict text match: LCS similarity between the instruction's object and element words;
3. the LLM picks a strategy: redirect (another element), add (an extra step first),
   skip (instruction not applicable), expand (explore past the instructions), or
   block (the user must demonstrate).

Successful groundings are remembered in a ``GroundingMemory`` (in memory; the knowledge
module may persist it).  Skips and blocks are reported through ``LadderResult``.
Elements a dialog covers are never candidates; with ``structured=True`` (and a server
that enforces JSON schemas) the strategy and element can only be known ones.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agent import prompts
from agent.commands import CommandError, normalise_words, parse_command
from agent.grounding.base import GroundContext, Grounded, GroundingError, aim_at, needs_grounding, uncovered
from agent.grounding.match import best_text_match, runner_up
from agent.llm.base import ChatRequest, LLMClient, LLMError, accepts_schema
from agent.screen_text import element_list
from agent.types import Action, Fingerprint, LLMCall
from vision.types import Element, ScreenParse

STRATEGIES = ("redirect", "add", "skip", "expand", "block")


def fingerprint_of(e: Element, parse: ScreenParse) -> Fingerprint:
    size = parse.screen_size
    c = e.rect.center
    return Fingerprint(text=e.text, label=e.label, resource_id=e.resource_id, class_name=e.class_name,
                       kind=e.kind.value, rel_x=c.x / size.width, rel_y=c.y / size.height)


def fingerprint_score(fp: Fingerprint, e: Element, parse: ScreenParse) -> float:
    """0..1 agreement between a stored fingerprint and an element (words count most)."""
    score, weight = 0.0, 0.0
    for a, b, w in ((fp.resource_id, e.resource_id, 3.0), (fp.text, e.text, 3.0), (fp.label, e.label, 2.0),
                    (fp.class_name, e.class_name, 0.5), (fp.kind, e.kind.value, 0.5)):
        if a or b:
            weight += w
            score += w if a == b else 0.0
    if fp.rel_x is not None and fp.rel_y is not None:
        c = e.rect.center
        d = abs(fp.rel_x - c.x / parse.screen_size.width) + abs(fp.rel_y - c.y / parse.screen_size.height)
        weight += 1.0
        score += max(0.0, 1.0 - 4 * d)
    return score / weight if weight else 0.0


@dataclass
class GroundingMemory:
    """Instruction (normalised words) -> fingerprint of the element it was grounded on."""

    entries: dict[str, Fingerprint] = field(default_factory=dict)
    threshold: float = 0.55

    def remember(self, instruction: str, e: Element, parse: ScreenParse) -> None:
        self.entries[normalise_words(instruction)] = fingerprint_of(e, parse)

    def recall(self, instruction: str, parse: ScreenParse) -> tuple[Element, float] | None:
        fp = self.entries.get(normalise_words(instruction))
        if fp is None:
            return None
        scored = sorted(((fingerprint_score(fp, e, parse), e) for e in parse.uncovered()), key=lambda t: -t[0])
        if scored and scored[0][0] >= self.threshold:
            return scored[0][1], round(scored[0][0], 3)
        return None


@dataclass(frozen=True, slots=True)
class LadderResult:
    level: str  # history | text | redirect | add | skip | expand | block
    grounded: Grounded | None = None
    reason: str = ""
    calls: tuple[LLMCall, ...] = ()


def ladder_schema(ids: list[str]) -> dict[str, Any]:
    """The strategy reply when structured: a known strategy, an element of this screen or null."""
    return {
        "type": "object",
        "properties": {"strategy": {"enum": list(STRATEGIES)},
                       "element": {"anyOf": [{"enum": ids}, {"type": "null"}]},
                       "action": {"type": "string", "maxLength": 120},
                       "reason": {"type": "string", "maxLength": 200}},
        "required": ["strategy", "element", "action", "reason"],
        "additionalProperties": False,
    }


@dataclass
class LadderGrounder:
    client: LLMClient | None
    memory: GroundingMemory = field(default_factory=GroundingMemory)
    threshold: float = 0.75
    structured: bool = False

    def ladder(self, action: Action, ctx: GroundContext, instruction: str = "",
               remaining: tuple[str, ...] = (), notes: tuple[str, ...] = ()) -> LadderResult:
        instruction = instruction or action.describe()
        if not needs_grounding(action):
            return LadderResult("text", Grounded(action, ("no grounding needed",)))
        hit = self.memory.recall(instruction, ctx.parse)
        if hit is not None:
            e, score = hit
            return LadderResult("history", Grounded(aim_at(action, e, ctx.parse), (f"history match [{e.id}] score={score}",),
                                                    element=e))
        target = action.target
        named = ctx.parse.element(target.element_id) if target is not None and target.element_id else None
        if named is not None and not named.covered:
            return self._ok("text", action, named, ctx, instruction, f"element id [{named.id}]")
        if target is not None and target.description:
            m = best_text_match(target.description, uncovered(ctx.parse), self.threshold)
            if m is not None:
                rival = runner_up(target.description, uncovered(ctx.parse), m[0])
                return self._ok("text", action, m[0], ctx, instruction, f"strict text match sim={m[1]} next={rival}")
        if self.client is None:
            return LadderResult("block", reason="no text match and no LLM to choose a strategy")
        return self._ask_strategy(action, ctx, instruction, remaining, notes)

    def _ok(self, level: str, action: Action, e: Element, ctx: GroundContext, instruction: str,
            why: str, calls: tuple[LLMCall, ...] = ()) -> LadderResult:
        self.memory.remember(instruction, e, ctx.parse)
        return LadderResult(level, Grounded(aim_at(action, e, ctx.parse), (f"{level}: {why} [{e.id}] {e.display_name!r}",),
                                            calls, e), calls=calls)

    def _ask_strategy(self, action: Action, ctx: GroundContext, instruction: str, remaining: tuple[str, ...],
                      notes: tuple[str, ...]) -> LadderResult:
        assert self.client is not None
        prompt = prompts.render(
            "ladder", goal=ctx.goal, instruction=instruction, remaining="; ".join(remaining) or "none",
            history="; ".join(ctx.history) or "none", notes="\n".join(f"- {n}" for n in notes),
            elements=element_list(ctx.parse))
        try:
            schema: dict[str, Any] | bool = True
            if self.structured and accepts_schema(self.client):
                schema = ladder_schema([e.id for e in uncovered(ctx.parse).elements])
            reply = self.client.chat(ChatRequest(prompt, purpose="ground.ladder", system=prompts.render("system"),
                                                 json_schema=schema, max_tokens=120), ctx.cancel)
        except LLMError as exc:
            raise GroundingError(f"grounding ladder failed: {exc.message}", element_list(ctx.parse), exc.calls) from None
        data = reply.data if isinstance(reply.data, dict) else {}
        strategy = str(data.get("strategy", "")).lower().strip()
        reason = str(data.get("reason", ""))
        if strategy not in STRATEGIES:
            return LadderResult("block", reason=f"unknown strategy {strategy!r}: {reason}", calls=reply.calls)
        if strategy in ("skip", "block"):
            return LadderResult(strategy, reason=reason, calls=reply.calls)
        new_action = action
        command = data.get("action")
        if isinstance(command, str) and command.strip():
            try:
                new_action = parse_command(command, ctx.parse.screen_size)
            except CommandError:
                new_action = action
        eid = data.get("element")
        e = ctx.parse.element(str(eid).strip("[]# ")) if eid not in (None, "", "null") else None
        if e is None and new_action.target is not None and new_action.target.element_id:
            e = ctx.parse.element(new_action.target.element_id)
        if not needs_grounding(new_action):
            return LadderResult(strategy, Grounded(new_action, (f"{strategy}: {reason}",), reply.calls),
                                reason, reply.calls)
        if e is None:
            return LadderResult("block", reason=f"{strategy} named no element on this screen: {reason}",
                                calls=reply.calls)
        if strategy == "redirect":
            return self._ok(strategy, new_action, e, ctx, instruction, reason, reply.calls)
        return LadderResult(strategy, Grounded(aim_at(new_action, e, ctx.parse), (f"{strategy}: {reason}",), reply.calls, e),
                            reason, reply.calls)

    # the ``Grounder`` protocol: skip/block become a grounding error for the runner
    def ground(self, action: Action, ctx: GroundContext) -> Grounded:
        result = self.ladder(action, ctx)
        if result.grounded is not None:
            g = result.grounded
            return Grounded(g.action, (f"ladder level: {result.level}", *g.evidence), result.calls or g.calls, g.element)
        raise GroundingError(f"grounding ladder: {result.level} ({result.reason})", element_list(ctx.parse),
                             result.calls, blocked=result.level == "block")
