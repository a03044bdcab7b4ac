"""Finding a recorded step's element again on the current screen.

The cascade, cheapest and surest first: the exact element id → the resource id → the
text → the icon label → fingerprint similarity (text, class, block, relative position,
crop hash) → an LLM grounder given the step's words.  The level that matched is
reported with the element so replays can tell how robust each step was.

Pure functions plus an optional grounder callable; no device.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

import numpy as np
from rapidfuzz import fuzz

from agent.macros.fingerprint import fingerprint_similarity
from agent.types import Fingerprint, Target
from vision.types import Element, ElementKind, ScreenParse

log = logging.getLogger(__name__)

#: ``grounder(step_words, parse) -> element id or None``: an LLM (or any) grounder.
Grounder = Callable[[str, ScreenParse], "str | None"]


class MatchLevel(StrEnum):
    EXACT_ID = "exact_id"
    RESOURCE_ID = "resource_id"
    TEXT = "text"
    ICON_LABEL = "icon_label"
    FINGERPRINT = "fingerprint"
    LLM = "llm_grounder"
    COORDINATES = "coordinates"  # no element was recorded: the scaled raw point is used
    NOT_NEEDED = "not_needed"  # the step needs no element (open app, type, keys)
    NONE = "none"  # nothing matched


#: The order of the cascade (the other members are outcomes, not levels one tries).
CASCADE: tuple[MatchLevel, ...] = (
    MatchLevel.EXACT_ID, MatchLevel.RESOURCE_ID, MatchLevel.TEXT, MatchLevel.ICON_LABEL,
    MatchLevel.FINGERPRINT, MatchLevel.LLM,
)


@dataclass(frozen=True, slots=True)
class Match:
    element: Element | None
    level: MatchLevel
    score: float = 0.0
    evidence: str = ""

    @property
    def found(self) -> bool:
        return self.element is not None


@dataclass(frozen=True, slots=True)
class Thresholds:
    exact_id_min_similarity: float = 0.75  # an id reused by a different element is no match
    text_min_ratio: float = 90.0  # rapidfuzz ratio, 0..100
    fingerprint_min: float = 0.62
    fingerprint_margin: float = 0.03  # best must beat the runner-up by this much
    #: Below this margin over the runner-up a fingerprint match is only a guess: it never runs
    #: without the user (``agent.macros.heal.doubt``).  Chosen on one variant of the virtual
    #: phone (German + reordered rows), checked on the others (docs/results/decision-memory.md).
    doubt_margin: float = 0.15


_CHROME = (ElementKind.STATUS_BAR, ElementKind.NAVIGATION_BAR)


def _candidates(parse: ScreenParse) -> list[Element]:
    """What a replayed step may land on: enabled, not chrome, not covered by a dialog."""
    return [e for e in parse.uncovered() if e.kind not in _CHROME and e.enabled]


def _best(fp: Fingerprint, els: list[Element], parse: ScreenParse, image: np.ndarray | None,
          lw: float = 1.0) -> tuple[Element, float]:
    scored = [(fingerprint_similarity(fp, e, parse, image, layout_weight=lw).score, -e.rect.area, i, e) for i, e in enumerate(els)]
    scored.sort(key=lambda t: (t[0], t[1], -t[2]), reverse=True)
    return scored[0][3], scored[0][0]


def _tail(rid: str) -> str:
    return rid.rsplit("/", 1)[-1].lower()


def reidentify(target: Target | None, parse: ScreenParse, image: np.ndarray | None = None,
               grounder: Grounder | None = None, *, description: str = "",
               thresholds: Thresholds | None = None,
               skip: tuple[MatchLevel, ...] = (), layout_weight: float = 1.0) -> Match:
    """Find ``target``'s element on ``parse``; ``Match.level`` says which level found it.

    ``layout_weight`` < 1 trusts positions less (use it after a scroll)."""
    lw = layout_weight
    th = thresholds or Thresholds()
    fp = target.fingerprint if target is not None else None
    words = description or (target.description if target is not None else "")
    cands = _candidates(parse)

    if fp is not None:
        # 1. exact id, confirmed by the fingerprint (ids are positional in many parsers)
        if MatchLevel.EXACT_ID not in skip and target is not None and target.element_id:
            el = parse.element(target.element_id)
            if el is not None and el.kind not in _CHROME:
                sim = fingerprint_similarity(fp, el, parse, image, layout_weight=lw)
                parts = dict(sim.parts)
                # ids are often positional: the same id on a shifted list is a neighbour,
                # so words that disagree (and no resource id that agrees) veto the id
                words_veto = parts.get("text", 1.0) < 0.8 and parts.get("resource_id", 0.0) < 1.0
                if sim.score >= th.exact_id_min_similarity and not words_veto:
                    return Match(el, MatchLevel.EXACT_ID, sim.score, sim.explain())
        # 2. resource id
        if MatchLevel.RESOURCE_ID not in skip and fp.resource_id:
            same = [e for e in cands if e.resource_id and _tail(e.resource_id) == _tail(fp.resource_id)]
            if len(same) == 1:
                return Match(same[0], MatchLevel.RESOURCE_ID, 1.0, f"resource id {fp.resource_id}")
            if len(same) > 1 and fp.text:
                named = [e for e in same if fuzz.ratio(e.text.casefold(), fp.text.casefold()) >= th.text_min_ratio]
                if len(named) == 1:
                    return Match(named[0], MatchLevel.RESOURCE_ID, 1.0, f"resource id {fp.resource_id} + text")
        # 3. text
        if MatchLevel.TEXT not in skip and fp.text:
            scored = [(fuzz.ratio(e.text.casefold(), fp.text.casefold()), e) for e in cands if e.text]
            good = [e for s, e in scored if s >= th.text_min_ratio]
            if good:
                top = max(s for s, _ in scored)
                exact = [e for s, e in scored if s == top]
                el, _ = _best(fp, exact, parse, image, lw)
                return Match(el, MatchLevel.TEXT, top / 100.0, f"text {fp.text!r} ({len(exact)} candidate(s))")
        # 4. icon label
        if MatchLevel.ICON_LABEL not in skip and fp.label:
            same = [e for e in cands if e.label and e.label.casefold() == fp.label.casefold()]
            if same:
                el, _ = _best(fp, same, parse, image, lw)
                return Match(el, MatchLevel.ICON_LABEL, 1.0, f"icon label {fp.label!r} ({len(same)} candidate(s))")
        # 5. fingerprint similarity
        if MatchLevel.FINGERPRINT not in skip and cands:
            scored2 = sorted(((fingerprint_similarity(fp, e, parse, image, layout_weight=lw), e) for e in cands),
                             key=lambda t: t[0].score, reverse=True)
            best_sim, best = scored2[0]
            runner = scored2[1][0].score if len(scored2) > 1 else 0.0
            if best_sim.score >= th.fingerprint_min and best_sim.score - runner >= th.fingerprint_margin:
                return Match(best, MatchLevel.FINGERPRINT, best_sim.score, best_sim.explain())
            log.debug("fingerprint level: best %.2f runner-up %.2f: no match", best_sim.score, runner)
    # 6. the LLM grounder with the step's words
    if MatchLevel.LLM not in skip and grounder is not None and words:
        try:
            eid = grounder(words, parse)
        except Exception as exc:  # a grounder failure must not crash a replay
            log.warning("grounder failed for %r: %s", words, exc)
            eid = None
        if eid:
            el = parse.element(eid)
            if el is not None:
                return Match(el, MatchLevel.LLM, 0.5, f"grounder chose {eid} for {words!r}")
            log.warning("grounder returned unknown element id %r", eid)
    return Match(None, MatchLevel.NONE, 0.0, "no level of the cascade found the element")


def grounder_from_agent(agent_grounder: object, goal: str = "") -> Grounder:
    """Adapt an ``agent.grounding`` grounder (e.g. ``LLMGrounder``) to the cascade's last
    level: it is asked to ground "tap <the step's words>" and its element is used."""
    from agent.grounding.base import GroundContext, GroundingError
    from agent.types import Action, ActionType

    def ground(words: str, parse: ScreenParse) -> str | None:
        action = Action(ActionType.TAP, target=Target(description=words))
        try:
            grounded = agent_grounder.ground(action, GroundContext(goal or words, parse))  # type: ignore[attr-defined]
        except GroundingError as exc:
            log.info("agent grounder found nothing for %r: %s", words, exc)
            return None
        return grounded.element.id if grounded.element is not None else None

    return ground
