"""A planner guided by what the phone shows and what exploration found, around any planner.

``GuidedPlanner(planner, guide, device, ranker=…)`` is how a run uses the app maps
(``agent.knowledge.guide.MapGuide``) and the learned step ranker
(``agent.knowledge.ranker``), without the runner or the planners knowing about either.
Before each proposal:

1. the ranker reads the screen against the goal (``agent.knowledge.step_features``); when
   its probability that the task is complete reaches the policy's ``done`` level (chosen
   where its held-out precision is ≥ 0.95) it says so, with no model call;
2. the map's next step toward the screen that holds the goal is taken, with no model call,
   where the map knows one and it may be followed (not back to a screen the run left, not
   into one item of a list the goal does not name, not while the model steers);
3. the ranker's best element is taken alone where its probability reaches the policy's
   ``act`` level (held-out precision ≥ 0.95);
4. otherwise the wrapped planner decides — offered the map's step first, then the ranker's
   best elements until they hold the policy's ``mass`` of the probability (the rest of
   the screen stays in its description, not in the reply form), and "complete" only where
   the ranker does not rule it out (``no_done``); a note names the likeliest step.

On the home screen, when the goal names none of the apps shown, a small model's own
word likelihoods, with the ranker's, order the app icons in step 4 (``agent.knowledge.app_choice``: one
completion request per goal).

Steps 1–3 and the cut of step 4 apply to a small built-in model only (``small_model``):
any other model decides every step itself, offered every element best first, with the
map's step and the notes as advice — a capable model is never overruled by evidence that
is right 95 % of the time.  The card says where a step came from (``…+screen``: the
ranker; ``…+map``: the map), and its evidence says why.  Never a step the user turned down here, the step just taken, a
switch or field already tapped, a step this guide already took on a screen of this
structure, nor a sensitive step on a screen that lacks what the goal names, nor "complete"
right after a map step on the way to the goal's screen.  Inside the app a goal names, when
no explored screen shows what it is about, a small model's run is offered "impossible"
with that reason (the user may turn it down).

No LLM call of its own but that one; asks the device only which app is in front (and its
installed apps' names).
"""

from __future__ import annotations

import logging
import math
from dataclasses import replace
from typing import Any

import numpy as np

from agent.feedback import NOT_DONE_NOTE
from agent.knowledge.app_choice import AppChooser, AppOdds
from agent.knowledge.focus import missing_words, named_here, offers_value, row_of
from agent.knowledge.guide import AppMaps, Hint, MapGuide
from agent.knowledge.lexicon import Words
from agent.knowledge.ranker import Ranked, StepRanker
from agent.knowledge.ranker_train import kept
from agent.knowledge.screen_key import screen_key
from agent.knowledge.step_features import Candidate, Move, step_view
from agent.knowledge.store import AppMapStore
from agent.planners.base import PlanContext, Planner, Turn, Wrapping
from agent.screen_text import app_words, is_home
from agent.types import Action, ActionType, LLMCall, Proposal
from vision.types import ElementKind, Screen

log = logging.getLogger(__name__)


class GuidedPlanner(Wrapping):
    """A planner that sees the app maps and the ranked screen; see the module docstring."""

    def __init__(self, planner: Planner, guide: MapGuide, device: Any = None, *, check_versions: bool = False,
                 evidence: bool = True, ranker: StepRanker | None = None, small_model: bool = False,
                 apps: AppChooser | None = None) -> None:
        super().__init__(planner)
        self.guide, self.device = guide, device
        # a small built-in model: the ranker and the map act alone where they beat it, and it picks
        # from a short list; any other model decides every step itself, with them as advice
        self.small_model = small_model
        self.evidence = evidence  # False: only the maps guide; the screen's evidence is never used
        self.ranker = (ranker or StepRanker.shipped()) if evidence else None
        self.words = Words.load()
        self.apps = apps if small_model and evidence else None  # orders the home screen's icons
        self._odds: dict[tuple[str, tuple[str, ...]], AppOdds] = {}  # (goal, icons) -> the model's order
        self.hints: list[tuple[int, str]] = []  # (step index, hint) for reports
        self._check_versions = check_versions and device is not None
        self._labels: dict[str, str] | None = None  # package -> app name, read from the phone once
        self._own: set[int] = set()  # the steps (by how many came before) this guide chose itself
        self._on_the_way: set[int] = set()  # those of them that were a map path's step toward its target
        self._visited: list[str] = []  # the map keys of the screens this run was on, in order
        self._keys: dict[int, str] = {}  # the structural key of the screen each step was planned on
        self._advice: list[str] = []  # notes for the model found before it is asked (this step only)

    # ---- the step ------------------------------------------------------------------------
    def propose(self, ctx: PlanContext) -> Proposal:
        self._advice = []
        screen = self._screen()
        if not ctx.history:
            self._own.clear()
            self._on_the_way.clear()
            self._visited.clear()
            self._keys.clear()
        package = (screen.foreground_package if screen is not None else "") or ""
        self._keys[len(ctx.history)] = screen_key(ctx.parse, package).key
        ranked = self._rank(ctx, screen)
        if self.small_model and ranked is not None and self._may_say_done(ctx) \
                and (len(ctx.history) - 1) not in self._on_the_way \
                and ranked.p_done() >= self.ranker.policy.done:  # type: ignore[union-attr]
            why = f"The task looks complete: {_done_reason(ranked)} (evidence {ranked.p_done():.2f})."
            self.hints.append((ctx.step_index, why))
            return Proposal(Action.simple(ActionType.COMPLETE), rationale=why, planner=f"{self.inner.name}+screen",
                            evidence=(f"checked on the screen: {why}",))
        impossible = self._unreachable(ctx, package)
        if impossible is not None:
            return impossible
        hint = self._hint(ctx, screen)
        if hint is not None and hint.here and (not self._visited or self._visited[-1] != hint.here):
            self._visited.append(hint.here)
        own = self._own_step(ctx, hint, ranked, screen)
        if own is not None:
            self._own.add(len(ctx.history))
            return own
        return self._ask_model(ctx, hint, ranked, screen)

    def _rank(self, ctx: PlanContext, screen: Screen | None) -> Ranked | None:
        if self.ranker is None:
            return None
        try:
            view = step_view(ctx.goal, ctx.parse, ctx.history, words=self.words, app_label=self._label(screen))
            return self.ranker.rank(view)
        except Exception:  # evidence is optional: plan without it
            log.exception("the screen could not be ranked against the goal")
            return None

    def _unreachable(self, ctx: PlanContext, package: str) -> Proposal | None:
        """When what the goal is about is on no screen the maps reach nor on this one (never
        again once the user turned "impossible" down): inside the mapped app the goal names
        (``MapGuide.named_here``), a small model's run is offered "impossible" with that
        reason; anywhere else, or for any other model, the model is told it as advice.
        Judged on wordings and a language it was not written from, the proposal is right on
        7 of the 13 goals it flags and catches 7 of 18 impossible ones; the advice alone,
        outside the named app, was right on 6 of 24 (docs/results/generalization.md)."""
        if any(a.type is ActionType.IMPOSSIBLE for a in ctx.rejected):
            return None
        label = self._app_label(package)
        try:
            missing = self.guide.unreachable(ctx.goal, ctx.parse, names=(label,) if label else ())
            app = self.guide.named_here(ctx.goal, package, label) if missing and self.small_model else ""
        except Exception:  # a damaged map must not stop the run
            log.exception("the maps could not be searched for the goal")
            return None
        if not missing:
            return None
        said = ", ".join(repr(w) for w in missing)
        if app:
            why = (f"The goal asks for {said} in {app}, and no screen of {app} "
                   "(nor of any other explored app) shows it: this app does not seem to offer it.")
            self.hints.append((ctx.step_index, why))
            return Proposal(Action.simple(ActionType.IMPOSSIBLE), rationale=why, planner=f"{self.inner.name}+map",
                            evidence=(f"checked on the maps: {why}",))
        apps = ", ".join(sorted(m.label or m.package for m in self.guide.maps.values()))
        why = f"No screen the app maps reach ({apps}) shows {said}: this phone's apps may not offer it."
        self.hints.append((ctx.step_index, why))
        self._advice.append(why)
        return None

    def _may_say_done(self, ctx: PlanContext) -> bool:
        """"Complete" on evidence: never on the first screen, nor once the user said it is not,
        nor while a button the goal's own verb names is still there untapped."""
        return bool(ctx.history) and not any(a.type is ActionType.COMPLETE for a in ctx.rejected) \
            and not any(n.startswith(NOT_DONE_NOTE) for n in ctx.notes) and not self._verb_left(ctx)

    def _verb_left(self, ctx: PlanContext) -> str:
        """The name of a button on this screen that the goal names whole with one of its "go
        there" verbs ("Start" for "start the stopwatch", which the evidence reads as only
        where to go) and that no step has tapped yet, or "": the goal still asks for it."""
        goal = set(self.words.words(ctx.goal))
        taken = {t.casefold() for t in _taken(ctx.history)}
        for e in ctx.parse.elements:
            name = e.display_name.strip()
            if e.covered or e.selected or not e.clickable or not e.enabled or not name \
                    or name.casefold() in taken or self.words.is_furniture(name):
                continue
            own = set(self.words.words(name))
            if own and own <= goal and own & self.words.go:
                return name
        return ""

    def _hint(self, ctx: PlanContext, screen: Screen | None) -> Hint | None:
        try:
            if self._check_versions:
                self._drop_stale()
            return self.guide.hint(ctx.goal, ctx.parse, screen)
        except Exception:  # a damaged map must not stop the run
            log.exception("the app map could not give a hint")
            return None

    def _own_step(self, ctx: PlanContext, hint: Hint | None, ranked: Ranked | None,
                  screen: Screen | None) -> Proposal | None:
        """The map's next step, else the ranker's sure one; None when neither may be taken (or
        the model is not a small one: it decides every step)."""
        if not self.small_model:
            return None
        choices: list[tuple[Action, str, str]] = []
        if hint is not None and hint.follow is not None and self._may_follow(ctx, hint):
            choices.append((hint.follow, "map", hint.text))
        if ranked is not None and self.ranker is not None:
            top = next((c for c in ranked.candidates if c.move is not Move.COMPLETE), None)
            p = ranked.probs[ranked.candidates.index(top)] if top is not None else 0.0
            if top is not None and p >= self.ranker.policy.act:
                why = f"On this screen, {_says(top)} is what the task's words point at (evidence {p:.2f})."
                choices.append((top.action(), "screen", why))
        for action, source, why in choices:
            if _turned_down(action, ctx) or (ctx.history and _same_step(ctx.history[-1].action, action)) \
                    or _sets_again(action, ctx) or self._took_here(action, ctx) \
                    or not _names_its_object(action, ctx, screen):
                continue
            self.hints.append((ctx.step_index, why))
            if source == "map":
                self._on_the_way.add(len(ctx.history))
            return Proposal(action, rationale=why, planner=f"{self.inner.name}+{source}", evidence=(why,))
        return None

    def _ask_model(self, ctx: PlanContext, hint: Hint | None, ranked: Ranked | None,
                   screen: Screen | None = None) -> Proposal:
        """The wrapped planner, offered the map's step and the ranker's best elements first."""
        notes = [*ctx.notes, *self._advice]
        calls: tuple[LLMCall, ...] = ()
        first: list[str] = list(hint.element_ids) if hint is not None else []
        offer: tuple[str, ...] = ()
        allow_done = True
        if ranked is not None and self.ranker is not None:
            policy = self.ranker.policy
            # a small model is offered the best few; any other model every element, best first;
            # what the user turned down on this screen makes way for the next in the ranking
            open_ = _without_chosen(_without_turned_down(ranked, ctx), ctx)
            open_, calls, odds_note = self._apps_by_odds(ctx, open_, screen)
            if odds_note:
                notes.append(odds_note)
            best = kept(open_, policy.mass, policy.keep_small) if self.small_model else open_.elements()
            offer = tuple(dict.fromkeys([*first, *(c.element.id for c in best if c.element is not None)]))
            allow_done = not self.small_model or ranked.p_done() > policy.no_done or not ctx.history
            top = best[0] if best else None
            if top is not None and top.element is not None:
                notes.append(f"Screen evidence: the likeliest next step here is {_says(top)} "
                             f"[{top.element.id}].")
            if ctx.history and ranked.p_done() >= 0.5 and self._may_say_done(ctx):
                notes.append(f"Screen evidence: the task may already be complete ({_done_reason(ranked)}).")
        elif first:
            offer = tuple(first)
        if hint is not None:  # last: what exploration found weighs more than the fitted ranking
            notes.append(hint.text)
        if offer:
            order = {eid: i for i, eid in enumerate(offer)}
            front = sorted((e for e in ctx.parse.elements if e.id in order), key=lambda e: order[e.id])
            rest = tuple(e for e in ctx.parse.elements if e.id not in order)
            ctx = replace(ctx, parse=replace(ctx.parse, elements=(*front, *rest)))
        if not notes and not offer:
            return self.inner.propose(ctx)
        added = tuple(n for n in notes if n not in ctx.notes)
        for n in added:
            self.hints.append((ctx.step_index, n))
        proposal = self.inner.propose(replace(ctx, notes=tuple(notes), offer=offer, allow_done=allow_done))
        proposal = _typed_as_given(proposal, ranked)
        return replace(proposal, evidence=(*proposal.evidence, *added), llm_calls=(*calls, *proposal.llm_calls))

    def _apps_by_odds(self, ctx: PlanContext, ranked: Ranked,
                      screen: Screen | None) -> tuple[Ranked, tuple[LLMCall, ...], str]:
        """On the home screen, when the goal names none of the apps shown: the app icons in the
        order of the ranker's probability times the model's likelihood ratio for each app's name
        (``agent.knowledge.app_choice``; chosen over the ratio alone on the yardstick's first
        wordings), each taking the next of the icons' probabilities, best first; the calls it made (once per goal) and a
        note for the card.  Anywhere else, or without an answer: ``ranked`` as it is."""
        if self.apps is None or screen is None or not is_home(screen.foreground_package):
            return ranked, (), ""
        names = {n.casefold() for n in self._installed().values()}
        slots = [i for i, c in enumerate(ranked.candidates)
                 if c.move is Move.TAP and c.element is not None and c.name.casefold() in names]
        icons = [ranked.candidates[i] for i in slots]
        if len(icons) < 2 or any(c.features.get("own", 0.0) > 0 for c in icons):
            return ranked, (), ""  # the goal names an app here: its words decide
        shown = {e.display_name for e in ctx.parse.elements if e.display_name.casefold() in names}
        key = (ctx.goal, tuple(sorted(shown | {c.name for c in icons})))  # the same after a rejection
        calls: tuple[LLMCall, ...] = ()
        if key not in self._odds:
            by_name = {name.casefold(): pkg for pkg, name in self._installed().items()}
            aliases: dict[str, tuple[str, ...]] = {n: (app_words(by_name[n.casefold()]),)
                                                   for n in key[1] if n.casefold() in by_name}
            self._odds[key] = self.apps.rank(ctx.goal, list(key[1]), aliases)
            calls = self._odds[key].calls
        odds = dict(self._odds[key].ranked)
        if not odds:
            return ranked, calls, ""
        # the ranker's prior times the model's likelihood ratio (log: a sum); an icon the model's
        # answer does not start with counts as the least likely one it does
        least = min(odds.values())
        mine = {id(c): p for c, p in zip(ranked.candidates, ranked.probs, strict=True)}
        order = sorted(range(len(icons)), key=lambda j: -(math.log(max(mine[id(icons[j])], 1e-9))
                                                          + odds.get(icons[j].name, least)))
        probs = list(ranked.probs)
        for slot, p in zip(slots, sorted((ranked.probs[i] for i in slots), reverse=True), strict=True):
            probs[slot] = p
        cands = list(ranked.candidates)
        for slot, j in zip(slots, order, strict=True):
            cands[slot] = icons[j]
        pairs = sorted(zip(cands, probs, strict=True), key=lambda cp: -cp[1])
        first = icons[order[0]].name
        why = f"No app here is named by the task; the model's word likelihoods and the screen point at {first!r} first."
        return Ranked(tuple(c for c, _ in pairs), tuple(p for _, p in pairs)), calls, why

    # ---- the map's guards ----------------------------------------------------------------
    def _took_here(self, action: Action, ctx: PlanContext) -> bool:
        """True when this guide already took ``action`` on a screen of this structure in this
        run: taking it again goes round in a circle (hour 7, minute 15, hour 7 …)."""
        here = self._keys.get(len(ctx.history))
        return any(i in self._own and self._keys.get(i) == here and _same_step(turn.action, action)
                   for i, turn in enumerate(ctx.history))

    def _model_steers(self, ctx: PlanContext) -> bool:
        """True when the step just taken was the model's (or the user's), not this guide's,
        and it changed the screen's structure: it went somewhere the map did not say."""
        n = len(ctx.history)
        return n > 0 and (n - 1) not in self._own and self._keys.get(n - 1) != self._keys.get(n)

    def _may_follow(self, ctx: PlanContext, hint: Hint) -> bool:
        """Whether the map's next step may be taken without the model: not back to a screen
        this run has left (it would undo what was done there), not into one item of a list
        the goal does not name, not away from a screen that offers a value the goal gives or
        an element the goal's words name whole (it is to be done here), and not right after a
        step of the model's that went elsewhere or worked on this screen (it steers: the map
        only advises)."""
        left = self._visited[:-1]
        if any(k and k in left and k != hint.here for k in (hint.target, hint.next)):
            return False
        step = hint.follow
        name = (step.target.description if step is not None and step.target is not None else "") or ""
        taken = tuple(_taken(ctx.history))
        if self.evidence and offers_value(ctx.goal, name, ctx.parse, taken=taken):
            return False  # a value the goal gives is to be picked here first ("March 20": the 20th)
        if self.evidence and step is not None and step.type is ActionType.TAP \
                and named_here(ctx.goal, ctx.parse, skip=name, taken=taken):
            return False  # what the goal names is on this screen ("Buy now"): act here, not leave
        n = len(ctx.history)
        if n and (n - 1) not in self._own and ctx.history[-1].action.type in (ActionType.TAP, ActionType.TYPE) \
                and self._keys.get(n - 1) == self._keys.get(n):
            return False  # the model is at work on this screen (it just switched or typed here)
        return not hint.list_row and not self._model_steers(ctx)

    # ---- the phone -----------------------------------------------------------------------
    def _drop_stale(self) -> None:
        """Forget the maps made for another version of their app than the phone's."""
        from agent.knowledge.explore import app_version

        self._check_versions = False
        for package, m in list(self.guide.maps.items()):
            if m.is_stale(app_version(self.device, package)):
                log.info("the map of %s is for version %s: not used", package, m.app_version)
                del self.guide.maps[package]

    def _screen(self) -> Screen | None:
        if self.device is None:
            return None
        try:
            package, activity = self.device.foreground()
        except Exception as exc:  # no foreground: plan without the map
            log.info("no foreground app for the map: %s", exc)
            return None
        return Screen(np.zeros((1, 1, 3), np.uint8), foreground_package=package, foreground_activity=activity)

    def _label(self, screen: Screen | None) -> str:
        """The name of the app in front: its map's, else the phone's ("" when neither says)."""
        package = (screen.foreground_package if screen is not None else "") or ""
        m = self.guide.maps.get(package)
        return m.label if m is not None and m.label and m.label != package else self._app_label(package)

    def _app_label(self, package: str) -> str:
        """The name of the app ``package`` as the phone lists it, else its usual name from the
        package ("org.example.settings" -> "Settings"); "" for no package."""
        if not package:
            return ""
        return self._installed().get(package) or app_words(package)  # the phone cannot say: its usual name

    def _installed(self) -> dict[str, str]:
        """package -> app name, as the phone lists its installed apps (read once; {} when it cannot)."""
        if self._labels is None:
            from agent.device import KnowsApps

            self._labels = {}
            if isinstance(self.device, KnowsApps):
                try:
                    self._labels = {pkg: name for name, pkg in self.device.installed_apps()}
                except Exception as exc:  # a phone that went away: no names
                    log.info("no app names from the phone: %s", exc)
        return self._labels


#: What the strongest signs for "complete" say, in words for the card.
_DONE_WORDS = {
    "done_last_confirm": "the choice was just confirmed",
    "done_cov": "the steps taken cover the task's words",
    "done_last_part": "the last step answers the task's last part",
    "done_rule_can_finish": "nothing the task names is left to do here",
    "done_rule_last_tap": "the last tap answers the task",
    "done_rule_screen": "the screen shows the task's result",
    "done_state_met": "the switch shows the state asked for",
    "done_steps": "the steps taken so far",
}


def _done_reason(ranked: Ranked) -> str:
    done = next((c for c in ranked.candidates if c.move is Move.COMPLETE), None)
    if done is None:
        return ""
    signs = [k for k in _DONE_WORDS if done.features.get(k, 0.0) > 0.5]
    return "; ".join(_DONE_WORDS[k] for k in signs[:2]) or "the steps taken answer the task"


def _typed_as_given(proposal: Proposal, ranked: Ranked | None) -> Proposal:
    """A tap on a field that the goal gives a text for becomes typing that text there: the
    field is where the text goes (tapping it only to focus it is part of typing)."""
    action = proposal.action
    if ranked is None or action.type is not ActionType.TAP or action.target is None:
        return proposal
    typed = next((c for c in ranked.candidates if c.move is Move.TYPE and c.element is not None
                  and c.element.id == action.target.element_id), None)
    if typed is None:
        return proposal
    why = f"'{typed.name}' takes the text the task gives: typing '{typed.text}' there."
    return replace(proposal, action=typed.action(), evidence=(*proposal.evidence, why))


def _says(c: Candidate) -> str:
    if c.move is Move.TYPE:
        return f"typing '{c.text}' into '{c.name}'"
    return f"'{c.name}'"


def _taken(history: tuple[Turn, ...]) -> list[str]:
    """What the steps taken so far named and entered: the elements' names, the texts typed,
    the apps opened."""
    return [x for t in history
            for x in ((t.action.target.description if t.action.target else "") or "", t.action.text or "",
                      t.action.app or "") if x]


def _names_its_object(action: Action, ctx: PlanContext, screen: Screen | None) -> bool:
    """False for a sensitive step (deleting, sending, paying …, as the safety guard judges it)
    on a screen that does not show every word the goal names: "Delete note" on the wrong
    note's page matches "delete the note about the plumber" but the plumber is not there.
    Such a step is left to the model and the user, never taken on evidence alone."""
    from agent.safety import sensitivity

    if sensitivity(action, ctx.parse, screen.foreground_package if screen is not None else None) is None:
        return True
    return not missing_words(ctx.goal, ctx.parse)


_SETTABLE = (ElementKind.SWITCH, ElementKind.CHECK_BOX, ElementKind.EDIT_TEXT)


def _sets_again(action: Action, ctx: PlanContext) -> bool:
    """True when ``action`` taps a switch, checkbox or text field (or the label in its row)
    this run already tapped, by name: again it would undo the switch, and a field wants
    typing, which the model does."""
    target = action.target
    if action.type is not ActionType.TAP or target is None or not target.element_id:
        return False
    el = ctx.parse.element(target.element_id)
    if el is None or not any(o.checkable or o.kind in _SETTABLE for o in (el, *row_of(el, list(ctx.parse.elements)))):
        return False
    name = (target.description or "").casefold()
    for turn in ctx.history:
        said = turn.action.target.description if turn.action.target is not None else ""
        if turn.action.type is ActionType.TAP and said and said.casefold().split(" [")[0] == name:
            return True
    return False


def _same_step(a: Action, b: Action) -> bool:
    """The same kind of action at the same place (or on the same app)."""
    if a.type is not b.type:
        return False
    if a.type is ActionType.OPEN_APP:
        return (a.app or "").casefold() == (b.app or "").casefold()
    return a.touch is not None and a.touch == b.touch


def _without_turned_down(ranked: Ranked, ctx: PlanContext) -> Ranked:
    """``ranked`` without the steps the user rejected on this screen (all of it when none)."""
    if not ctx.rejected:
        return ranked
    keep = [(c, p) for c, p in zip(ranked.candidates, ranked.probs, strict=True)
            if c.move is Move.COMPLETE or not _turned_down(c.action(), ctx)]
    return Ranked(tuple(c for c, _ in keep), tuple(p for _, p in keep))


def _without_chosen(ranked: Ranked, ctx: PlanContext) -> Ranked:
    """``ranked`` without the tab or item the step just taken chose, now shown selected:
    tapping it again changes nothing (a button, which stays unselected, may be tapped again)."""
    last = ctx.history[-1].action if ctx.history else None
    said = (last.target.description or "").split(" [")[0].casefold() if last and last.target else ""
    if not said:
        return ranked
    keep = [(c, p) for c, p in zip(ranked.candidates, ranked.probs, strict=True)
            if c.element is None or not (c.element.selected and c.name.casefold() == said)]
    if len(keep) == len(ranked.candidates) or not any(c.element is not None for c, _ in keep):
        return ranked
    return Ranked(tuple(c for c, _ in keep), tuple(p for _, p in keep))


def _turned_down(action: Action, ctx: PlanContext) -> bool:
    """True when the user rejected this step on this screen (``ctx.rejected``)."""
    for r in ctx.rejected:
        if r.type is not action.type:
            continue
        if action.type is ActionType.OPEN_APP and (r.app or "").casefold() == (action.app or "").casefold():
            return True
        if r.target is not None and action.target is not None and r.target.element_id is not None \
                and r.target.element_id == action.target.element_id:
            return True
        if r.touch is not None and r.touch == action.touch:
            return True
    return False


def with_maps(planner: Planner, store: object, device: Any = None, *, evidence: bool = True,
              ranker: StepRanker | None = None, small_model: bool = False,
              apps: AppChooser | None = None) -> Planner:
    """``planner`` guided by every stored app map and by the ranked screen (with no map, or
    no store of maps, by the ranked screen alone; ``evidence=False``: by the maps only, and
    ``planner`` itself when there is none).  ``ranker``: the shipped one by default;
    ``small_model``: the planner's model is a small built-in one (a shorter list of choices);
    ``apps``: how it orders the home screen's apps when the goal names none (small model only).

    Reads the store only: the maps' app versions are checked against the phone when the
    first step is planned (on the run's thread), and a map of another version is dropped."""
    maps = AppMaps(store).all() if isinstance(store, AppMapStore) else []
    if not maps and not evidence:
        return planner
    return GuidedPlanner(planner, MapGuide(maps), device, check_versions=bool(maps), evidence=evidence,
                         ranker=ranker, small_model=small_model, apps=apps)
