"""VisionTasker's step planner: one element of the current screen per step, validated.

The prompt holds the task, the action history (past actions, not past screens), the
screen described block by block with element ids, and optional examples taken from
demonstrations.  A reply must name an element that exists on the current screen (by id,
or by words that match one); otherwise the model is told so and shown the list of
available elements, up to ``max_replans`` times.  The accepted action is grounded at
the element's centre.  With structured replies on (and a server that enforces them) the
reply is JSON whose element can only be one the screen lists, so no re-plan is needed
for a missing element; it first says which app or element the task needs (``needed``),
then the action, whose target comes first so that it follows what was just said.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from agent import prompts
from agent.commands import CommandError, parse_lenient
from agent.grounding.match import best_text_match
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
from agent.screen_text import element_list
from agent.structured import WHY_FIELD, ReplyForm, refuse_placeholder, reply_schema
from agent.types import Action, ActionType, Proposal, Target
from vision.types import ElementKind


@dataclass
class VisionTaskerPlanner:
    client: LLMClient
    max_replans: int = 2
    match_threshold: float = 0.75
    name: str = "visiontasker"
    uses_latent: bool = False
    structured: Structured = field(default_factory=Structured)

    def prompt(self, ctx: PlanContext, form: ReplyForm | None = None) -> str:
        history = " -> ".join(t.command for t in ctx.history) or "none yet"
        examples = ""
        if ctx.examples:
            examples = "Examples of how similar tasks were done before:\n" + "\n".join(
                f"- {e}" for e in ctx.examples) + "\n"
        forms = prompts.render("visiontasker_forms") if form is None else structured_reply_text(
            form, '{"needed": "<which app or element has what the task needs>", "action": {...}, '
                  '"why": "<one short sentence: why this action helps>"}')
        return prompts.render("visiontasker_step", goal=ctx.goal, history=history, examples=examples,
                              notes=notes_block(plan_notes(ctx)), screen=ctx.screen, forms=forms)

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
        if action.type is ActionType.TYPE and element.kind in _NOT_TYPABLE:
            return action, f"[{element.id}] is a {element.kind.value.replace('_', ' ')}, not a text field to type into"
        point = element.rect.center
        new_target = replace(target, element_id=element.id, point=point,
                             description=target.description or element.display_name)
        if action.type is ActionType.TYPE:
            return replace(action, target=new_target), None
        return replace(action, touch=point, target=new_target), None

    def propose(self, ctx: PlanContext) -> Proposal:
        step = LLMStep(self.client, images=ctx.images)
        form = self.structured.form(ctx) if self.structured.active(self.client) else None
        prompt = self.prompt(ctx, form)
        if form is not None:
            return self._structured(ctx, step, prompt, form)
        text = step.ask(prompt, "plan.visiontasker", ctx.cancel, max_tokens=60).text
        evidence: list[str] = []
        for attempt in range(self.max_replans + 1):
            try:
                refuse_placeholder(text)
                action = parse_lenient(_newest_step(text), ctx.parse.screen_size)
                action, problem = self.validate(action, ctx)
                if problem is not None:
                    evidence.append(f"reply: {problem}")
            except CommandError as exc:
                problem = f"the reply is not a valid action: {exc}"
                evidence.append("reply: unreadable")
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

    def _structured(self, ctx: PlanContext, step: LLMStep, prompt: str, form: ReplyForm) -> Proposal:
        reply = step.ask(prompt, "plan.visiontasker", ctx.cancel,
                         schema=reply_schema(form, thought="needed", why=True), max_tokens=200)
        try:
            action, evidence = read_structured(reply, form, ctx)
            action, problem = self.validate(action, ctx)
        except CommandError as exc:
            raise PlanError(f"plan.visiontasker: unreadable reply: {exc}", tuple(step.calls)) from None
        if problem is not None:
            raise PlanError(f"plan.visiontasker: {problem}", tuple(step.calls))
        data = reply.data if isinstance(reply.data, dict) else {}
        why = next((str(data[k]).strip() for k in (WHY_FIELD, "needed") if isinstance(data.get(k), str)
                    and str(data[k]).strip()), "")
        return Proposal(action=action, rationale=why or reply.text.strip(), planner=self.name,
                        evidence=(*evidence, *reply_checks(action, ctx)), llm_calls=tuple(step.calls))


_ = Target  # re-exported for type readers


#: Elements no reply may type into: controls, never text fields (a pixel-only parse may see an
#: empty field as text or an unknown box, so those stay allowed).
_NOT_TYPABLE = (ElementKind.BUTTON, ElementKind.SWITCH, ElementKind.CHECK_BOX, ElementKind.SEEK_BAR,
                ElementKind.RATING_BAR, ElementKind.RADIO_GROUP, ElementKind.PAGE_INDICATOR, ElementKind.STATUS_BAR,
                ElementKind.NAVIGATION_BAR)


def _newest_step(text: str) -> str:
    """The last step of a reply that goes on with the prompt's chain of steps taken
    ("tap Alice -> tap Call contact" -> "tap Call contact"): the prompt lists the history
    as "a -> b", and a small model often repeats it before its own step."""
    first = text.strip().splitlines()[0] if text.strip() else text
    return first.rsplit("->", 1)[-1].strip() if "->" in first else text
