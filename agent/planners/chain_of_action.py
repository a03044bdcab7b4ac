"""Auto-UI's chain-of-action planner: previous actions in, future plan + current action out.

The history is given as Auto-UI tuples (action type, touch and lift points as [y, x]
fractions, typed text); the reply is JSON with the remaining action-type plan and the
current action.  The plan travels in ``Proposal.plan`` so the user sees it.  With
structured replies on (and a server that enforces them) the reply's schema is built for
the screen: the plan's steps are action types, the action names an element on it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agent import prompts
from agent.commands import CommandError, parse_command, parse_json_action
from agent.llm.base import LLMClient
from agent.planners.base import (
    LLMStep,
    PlanContext,
    PlanError,
    Structured,
    notes_block,
    plan_notes,
    read_structured,
    reply_checks,
    structured_reply_text,
)
from agent.structured import THOUGHT_CHARS, ReplyForm, refuse_placeholder, reply_schema
from agent.types import Action, NotRepresentable, Proposal
from vision.geometry import Size


def auto_ui_history(actions: list[Action], screen: Size) -> str:
    if not actions:
        return "(none: this is the first step)"
    lines = []
    for a in actions:
        try:
            d = a.to_aitw(screen)
            name = {3: "type", 4: "dual_point", 5: "press_back", 6: "press_home", 7: "press_enter",
                    10: "complete", 11: "impossible"}[d["action_type"]]
            lines.append(f"action_type: {name}, touch_point: {d['touch_point']}, lift_point: {d['lift_point']}, "
                         f"typed_text: {d['typed_text']!r}")
        except NotRepresentable:
            lines.append(f"action_type: {a.type.value}, {a.describe()}")
    return "\n".join(lines)


@dataclass
class ChainOfActionPlanner:
    client: LLMClient
    name: str = "chain"
    uses_latent: bool = False
    structured: Structured = field(default_factory=Structured)

    def prompt(self, ctx: PlanContext, form: ReplyForm | None = None) -> str:
        history = auto_ui_history([t.action for t in ctx.history], ctx.parse.screen_size)
        if form is None:
            reply = prompts.render("chain_reply")
        else:
            reply = structured_reply_text(
                form, '"plan" (the action types still needed after this one, in order), then "action", then '
                      '"reason" (one short sentence)', ctx.goal)
        return prompts.render("chain_of_action", goal=ctx.goal, history=history, notes=notes_block(plan_notes(ctx)),
                              screen=ctx.screen, reply=reply)

    def schema(self, form: ReplyForm) -> dict[str, Any]:
        kinds = [k for k in form.kinds if k not in ("long_press", "wait", "impossible")]
        plan = {"type": "array", "items": {"enum": kinds}, "maxItems": 6}
        body = reply_schema(form, extra={"reason": {"type": "string", "maxLength": THOUGHT_CHARS}})
        body["properties"] = {"plan": plan, **body["properties"]}
        body["required"] = ["plan", *body["required"]]
        return body

    def propose(self, ctx: PlanContext) -> Proposal:
        step = LLMStep(self.client, images=ctx.images)
        form = self.structured.form(ctx) if self.structured.active(self.client) else None
        prompt = self.prompt(ctx, form)
        reply = step.ask(prompt, "plan.chain_of_action", ctx.cancel, json=True, max_tokens=200,
                         schema=self.schema(form) if form is not None else None)
        data = reply.data
        evidence: tuple[str, ...] = ()
        try:
            if form is not None:
                action, evidence = read_structured(reply, form, ctx)
            elif not isinstance(data, dict):
                raise CommandError(f"expected a JSON object, got {type(data).__name__}")
            else:
                raw_action = data.get("action")
                if isinstance(raw_action, str):
                    refuse_placeholder(raw_action)
                    action = parse_command(raw_action, ctx.parse.screen_size)
                elif isinstance(raw_action, dict):
                    refuse_placeholder(str(raw_action.get("element", "")))
                    action = parse_json_action(raw_action, ctx.parse.screen_size)
                else:
                    raise CommandError("the reply has no \"action\"")
        except CommandError as exc:
            raise PlanError(f"plan.chain_of_action: {exc}", tuple(step.calls)) from None
        data = data if isinstance(data, dict) else {}
        plan = data.get("plan") or []
        plan_t = tuple(str(p) for p in plan) if isinstance(plan, list) else (str(plan),)
        return Proposal(action=action, rationale=str(data.get("reason", "")), plan=plan_t, planner=self.name,
                        evidence=(*evidence, *reply_checks(action, ctx)), llm_calls=tuple(step.calls))
