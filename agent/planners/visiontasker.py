"""VisionTasker's step planner: one element of the current screen per step, validated.

The prompt holds the task, the action history (past actions, not past screens), the
screen described block by block with element ids, and optional examples taken from
demonstrations.  A reply must name an element that exists on the current screen (by id,
or by words that match one); otherwise the model is told so and shown the list of
available elements, up to ``max_replans`` times.  The accepted action is grounded at
the element's centre.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from agent import prompts
from agent.commands import CommandError, parse_lenient
from agent.grounding.match import best_text_match
from agent.llm.base import LLMClient
from agent.planners.base import LLMStep, PlanContext, PlanError, notes_block
from agent.screen_text import element_list
from agent.types import Action, ActionType, Proposal, Target


@dataclass
class VisionTaskerPlanner:
    client: LLMClient
    max_replans: int = 2
    match_threshold: float = 0.75
    name: str = "visiontasker"
    uses_latent: bool = False

    def prompt(self, ctx: PlanContext) -> str:
        history = " -> ".join(t.command for t in ctx.history) or "none yet"
        examples = ""
        if ctx.examples:
            examples = "Examples of how similar tasks were done before:\n" + "\n".join(
                f"- {e}" for e in ctx.examples) + "\n"
        return prompts.render("visiontasker_step", goal=ctx.goal, history=history, examples=examples,
                              notes=notes_block(ctx.notes), screen=ctx.screen)

    def validate(self, action: Action, ctx: PlanContext) -> tuple[Action, str | None]:
        """Ground the action on the current screen, or say why it cannot be."""
        if action.type not in (ActionType.TAP, ActionType.LONG_PRESS, ActionType.TYPE):
            return action, None
        target = action.target
        if target is None:
            if action.type is ActionType.TYPE:
                return action, None  # type into the focused field
            return action, None if action.touch is not None else "no element named"
        element = ctx.parse.element(target.element_id) if target.element_id else None
        if element is None and target.description:
            match = best_text_match(target.description, ctx.parse, self.match_threshold)
            element = match[0] if match else None
        if element is None:
            what = f"[{target.element_id}]" if target.element_id else repr(target.description)
            return action, f"there is no element {what} on this screen"
        point = element.rect.center
        new_target = replace(target, element_id=element.id, point=point,
                             description=target.description or element.display_name)
        if action.type is ActionType.TYPE:
            return replace(action, target=new_target), None
        return replace(action, touch=point, target=new_target), None

    def propose(self, ctx: PlanContext) -> Proposal:
        step = LLMStep(self.client, images=ctx.images)
        prompt = self.prompt(ctx)
        text = step.ask(prompt, "plan.visiontasker", ctx.cancel, max_tokens=60).text
        evidence: list[str] = []
        for attempt in range(self.max_replans + 1):
            try:
                action = parse_lenient(text, ctx.parse.screen_size)
                action, problem = self.validate(action, ctx)
            except CommandError as exc:
                problem = f"the reply is not a valid action: {exc}"
            if problem is None:
                return Proposal(action=action, rationale=text.strip(), planner=self.name,
                                evidence=tuple(evidence), llm_calls=tuple(step.calls))
            evidence.append(f"re-plan {attempt + 1}: {problem}")
            if attempt == self.max_replans:
                break
            replan = prompt + "\n\n" + prompts.render("visiontasker_replan", answer=text.strip()[:200],
                                                      problem=problem, elements=element_list(ctx.parse))
            text = step.ask(replan, "plan.visiontasker.replan", ctx.cancel, max_tokens=60).text
        raise PlanError(f"plan.visiontasker: no valid element after {self.max_replans} re-plans "
                        f"({evidence[-1] if evidence else 'no reply'})", tuple(step.calls))


_ = Target  # re-exported for type readers
