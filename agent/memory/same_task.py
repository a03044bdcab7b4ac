"""Asking the model, once per run, whether the goal is a remembered goal in other words.

The words of two goals that mean the same may share nothing ("Put the phone in flight
mode", "Turn on airplane mode"); the scorer (``agent.memory.goals``) cannot tell, the
model often can.  ``SameTask.pick`` shows the model the goal and the remembered goals
taught on the current screen (numbered, likest words first, at most ``MAX_CHOICES``;
goals that contradict this one's numbers or on/off left out, and "none of these") and
takes the goal it chooses only when it chooses it again with the list the other way round
and "none of these" first.  The replies are JSON objects, kept to a schema where the
server enforces one.  The call is returned with the answer so
the run counts it like every other model call.

What it gets wrong costs little: the remembered step it leads to is a proposal the user
sees ("you approved this on … for “…”"), and a rejection there ends the equivalence for
the run (``agent.memory.run``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from agent import prompts
from agent.llm.base import CancelToken, ChatRequest, LLMClient, LLMError, accepts_schema
from agent.memory.goals import contradicts, rating, same_goal
from agent.types import LLMCall

log = logging.getLogger(__name__)

#: The most remembered goals shown to the model at once (the prompt stays short), the ones
#: whose words are likest the goal's first.
MAX_CHOICES = 8


#: The option that says the new task is none of the taught ones.
NONE = "none of these: a new task"


def same_task_schema(n: int) -> dict[str, object]:
    """``{"same": 1..n, "reason": short text}``."""
    return {"type": "object",
            "properties": {"same": {"type": "integer", "enum": list(range(1, n + 1))},
                           "reason": {"type": "string", "maxLength": 120}},
            "required": ["same", "reason"], "additionalProperties": False}


@dataclass
class SameTask:
    """The model as the judge of "the same task in other words"."""

    client: LLMClient

    def pick(self, goal: str, remembered: list[str], cancel: CancelToken | None = None
             ) -> tuple[str | None, tuple[LLMCall, ...]]:
        """The remembered goal that ``goal`` is in other words (None: none), and the calls made.

        Asked twice, the second time with the list the other way round and "none of them"
        first; only the same goal chosen both times counts (a model that picks the first
        line whatever it says cannot pass)."""
        choices = [g for g in dict.fromkeys(remembered)
                   if not same_goal(g, goal) and not contradicts(g, goal, strict=False)]
        choices = sorted(choices, key=lambda g: -rating(goal, g))[:MAX_CHOICES]  # the likeliest first
        if not choices:
            return None, ()
        first, calls = self._ask(goal, [*choices, NONE], cancel)
        if first is None or first == NONE:
            return None, calls
        second, more = self._ask(goal, [NONE, *reversed(choices)], cancel)
        agreed = first if second == first else None
        log.info("decision memory: %r is %s (asked twice: %r, %r)", goal,
                 repr(agreed) if agreed else "no task taught before", first, second)
        return agreed, (*calls, *more)

    def _ask(self, goal: str, options: list[str], cancel: CancelToken | None) -> tuple[str | None, tuple[LLMCall, ...]]:
        listed = "\n".join(f"{i}. {g}" for i, g in enumerate(options, 1))
        schema: dict[str, object] | bool = same_task_schema(len(options)) if accepts_schema(self.client) else True
        try:
            reply = self.client.chat(ChatRequest(prompts.render("same_task", goal=goal, tasks=listed),
                                                 purpose="memory.same_task", system=prompts.render("system"),
                                                 json_schema=schema, max_tokens=60), cancel)
        except LLMError as exc:
            log.info("decision memory: the model could not say whether %r was taught before: %s", goal, exc)
            return None, exc.calls
        data = reply.data if isinstance(reply.data, dict) else {}
        try:
            n = int(data.get("same", 0))
        except (TypeError, ValueError):
            n = 0
        return (options[n - 1] if 1 <= n <= len(options) else None), reply.calls
