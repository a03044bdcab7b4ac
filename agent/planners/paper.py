"""The latent-state paper's three reasoning methods, each with (+) and without (-) latent state.

* zero-shot: one greedy call, the reply is the command.
* CoT-SC: ``samples`` calls at ``temperature`` > 0, each reasoning then "Answer: ...";
  the answers are parsed, normalised and the majority wins (vote share = confidence).
* ReAct: "Thought / Action" replies; the prompt carries the thought-action trace but only
  the last two earlier screens.

"+" variants see the progression and mistakes estimates instead of the commanded
history and do not offer "done" (stopping comes from the completion estimate);
"-" variants see the commanded history and stop on a predicted "done".
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from agent import prompts
from agent.commands import CommandError, action_key, extract_answer, extract_thought_action, parse_lenient
from agent.llm.base import LLMClient
from agent.planners.base import (
    LLMStep,
    PlanContext,
    PlanError,
    commanded_history,
    notes_block,
    parse_or_reask,
)
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

    def __post_init__(self) -> None:
        if self.method not in ("zeroshot", "cotsc", "react"):
            raise ValueError(f"unknown reasoning method {self.method!r}")
        if self.samples < 1:
            raise ValueError("CoT-SC needs at least one sample")

    @property
    def name(self) -> str:
        return f"{self.method}{'+' if self.uses_latent else '-'}"

    # ---- prompt ---------------------------------------------------------------------
    def prompt(self, ctx: PlanContext) -> str:
        style = prompts.render(f"style_{self.method}")
        notes = notes_block(ctx.notes)
        if self.uses_latent:
            latent = ctx.latent
            body = prompts.render(
                "next_plus", goal=ctx.goal, progression=(latent.progression if latent else "") or "nothing yet.",
                mistakes=(latent.mistakes if latent else "") or "none known.", notes=notes, screen=ctx.screen,
                style=style)
        else:
            body = prompts.render("next_minus", goal=ctx.goal, history=commanded_history(ctx.history), notes=notes,
                                  screen=ctx.screen, style=style)
        if self.method == "cotsc":
            return prompts.render("examples_cotsc") + body
        if self.method == "react":
            return prompts.render("examples_react") + self._trace(ctx) + body
        return body

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
        prompt = self.prompt(ctx)
        if self.method == "cotsc":
            return self._cotsc(ctx, step, prompt)
        purpose = f"plan.{self.name}"
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
                        llm_calls=tuple(step.calls))

    def _without_done(self, action: Action) -> Action:
        # "+" agents stop on the completion estimate, not on a predicted "done"; a stray
        # "done" becomes a wait so that the completion check decides.
        if self.uses_latent and action.type.value == "complete":
            return Action.simple("wait")
        return action

    def _cotsc(self, ctx: PlanContext, step: LLMStep, prompt: str) -> Proposal:
        votes: Counter[str] = Counter()
        first: dict[str, tuple[Action, str]] = {}
        failures: list[str] = []
        for i in range(self.samples):
            reply = step.ask(prompt, f"plan.{self.name}.sample{i + 1}", ctx.cancel, temperature=self.temperature,
                             max_tokens=200)
            answer = extract_answer(reply.text)
            try:
                action = self._without_done(parse_lenient(answer, ctx.parse.screen_size))
            except CommandError as exc:
                failures.append(str(exc))
                continue
            key = action_key(action)
            votes[key] += 1
            first.setdefault(key, (action, reply.text.strip()))
        if not votes:
            raise PlanError(f"plan.{self.name}: none of {self.samples} samples gave a readable action "
                            f"({failures[0] if failures else 'no reply'})", tuple(step.calls))
        key, count = votes.most_common(1)[0]
        action, reasoning = first[key]
        tally = ", ".join(f"{k} ×{n}" for k, n in votes.most_common())
        return Proposal(action=action, rationale=reasoning, latent=ctx.latent, planner=self.name,
                        confidence=round(count / self.samples, 3), evidence=(f"votes: {tally}",),
                        llm_calls=tuple(step.calls))
