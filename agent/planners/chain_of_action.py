"""Auto-UI's chain-of-action planner: previous actions in, future plan + current action out.

The history is given as Auto-UI tuples (action type, touch and lift points as [y, x]
fractions, typed text); the reply is JSON with the remaining action-type plan and the
current action.  The plan travels in ``Proposal.plan`` so the user sees it.
"""

from __future__ import annotations

from dataclasses import dataclass

from agent import prompts
from agent.commands import CommandError, parse_command, parse_json_action
from agent.llm.base import LLMClient
from agent.planners.base import LLMStep, PlanContext, PlanError, notes_block
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

    def prompt(self, ctx: PlanContext) -> str:
        history = auto_ui_history([t.action for t in ctx.history], ctx.parse.screen_size)
        return prompts.render("chain_of_action", goal=ctx.goal, history=history, notes=notes_block(ctx.notes),
                              screen=ctx.screen)

    def propose(self, ctx: PlanContext) -> Proposal:
        step = LLMStep(self.client, images=ctx.images)
        prompt = self.prompt(ctx)
        reply = step.ask(prompt, "plan.chain_of_action", ctx.cancel, json=True, max_tokens=200)
        data = reply.data
        try:
            if not isinstance(data, dict):
                raise CommandError(f"expected a JSON object, got {type(data).__name__}")
            raw_action = data.get("action")
            if isinstance(raw_action, str):
                action = parse_command(raw_action, ctx.parse.screen_size)
            elif isinstance(raw_action, dict):
                action = parse_json_action(raw_action, ctx.parse.screen_size)
            else:
                raise CommandError("the reply has no \"action\"")
        except CommandError as exc:
            raise PlanError(f"plan.chain_of_action: {exc}", tuple(step.calls)) from None
        plan = data.get("plan") or []
        plan_t = tuple(str(p) for p in plan) if isinstance(plan, list) else (str(plan),)
        return Proposal(action=action, rationale=str(data.get("reason", "")), plan=plan_t, planner=self.name,
                        llm_calls=tuple(step.calls))
