"""The LLM grounder (the latent-state paper's App. D style): pick an element from a JSON list.

The model sees the instruction, the goal and the screen's elements with their centres and
sizes, and answers with an element id; the action is aimed at that element's centre.
With ``structured=True`` (and a server that enforces JSON schemas) the reply's element
can only be the id of an element on this screen that nothing covers, or null.
Elements a dialog covers are never candidates.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agent import prompts
from agent.grounding.base import GroundContext, Grounded, GroundingError, aim_at
from agent.llm.base import ChatRequest, LLMClient, LLMError, accepts_schema
from agent.screen_text import element_list, elements_json
from agent.structured import choosable, is_covered
from agent.types import Action


def grounder_schema(ids: list[str]) -> dict[str, Any]:
    """``{"element": one of ids or null, "reason": short text}``."""
    return {
        "type": "object",
        "properties": {"element": {"anyOf": [{"enum": ids}, {"type": "null"}]},
                       "reason": {"type": "string", "maxLength": 200}},
        "required": ["element", "reason"],
        "additionalProperties": False,
    }


@dataclass
class LLMGrounder:
    client: LLMClient
    structured: bool = False

    def ground(self, action: Action, ctx: GroundContext) -> Grounded:
        size = ctx.parse.screen_size
        prompt = prompts.render("grounder", goal=ctx.goal, instruction=action.describe(), width=size.width,
                                height=size.height, elements=elements_json(ctx.parse))
        schema: dict[str, Any] | bool = True
        if self.structured and accepts_schema(self.client):
            schema = grounder_schema([e.id for e in choosable(ctx.parse)])
        try:
            reply = self.client.chat(ChatRequest(prompt, purpose="ground.llm", system=prompts.render("system"),
                                                 json_schema=schema, max_tokens=80), ctx.cancel)
        except LLMError as exc:
            raise GroundingError(f"LLM grounder failed: {exc.message}", element_list(ctx.parse), exc.calls) from None
        data = reply.data if isinstance(reply.data, dict) else {}
        eid = data.get("element", data.get("id"))
        element = ctx.parse.element(str(eid).strip("[]# ")) if eid is not None else None
        if element is None or is_covered(element):
            raise GroundingError(f"LLM grounder found no element for {action.describe()!r}: {data.get('reason', '')}",
                                 element_list(ctx.parse), reply.calls)
        return Grounded(aim_at(action, element, ctx.parse), (f"LLM grounder chose [{element.id}] {element.display_name!r}",),
                        reply.calls, element)
