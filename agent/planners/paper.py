"""The latent-state paper's three reasoning methods, each with (+) and without (-) latent state.

* zero-shot: one greedy call, the reply is the command.
* CoT-SC: ``samples`` calls at ``temperature`` > 0, each reasoning then "Answer: ...";
  the answers are parsed, normalised and the majority wins (vote share = confidence).
* ReAct: "Thought / Action" replies; the prompt carries the thought-action trace but only
  the last two earlier screens.

"+" variants see the progression and mistakes estimates instead of the commanded
history and do not offer "done" (stopping comes from the completion estimate);
"-" variants see the commanded history and stop on a predicted "done".

With structured replies on (and a server that enforces schemas) every call asks for a
JSON reply built for the screen: ``{"action": ...}`` for zero-shot, with a leading
``"thought"`` for ReAct and ``"reasoning"`` for CoT-SC; the worked examples are shown
in the same form.  Worked examples always come from a made-up app, never this phone's.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from agent import prompts
from agent.commands import CommandError, action_key, extract_answer, extract_thought_action, parse_lenient
from agent.llm.base import LLMClient, LLMReply
from agent.planners.base import (
    LLMStep,
    PlanContext,
    PlanError,
    Structured,
    commanded_history,
    notes_block,
    parse_or_reask,
    plan_notes,
    read_structured,
    reask_evidence,
    reply_checks,
    structured_reply_text,
)
from agent.structured import WHY_FIELD, ReplyForm, refuse_placeholder, reply_schema
from agent.types import Action, Proposal

# The forms carry placeholders (which the command parser refuses) rather than concrete
# examples: a small model parrots a concrete example, and "type 'hello'" would then be
# typed on the phone.
_REASK = ("Your reply could not be read as a phone action ({error}). Reply again with only one action, in one "
          "of these forms: tap <element>, type '<text>' in <field>, scroll down, open <app>, go back, done.\n"
          "Your reply was: {reply}")


def _reask(text: str, error: str) -> str:
    return _REASK.format(error=error, reply=text.strip()[:300])


@dataclass
class PaperPlanner:
    client: LLMClient
    method: str  # zeroshot | cotsc | react
    uses_latent: bool
    samples: int = 8
    temperature: float = 0.5
    keep_observations: int = 2
    structured: Structured = field(default_factory=Structured)

    def __post_init__(self) -> None:
        if self.method not in ("zeroshot", "cotsc", "react"):
            raise ValueError(f"unknown reasoning method {self.method!r}")
        if self.samples < 1:
            raise ValueError("CoT-SC needs at least one sample")

    @property
    def name(self) -> str:
        return f"{self.method}{'+' if self.uses_latent else '-'}"

    # ---- prompt ---------------------------------------------------------------------
    _WHY = '"why": "<one short sentence: why this action helps>"'
    _FIELDS = {"zeroshot": '{"action": {...}, ' + _WHY + '}',
               "react": '{"thought": "<what you notice and why, in a sentence or two>", "action": {...}, '
                        + _WHY + '}',
               "cotsc": '{"reasoning": "<think it through in a few sentences>", "action": {...}, ' + _WHY + '}'}
    _THOUGHT = {"zeroshot": None, "react": "thought", "cotsc": "reasoning"}

    def prompt(self, ctx: PlanContext, form: ReplyForm | None = None) -> str:
        """The prompt; ``form`` given: the structured-reply variant for that screen form."""
        if form is None:
            style = prompts.render(f"style_{self.method}")
            choices = prompts.render("choices_plus" if self.uses_latent else "choices_minus")
            suffix = ""
        else:
            style = ""
            choices = structured_reply_text(form, self._FIELDS[self.method], ctx.goal)
            suffix = "_json"
        notes = notes_block(plan_notes(ctx))
        if self.uses_latent:
            latent = ctx.latent
            body = prompts.render(
                "next_plus", goal=ctx.goal, progression=(latent.progression if latent else "") or "nothing yet.",
                mistakes=(latent.mistakes if latent else "") or "none known.", notes=notes, screen=ctx.screen,
                choices=choices, style=style)
        else:
            body = prompts.render("next_minus", goal=ctx.goal, history=commanded_history(ctx.history), notes=notes,
                                  screen=ctx.screen, choices=choices, style=style)
        if self.method == "cotsc":
            return prompts.render("examples_cotsc" + suffix) + body
        if self.method == "react":
            return prompts.render("examples_react" + suffix) + self._trace(ctx) + body
        return body

    def form(self, ctx: PlanContext) -> ReplyForm | None:
        """The structured-reply form for this screen, or None for free text."""
        if not self.structured.active(self.client):
            return None
        return self.structured.form(ctx, allow_done=not self.uses_latent)

    def _trace(self, ctx: PlanContext) -> str:
        if not ctx.history:
            return ""
        lines = []
        first_shown = len(ctx.history) - self.keep_observations
        for i, t in enumerate(ctx.history, 1):
            if i - 1 >= first_shown and t.screen:
                lines.append(f"Observation {i}:\n{t.screen}")
            if t.thought:
                lines.append(f"Thought {i}: {t.thought}")
            lines.append(f"Action {i}: {t.command}")
        return prompts.render("react_history", trace="\n".join(lines)) + "\n"

    # ---- propose --------------------------------------------------------------------
    def propose(self, ctx: PlanContext) -> Proposal:
        step = LLMStep(self.client, images=ctx.images)
        form = self.form(ctx)
        prompt = self.prompt(ctx, form)
        if self.method == "cotsc":
            return self._cotsc(ctx, step, prompt, form)
        purpose = f"plan.{self.name}"
        if form is not None:
            return self._structured(ctx, step, prompt, form, purpose)
        reply = step.ask(prompt, purpose, ctx.cancel, max_tokens=200 if self.method == "react" else 60)
        thought = ""
        if self.method == "react":
            thought, _ = extract_thought_action("Thought: " + reply.text)

            def answer_of(text: str) -> str:
                if re.search(r"\baction\s*\d*\s*:", text, re.I):
                    return extract_thought_action("Thought: " + text)[1]
                return text
        else:
            def answer_of(text: str) -> str:
                return text
        action, text = parse_or_reask(step, ctx, reply.text, answer_of, _reask, purpose)
        action = self._without_done(action)
        return Proposal(action=action, rationale=thought or text.strip(), latent=ctx.latent, planner=self.name,
                        evidence=(*reask_evidence(step.calls), *reply_checks(action, ctx)),
                        llm_calls=tuple(step.calls))

    def _structured(self, ctx: PlanContext, step: LLMStep, prompt: str, form: ReplyForm, purpose: str) -> Proposal:
        thought_key = self._THOUGHT[self.method]
        reply = step.ask(prompt, purpose, ctx.cancel, schema=reply_schema(form, thought=thought_key, why=True),
                         max_tokens=240 if thought_key else 120)
        try:
            action, evidence = read_structured(reply, form, ctx)
        except CommandError as exc:
            raise PlanError(f"{purpose}: unreadable reply: {exc}", tuple(step.calls)) from None
        action = self._without_done(action)
        thought = _field(reply, WHY_FIELD) or _field(reply, thought_key)
        return Proposal(action=action, rationale=thought or reply.text.strip(), latent=ctx.latent,
                        planner=self.name, evidence=(*evidence, *reply_checks(action, ctx)),
                        llm_calls=tuple(step.calls))

    def _without_done(self, action: Action) -> Action:
        # "+" agents stop on the completion estimate, not on a predicted "done"; a stray
        # "done" becomes a wait so that the completion check decides.
        if self.uses_latent and action.type.value == "complete":
            return Action.simple("wait")
        return action

    def _cotsc(self, ctx: PlanContext, step: LLMStep, prompt: str, form: ReplyForm | None = None) -> Proposal:
        votes: Counter[str] = Counter()
        first: dict[str, tuple[Action, str]] = {}
        failures: list[str] = []
        schema = reply_schema(form, thought="reasoning", why=True) if form is not None else None
        for i in range(self.samples):
            reply = step.ask(prompt, f"plan.{self.name}.sample{i + 1}", ctx.cancel, temperature=self.temperature,
                             max_tokens=200, schema=schema)
            try:
                if form is not None:
                    action = self._without_done(read_structured(reply, form, ctx)[0])
                else:
                    answer = extract_answer(reply.text)
                    refuse_placeholder(answer)
                    action = self._without_done(parse_lenient(answer, ctx.parse.screen_size))
            except CommandError as exc:
                failures.append(str(exc))
                continue
            key = action_key(action)
            votes[key] += 1
            first.setdefault(key, (action, _field(reply, WHY_FIELD) or reply.text.strip()))
        if not votes:
            raise PlanError(f"plan.{self.name}: none of {self.samples} samples gave a readable action "
                            f"({failures[0] if failures else 'no reply'})", tuple(step.calls))
        key, count = votes.most_common(1)[0]
        action, reasoning = first[key]
        tally = ", ".join(f"{k} ×{n}" for k, n in votes.most_common())
        unread = tuple(f"reply: unreadable sample ({f})" for f in failures)
        return Proposal(action=action, rationale=reasoning, latent=ctx.latent, planner=self.name,
                        confidence=round(count / self.samples, 3),
                        evidence=(f"votes: {tally}", *unread, *reply_checks(action, ctx)),
                        llm_calls=tuple(step.calls))


def _field(reply: LLMReply, key: str | None) -> str:
    data = reply.data
    if key and isinstance(data, dict) and isinstance(data.get(key), str):
        return str(data[key]).strip()
    return ""
