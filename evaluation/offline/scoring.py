"""Score one predicted action against the recorded one.

DroidTask (``GoldKind.ELEMENT`` / ``FINISH``), after AutoDroid: a step is right when the
planner acts on the recorded element — a tap (or long press) on it, or, when the
recording typed text, typing the same text into it (equal after case-folding and
collapsing spaces) — or, on the last step, says the task is complete.  The system back
key counts as DroidTask's own "go back" element.  AITW-form steps are converted to
AITW actions and judged by ``evaluation.aitw.match`` (the reference rule; typed text is
recorded beside it, as AITW does).  Every wrong step gets one of the ``KINDS`` so a report
can say what kind of step a planner gets wrong.  Pure functions.
"""

from __future__ import annotations

from dataclasses import dataclass

from agent.types import Action, ActionType, AitwActionType
from evaluation.aitw import AitwAction, match, text_matches
from evaluation.offline.droidtask import BACK_WORDS
from evaluation.offline.types import Gold, GoldKind
from vision.geometry import Size
from vision.types import ScreenParse

RIGHT = "right"
NO_ACTION = "no action (planner error)"
MISSED_FINISH = "did not say the task is done"
EARLY_FINISH = "said done too early"
WRONG_ELEMENT = "wrong element"
WRONG_TEXT = "typed other text"
TAP_NOT_TYPE = "tapped where it should type"
TYPE_NOT_TAP = "typed where it should tap"
OTHER_ACTION = "other action (back, scroll, open app, wait …)"
AITW_MISMATCH = "AITW rule: no match"
#: Every verdict kind, in the order a report lists them.
KINDS = (RIGHT, WRONG_ELEMENT, MISSED_FINISH, EARLY_FINISH, WRONG_TEXT, TAP_NOT_TYPE, TYPE_NOT_TAP, OTHER_ACTION,
         AITW_MISMATCH, NO_ACTION)


@dataclass(frozen=True, slots=True)
class Verdict:
    correct: bool
    kind: str
    detail: str = ""
    text_correct: bool | None = None  # typed-text agreement, for type steps


def _norm(text: str) -> str:
    return " ".join(text.casefold().split()).strip("'\"")


def element_of(action: Action, parse: ScreenParse) -> str | None:
    """The id of the element an action acts on: its target, else the smallest element under its point."""
    t = action.target
    if t is not None and t.element_id and parse.element(t.element_id) is not None:
        return t.element_id
    point = action.touch or (t.point if t is not None else None)
    if point is None:
        return None
    hits = [e for e in parse.elements if e.rect.contains(point)]
    return min(hits, key=lambda e: e.rect.width * e.rect.height).id if hits else None


def _is_back_element(element_id: str | None, parse: ScreenParse) -> bool:
    el = parse.element(element_id) if element_id else None
    return el is not None and el.display_name.strip().lower() == BACK_WORDS


def score_element(gold: Gold, action: Action | None, parse: ScreenParse) -> Verdict:
    """A DroidTask step (see the module docstring)."""
    if action is None:
        return Verdict(False, NO_ACTION)
    if gold.kind is GoldKind.FINISH:
        if action.type is ActionType.COMPLETE:
            return Verdict(True, RIGHT)
        return Verdict(False, MISSED_FINISH, action.describe())
    if action.type is ActionType.COMPLETE:
        return Verdict(False, EARLY_FINISH)
    if action.type is ActionType.BACK and _is_back_element(gold.element_id, parse):
        return Verdict(True, RIGHT, "the back key for DroidTask's 'go back' element")
    if action.type not in (ActionType.TAP, ActionType.LONG_PRESS, ActionType.TYPE):
        return Verdict(False, OTHER_ACTION, action.describe())
    chosen = element_of(action, parse)
    if gold.text is None:
        if action.type is ActionType.TYPE:
            return Verdict(False, TYPE_NOT_TAP if chosen == gold.element_id else WRONG_ELEMENT,
                           f"[{chosen}] instead of [{gold.element_id}]" if chosen != gold.element_id else "")
        if chosen == gold.element_id:
            return Verdict(True, RIGHT)
        return Verdict(False, WRONG_ELEMENT, f"[{chosen}] instead of [{gold.element_id}]")
    if action.type is not ActionType.TYPE:
        return Verdict(False, TAP_NOT_TYPE if chosen == gold.element_id else WRONG_ELEMENT,
                       f"[{chosen}] instead of [{gold.element_id}]" if chosen != gold.element_id else "")
    same_text = _norm(action.text or "") == _norm(gold.text)
    if chosen != gold.element_id:
        return Verdict(False, WRONG_ELEMENT, f"[{chosen}] instead of [{gold.element_id}]", same_text)
    if not same_text:
        return Verdict(False, WRONG_TEXT, f"{action.text!r} instead of {gold.text!r}", False)
    return Verdict(True, RIGHT, text_correct=True)


def score_aitw(gold: Gold, action: Action | None, screen: Size) -> Verdict:
    """An AITW-form step, by the AITW matcher against the step's annotation boxes."""
    assert gold.aitw is not None
    if action is None:
        return Verdict(False, NO_ACTION)
    try:
        pred = AitwAction.from_action(action, screen)
    except ValueError as exc:
        return Verdict(False, OTHER_ACTION, str(exc))
    m = match(gold.aitw, pred, gold.boxes)
    text_ok = text_matches(gold.aitw.typed_text, pred.typed_text) if gold.aitw.action_type == int(AitwActionType.TYPE) and m.matched else None
    return Verdict(m.matched, RIGHT if m.matched else AITW_MISMATCH, m.rule, text_ok)


def score(gold: Gold, action: Action | None, parse: ScreenParse) -> Verdict:
    if gold.kind is GoldKind.AITW:
        return score_aitw(gold, action, parse.screen_size)
    return score_element(gold, action, parse)
