"""Healing a macro step whose element is not found again: one grounding call.

When the re-identification cascade (``agent.macros.reidentify``) finds nothing for a
step, or finds it only ambiguously (``doubt``: two candidates its clues cannot tell
apart), the replay asks the model once which element of this screen the step means,
showing it the step's words, the recorded element's words and why the clues failed
(``ModelHealer``).  The replay then proposes the step aimed at that element, marked
*healed* (``agent.cost.HEALED``) and put to the user whatever the autonomy
(``agent.planners.base.ASK_USER``); the macro's next version keeps how it was healed
(``agent.macros.types.HealNote``) once the user approved it and the step had its effect.

No device; the model is reached only through the ``LLMClient`` given.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Protocol

from rapidfuzz import fuzz

from agent import prompts
from agent.grounding.llm_grounder import grounder_schema
from agent.llm.base import CancelToken, ChatRequest, LLMClient, LLMError, accepts_schema
from agent.macros.describe import toggle_inside
from agent.macros.fingerprint import fingerprint_similarity
from agent.macros.recorder import Observation, element_under
from agent.macros.reidentify import Match, MatchLevel, Thresholds
from agent.macros.types import MacroStep
from agent.screen_text import elements_json
from agent.structured import choosable
from agent.types import LLMCall
from vision.types import Element, ElementKind, ScreenParse

log = logging.getLogger(__name__)

_CHROME = (ElementKind.STATUS_BAR, ElementKind.NAVIGATION_BAR)


@dataclass(frozen=True, slots=True)
class HealAnswer:
    """The model's choice for a step (None: nothing fits) and the calls it took."""

    element: Element | None
    reason: str = ""
    calls: tuple[LLMCall, ...] = ()
    model: str = ""


class Healer(Protocol):
    def heal(self, step: MacroStep, parse: ScreenParse, missed: str,
             cancel: CancelToken | None = None) -> HealAnswer: ...


def recorded_words(step: MacroStep) -> str:
    fp = step.target.fingerprint if step.target is not None else None
    if fp is None:
        return "(no element was recorded)"
    words = ", ".join(f"{k} {v!r}" for k, v in (("text", fp.text), ("label", fp.label), ("id", fp.resource_id),
                                                 ("kind", fp.kind), ("in", fp.block_caption)) if v)
    return words or "(an element with no words)"


@dataclass
class ModelHealer:
    """One grounding call per heal (see the module docstring)."""

    client: LLMClient

    def heal(self, step: MacroStep, parse: ScreenParse, missed: str,
             cancel: CancelToken | None = None) -> HealAnswer:
        size = parse.screen_size
        prompt = prompts.render("heal", step=step.description or step.action.describe(), recorded=recorded_words(step),
                                missed=missed, width=size.width, height=size.height, elements=elements_json(parse))
        ids = [e.id for e in choosable(parse)]
        schema: dict[str, object] | bool = grounder_schema(ids) if accepts_schema(self.client) else True
        model = str(getattr(self.client, "model", ""))
        try:
            reply = self.client.chat(ChatRequest(prompt, purpose="macro.heal", system=prompts.render("system"),
                                                 json_schema=schema, max_tokens=80), cancel)
        except LLMError as exc:
            log.info("healing %r: the model gave no answer: %s", step.description, exc)
            return HealAnswer(None, str(exc), exc.calls, model)
        data = reply.data if isinstance(reply.data, dict) else {}
        eid = data.get("element")
        element = parse.element(str(eid).strip("[]# ")) if eid is not None else None
        reason = str(data.get("reason", ""))[:200]
        if element is not None and element.id not in ids:
            element = None  # covered, or not something a step can act on
        if element is not None and not switches_like(step, element, parse):
            reason = f"the model chose “{element.display_name}”, which switches nothing, for a switch step"
            element = None
        return HealAnswer(element, reason, reply.calls, model)


def switches_like(step: MacroStep, element: Element, parse: ScreenParse) -> bool:
    """A step that flipped a switch (``expect_checked``) may only be healed onto an element
    whose tap flips one (the element, or the row under its centre, holds a switch)."""
    if step.expect_checked is None:
        return True
    c = element.rect.center
    holder = element_under(parse, c.x, c.y)
    return toggle_inside(element, parse) is not None or (holder is not None and toggle_inside(holder, parse)
                                                         is not None)


def doubt(step: MacroStep, match: Match, obs: Observation, thresholds: Thresholds | None = None) -> str:
    """Why a match cannot be trusted to run alone ("" when it can): the words matched
    several elements, or one icon label several icons, and the recorded fingerprint rates
    the best two within the cascade's own margin of each other; or the match rests on the
    fingerprint alone and beats the runner-up by less than ``Thresholds.doubt_margin``."""
    fp = step.target.fingerprint if step.target is not None else None
    if fp is None or match.element is None:
        return ""
    th = thresholds or Thresholds()
    cands = [e for e in obs.parse.uncovered() if e.enabled and e.kind not in _CHROME]
    if match.level is MatchLevel.FINGERPRINT:
        scores = sorted((fingerprint_similarity(fp, e, obs.parse, obs.image).score for e in cands), reverse=True)
        margin = scores[0] - scores[1] if len(scores) > 1 else 1.0
        return "" if margin >= th.doubt_margin else (
            f"ambiguous: found only by its look and place, {margin:.2f} ahead of the next element")
    if match.level not in (MatchLevel.TEXT, MatchLevel.ICON_LABEL):
        return ""
    if match.level is MatchLevel.TEXT:
        same = [e for e in cands if e.text and fuzz.ratio(e.text.casefold(), fp.text.casefold()) >= th.text_min_ratio]
        what = f"{len(same)} elements read {fp.text!r}"
    else:
        same = [e for e in cands if e.label and e.label.casefold() == fp.label.casefold()]
        what = f"{len(same)} icons are labelled {fp.label!r}"
    if len(same) < 2:
        return ""
    scores = sorted((fingerprint_similarity(fp, e, obs.parse, obs.image).score for e in same), reverse=True)
    if scores[0] - scores[1] >= th.fingerprint_margin:
        return ""
    return f"ambiguous: {what} and the recording cannot tell them apart"
