"""What each possible next step on a screen looks like against the goal: one sparse feature
vector per candidate, for the learned step ranker (``agent.knowledge.ranker``).

The candidates are what a structured reply may name — every element that takes a tap
(a field with a text the goal gives becomes "type that text into it") — and "the task is
complete".  Each is described by language-free measures:

* how the element's words meet the goal's (the share of the goal's content words it
  shows, weighted by how rare each word is on this screen; the share of its own words
  the goal uses; fuzzy overlap; the whole name said in the goal; a word no other element
  shows; a value the goal gives — a quoted text, a number);
* the words of its row (a switch's label), its kind, where it sits (top bar, bottom);
* what the run did (tapped or typed there before, just now);
* how much of the goal the screen shows at all (``need``: little → a way onwards is
  wanted, which is when menus and icons matter), and the element's own words as learned
  features (``tok:…``) so the data can say which words lead onwards in any app;
* what the hand-written screen conventions say (``agent.knowledge.focus`` /
  ``fill``): only as features whose weight the data decides.

The "complete" candidate has its own features: what the steps taken covered of the goal,
what the screen still points at, whether a dialog still asks, the conventions' verdicts.

Pure functions over a parse and the steps taken; no model, no device, no I/O beyond the
word files (``agent.knowledge.lexicon``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from rapidfuzz import fuzz

from agent.knowledge import fill as fill_rule
from agent.knowledge import focus as focus_rule
from agent.knowledge.app_map import QUOTED
from agent.knowledge.lexicon import Words, fold, same_word
from agent.planners.base import Turn
from agent.structured import choosable, element_name, is_editable, takes_a_tap
from agent.types import Action, ActionType, Target
from vision.types import Element, ElementKind, ScreenParse

Features = dict[str, float]


class Move(StrEnum):
    TAP = "tap"
    TYPE = "type"
    COMPLETE = "complete"


@dataclass(frozen=True, slots=True)
class Candidate:
    """One possible next step and its features."""

    move: Move
    element: Element | None = None
    text: str = ""  # what to type (``Move.TYPE``)
    features: Features = field(default_factory=dict, compare=False, hash=False)

    @property
    def name(self) -> str:
        if self.element is None:
            return "complete"
        return element_name(self.element)

    def action(self) -> Action:
        """The candidate as an action the runner can ground and execute."""
        if self.move is Move.COMPLETE or self.element is None:
            return Action.simple(ActionType.COMPLETE)
        c = self.element.rect.center
        target = Target(element_id=self.element.id, point=c, description=self.name)
        if self.move is Move.TYPE:
            return Action.type_text(self.text, target)
        return Action.tap(c.x, c.y, target)


@dataclass(frozen=True, slots=True)
class StepView:
    """One step's candidates (the "complete" one last)."""

    candidates: tuple[Candidate, ...]

    def index_of(self, element_id: str | None, complete: bool = False) -> int | None:
        for i, c in enumerate(self.candidates):
            if complete and c.move is Move.COMPLETE:
                return i
            if not complete and c.element is not None and c.element.id == element_id:
                return i
        return None


# ---- helpers ----------------------------------------------------------------------------
def _name_words(words: Words, el: Element) -> list[str]:
    """Every word the element shows or is labelled with (a row's subtitle after " · " too)."""
    return list(dict.fromkeys(words.words(" ".join(x for x in (el.text, el.label) if x))))


def _matches(goal_words: Sequence[str], name_words: Sequence[str]) -> set[str]:
    """The goal words that some word of the name meets (``same_word``)."""
    return {g for g in goal_words if any(same_word(g, n) for n in name_words)}


def _taken(history: Sequence[Turn]) -> list[str]:
    """Names, texts and apps the steps taken so far gave."""
    out = []
    for t in history:
        a = t.action
        for x in ((a.target.description if a.target else "") or "", a.text or "", a.app or ""):
            x = x.split(" [")[0].strip()
            if x:
                out.append(x)
    return out


def _goal_values(goal: str, words: Words) -> list[str]:
    """Quoted texts and numbers the goal gives, folded."""
    found = [fold(next(q for q in m if q)) for m in QUOTED.findall(goal)]
    found += [w for w in words.words(goal) if any(ch.isdigit() for ch in w)]
    return list(dict.fromkeys(v for v in found if v))


def _row(el: Element, pool: Sequence[Element]) -> list[Element]:
    return focus_rule.row_of(el, list(pool))


def _kind(el: Element, has_words: bool) -> str:
    if is_editable(el):
        return "k_input"
    if el.kind in (ElementKind.SWITCH, ElementKind.CHECK_BOX) or el.checkable:
        return "k_check"
    if not has_words:
        return "k_icon"
    if el.kind is ElementKind.BUTTON or el.clickable:
        return "k_button"
    if el.kind is ElementKind.TEXT:
        return "k_text"
    return "k_other"


# ---- the view of a step -----------------------------------------------------------------
def step_view(goal: str, parse: ScreenParse, history: Sequence[Turn] = (), *, words: Words | None = None,
              app_label: str = "") -> StepView:
    """Every candidate for the next step on ``parse`` with its features."""
    words = words or Words.load()
    history = tuple(history)
    pool = [e for e in choosable(parse) if takes_a_tap(e)]
    everything = [e for e in parse.elements if not e.covered]
    goal_words = [w for w in dict.fromkeys(words.content(goal)) if w not in set(words.words(app_label))]
    names = {e.id: _name_words(words, e) for e in everything}
    # rarity of each goal word on this screen: a word every row shows says little
    df = {g: sum(1 for e in everything if _matches([g], names[e.id])) for g in goal_words}
    idf = {g: 1.0 / (1.0 + df[g]) if df[g] else 1.0 for g in goal_words}
    total = sum(idf.values()) or 1.0
    shown = set().union(*(_matches(goal_words, names[e.id]) for e in everything)) if everything else set()
    need = 1.0 - (len(shown) / len(goal_words) if goal_words else 1.0)
    taken = _taken(history)
    taken_words = [w for t in taken for w in words.words(t)]
    last = history[-1].action if history else None
    last_name = ((last.target.description or "") if last is not None and last.target else "").split(" [")[0].strip()
    values = _goal_values(goal, words)
    given = fill_rule.values(goal)
    typed_texts = {fold(t.action.text or "") for t in history if t.action.type is ActionType.TYPE}
    pending = [v for v in given if fold(v.text) not in typed_texts]
    asked = words.asked_state(goal)
    goal_text = fold(goal)
    h = parse.screen_size.height or 1

    try:
        suggested = fill_rule.fill(goal, parse)
    except Exception:  # a convention that fails says nothing
        suggested = None
    try:
        pointed = focus_rule.focus(goal, parse, app_label=app_label)
    except Exception:
        pointed = None
    try:
        button = focus_rule.ready_to_confirm(goal, parse, last=last_name or (last.text or "" if last else ""),
                                             taken=taken) if history else None
    except Exception:
        button = None

    recalls = {}
    for e in pool:
        m = _matches(goal_words, names[e.id])
        recalls[e.id] = sum(idf[g] for g in m) / total if goal_words else 0.0
    candidates: list[Candidate] = []
    for e in pool:
        nw = names[e.id]
        name = fold(element_name(e)) if nw else ""
        matched = _matches(goal_words, nw)
        own = recalls[e.id]
        others = [recalls[o.id] for o in pool if o is not e and fold(element_name(o)) != name]
        best_other = max(others, default=0.0)
        row = [o for o in _row(e, everything) if o is not e]
        row_words = [w for o in row for w in names[o.id]]
        row_matched = _matches(goal_words, row_words)
        f: Features = {"bias_el": 1.0, _kind(e, bool(nw)): 1.0}
        f["own"] = own
        f["own_prec"] = (sum(1 for n in nw if any(same_word(n, g) for g in goal_words)) / len(nw)) if nw else 0.0
        f["fuzzy"] = fuzz.token_set_ratio(" ".join(goal_words), " ".join(nw)) / 100.0 if nw and goal_words else 0.0
        f["phrase"] = 1.0 if len(name) >= 3 and f" {name} " in f" {goal_text} " else 0.0
        f["row"] = sum(idf[g] for g in row_matched - matched) / total if goal_words else 0.0
        f["best"] = 1.0 if own > 0 and own >= best_other else 0.0
        f["gap"] = own - best_other
        others_words = [w for o in pool if o is not e for w in names[o.id]]
        f["sole"] = 1.0 if any(len(g) >= 3 and not _matches([g], others_words) for g in matched) else 0.0
        f["value"] = 1.0 if name and any(v == name or v in nw or f" {v} " in f" {name} " for v in values) else 0.0
        cy = (e.rect.top + e.rect.bottom) / 2 / h
        f["y"] = cy
        f["top"] = 1.0 if cy < 0.12 else 0.0
        f["bottom"] = 1.0 if cy > 0.88 else 0.0
        f["furniture"] = 1.0 if name and words.is_furniture(name) else 0.0
        f["confirm"] = 1.0 if name and words.is_confirm(name) else 0.0
        f["negative"] = 1.0 if name and words.is_negative(name) else 0.0
        before = [t for t in taken[:-1]] if taken else []
        f["tapped_before"] = 1.0 if name and any(focus_rule.same_name(name, t) for t in before) else 0.0
        f["last"] = 1.0 if name and last_name and focus_rule.same_name(name, last_name) else 0.0
        f["need"] = need
        f["need_icon"] = need if not nw else 0.0
        f["need_furniture"] = need * f["furniture"]
        f["need_top"] = need * f["top"]
        toggles = [o for o in (e, *row) if o.kind in (ElementKind.SWITCH, ElementKind.CHECK_BOX) or o.checkable]
        if asked is not None and toggles and toggles[0].checked is not None:
            flip = toggles[0].checked is not asked
            f["toggle_flip"] = 1.0 if flip else 0.0
            f["toggle_met"] = 0.0 if flip else 1.0
        f["fill"] = 1.0 if suggested is not None and suggested.field.id == e.id else 0.0
        f["field_pending"] = 1.0 if is_editable(e) and pending else 0.0
        f["focus"] = 1.0 if pointed is not None and pointed.element.id == e.id else 0.0
        f["focus_strong"] = f["focus"] * (1.0 if pointed is not None and (pointed.score >= 0.7 or pointed.unique) else 0.0)
        f["ready"] = 1.0 if button is not None and button.id == e.id else 0.0
        for w in dict.fromkeys(nw):
            if not w.isdigit():
                f[f"tok:{w}"] = 1.0
                f[f"tokneed:{w}"] = need
        move, text = Move.TAP, ""
        if suggested is not None and suggested.field.id == e.id:  # the goal gives this field's text
            move, text = Move.TYPE, suggested.text
        candidates.append(Candidate(move, e, text, f))
    candidates.append(Candidate(Move.COMPLETE, None, "", _done_features(
        goal, parse, history, words=words, goal_words=goal_words, taken_words=taken_words, taken=taken,
        last_name=last_name, recalls=recalls, pending=bool(pending), values=values, app_label=app_label,
        pool=pool, pointed=pointed)))
    return StepView(tuple(candidates))


def _done_features(goal: str, parse: ScreenParse, history: tuple[Turn, ...], *, words: Words,
                   goal_words: list[str], taken_words: list[str], taken: list[str], last_name: str,
                   recalls: dict[str, float], pending: bool, values: list[str], app_label: str,
                   pool: list[Element], pointed: focus_rule.Focus | None) -> Features:
    f: Features = {"bias_done": 1.0}
    if not history:
        f["done_first"] = 1.0
        return f
    covered = _matches(goal_words, taken_words)
    f["done_cov"] = len(covered) / len(goal_words) if goal_words else 1.0
    f["done_max_own"] = max(recalls.values(), default=0.0)
    last = history[-1].action
    f["done_last_type"] = 1.0 if last.type is ActionType.TYPE else 0.0
    f["done_last_confirm"] = 1.0 if last_name and words.is_confirm(last_name) else 0.0
    names = [fold(element_name(e)) for e in pool]
    f["done_confirm_here"] = 1.0 if any(words.is_confirm(n) for n in names if n) else 0.0
    f["done_question"] = 1.0 if any(words.is_negative(n) for n in names if n) else 0.0
    f["done_pending"] = 1.0 if pending else 0.0
    said = fold(" ".join(taken))
    f["done_value_left"] = 1.0 if any(v not in said for v in values) else 0.0
    parts = words.parts(goal)
    last_part = [w for w in words.content(parts[-1])] if parts else []
    f["done_last_part"] = 1.0 if last_name and _matches(last_part, words.words(last_name)) else 0.0
    f["done_steps"] = math.log1p(len(history))
    if pointed is not None:
        f["done_state_met"] = 1.0 if pointed.state_met else 0.0
        f["done_focus_open"] = 1.0 if not pointed.state_met and not focus_rule.same_name(pointed.name, last_name) \
            and (pointed.score >= 0.7 or pointed.unique) else 0.0
    try:
        f["done_rule_screen"] = 1.0 if focus_rule.finished(goal, parse, app_label=app_label) else 0.0
        if last.type is ActionType.TAP and last_name:
            f["done_rule_last_tap"] = 1.0 if focus_rule.last_tap_finishes(
                goal, last_name, parse, pointed=False, taken=taken, app_label=app_label) else 0.0
            f["done_rule_can_finish"] = 1.0 if focus_rule.tap_can_finish(goal, last_name, parse, app_label,
                                                                         tuple(taken)) else 0.0
    except Exception:  # a convention that fails says nothing
        pass
    return f
