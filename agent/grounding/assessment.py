"""Prompt2Task's assessment: check a proposed action before it runs.

Verdicts: follow (carry it out), change (pick another; the option is marked as failed),
retract (go back first), finish (the goal is met).  The reply also says whether the
model is confident; the runner asks the user when it is not.  A previously failed
option is caught without an LLM call.  With ``structured=True`` (and a server that
enforces JSON schemas) the verdict can only be one of the four.
"""

from __future__ import annotations

from dataclasses import dataclass

from agent import prompts
from agent.commands import action_key
from agent.llm.base import CancelToken, ChatRequest, LLMClient, LLMError, accepts_schema
from agent.types import Action, LLMCall

VERDICTS = ("follow", "change", "retract", "finish")

#: The assessment's reply when structured.
ASSESSMENT_SCHEMA = {
    "type": "object",
    "properties": {"verdict": {"enum": list(VERDICTS)}, "confident": {"type": "boolean"},
                   "confidence": {"type": "number", "minimum": 0, "maximum": 1},
                   "reason": {"type": "string", "maxLength": 200}},
    "required": ["verdict", "confident", "confidence", "reason"],
    "additionalProperties": False,
}


@dataclass(frozen=True, slots=True)
class Assessment:
    verdict: str
    confident: bool
    confidence: float | None = None
    reason: str = ""
    calls: tuple[LLMCall, ...] = ()


@dataclass
class Assessor:
    client: LLMClient
    threshold: float = 0.6
    structured: bool = False

    def assess(self, goal: str, history: tuple[str, ...], action: Action, screen: str,
               failed: tuple[Action, ...] = (), cancel: CancelToken | None = None) -> Assessment:
        if any(action_key(action) == action_key(f) for f in failed):
            return Assessment("change", True, 1.0, "this option already failed on this screen")
        prompt = prompts.render("assessment", goal=goal, history="; ".join(history) or "none",
                                action=action.describe(), failed="; ".join(f.describe() for f in failed) or "none",
                                screen=screen)
        try:
            schema = ASSESSMENT_SCHEMA if self.structured and accepts_schema(self.client) else True
            reply = self.client.chat(ChatRequest(prompt, purpose="assess", system=prompts.render("system"),
                                                 json_schema=schema, max_tokens=120), cancel)
        except LLMError as exc:
            # an assessment that cannot be obtained must not block the run: follow, unconfidently
            return Assessment("follow", False, None, f"assessment unavailable: {exc.message}", exc.calls)
        data = reply.data if isinstance(reply.data, dict) else {}
        verdict = str(data.get("verdict", "")).lower().strip()
        if verdict not in VERDICTS:
            return Assessment("follow", False, None, f"unreadable verdict {verdict!r}", reply.calls)
        conf = data.get("confidence")
        try:
            conf = min(1.0, max(0.0, float(conf))) if conf is not None else None
        except (TypeError, ValueError):
            conf = None
        confident_raw = data.get("confident")
        if isinstance(confident_raw, str):
            confident_raw = confident_raw.strip().lower() in ("true", "yes")
        confident = bool(confident_raw) if confident_raw is not None else (conf is not None and conf >= self.threshold)
        if conf is not None and conf < self.threshold:
            confident = False
        return Assessment(verdict, confident, conf, str(data.get("reason", "")), reply.calls)
