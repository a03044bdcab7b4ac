"""The app maps as a planner's guide: for a goal and the current screen, which screen
most likely holds the target and the shortest known way there.

``MapGuide.hint(goal, parse, screen)`` returns a ``Hint``: one line for the prompt ("From here, 'Internet' is reached by: 'Network & internet' → 'Internet'")
and the id of the element to tap first, which the structured reply form offers first.
It returns None — and the planner plans as it would without a map — when the screen is
not on any map, no screen matches the goal, there is no known path, or the path's first
element cannot be found again on this screen.  On a screen outside every mapped app
(the launcher) it names the app to open and the path from that app's first screen.

``GuidedPlanner(planner, guide, device)`` is how a run uses it, without the runner or
the planners knowing about maps: before each proposal it asks the guide, adds the hint
line to the context's notes (the one place every planner prompt renders them) and moves
the hinted element to the front of the parse, so a structured reply form offers it
first.  It does the same with the screen's own evidence (``agent.knowledge.focus``): the
element the goal's words point at, offered first where the map has no step to take from
here (or none at all), and "the task looks finished" when a switch already shows the
state the goal asks for or the element was just tapped.  Everything else is the wrapped
planner's own.  With no map at all only the screen's evidence is added.

Some steps it takes itself, with no model call (the card shows ``…+screen`` / ``…+map``):
a clear focus, the text the goal gives for a field (``agent.knowledge.fill``), a dialog's
or form's OK / Save once the choice the goal asks for is made on it
(``focus.ready_to_confirm``), the map's next step; and it says "complete" when the screen
shows the goal met, a dialog's OK was just pressed, or the tap just made answers the goal's
last part (``focus.last_tap_finishes``).  What keeps those from doing harm: never a step the user turned down here, the
step just taken, a switch or field already tapped, or a step it already took on a screen of
this structure; the map's step never leads back to a screen the run left, never into one
item of a list the goal does not name, and is only advice once the model has steered
elsewhere; a weak focus does not interrupt the model at work; a sensitive step only where
the screen shows every word of the goal.

No LLM; reads maps given to it (``AppMaps`` loads them from a store); the guided planner
asks the device only which app is in front.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from agent.feedback import NOT_DONE_NOTE
from agent.knowledge.app_map import AppMap, MapError, path_words, rank_apps
from agent.knowledge.fill import fill
from agent.knowledge.focus import (
    Focus,
    confirm_button,
    finished,
    focus,
    focus_note,
    last_tap_finishes,
    missing_words,
    named_here,
    offers_value,
    only_opens,
    ready_to_confirm,
    row_of,
    same_name,
    tap_can_finish,
)
from agent.knowledge.map_build import sure_match
from agent.knowledge.retrieval import Scorer, make_scorer, stems, tokens
from agent.knowledge.screen_key import screen_key
from agent.knowledge.store import AppMapStore
from agent.macros.reidentify import reidentify
from agent.planners.base import PlanContext, Planner, Turn
from agent.screen_text import app_words
from agent.structured import element_name
from agent.types import Action, ActionType, Proposal, Target
from vision.types import Element, ElementKind, Screen, ScreenParse

log = logging.getLogger(__name__)

#: A goal must match a screen at least this well for the map to say anything.
MIN_SCORE = 0.12
#: From outside every app, an app's map must match the goal at least this well to be named.
MIN_APP_SCORE = 0.15
#: ... and, when it matches less than ``CLEAR_APP``, lead the next app by ``APP_MARGIN``
#: (unless the goal names it).
CLEAR_APP, APP_MARGIN = 0.3, 0.03
#: A focus this strong (``agent.knowledge.focus``), or the sole element showing one of the goal's
#: own words, is acted on without asking the model.
STRONG = 0.7
#: Screens scoring within this of the best count as equally likely: the nearest one wins.
NEAR = 0.05


@dataclass(frozen=True, slots=True)
class Hint:
    """What the map suggests on one screen: a line for the prompt and the elements to offer first."""

    text: str
    element_ids: tuple[str, ...] = ()
    follow: Action | None = None  # the step the map knows for this screen (taken without asking the model)
    at_target: bool = False  # this screen is where the map expects what the goal needs
    target: str = ""  # the key of the screen the map leads to
    next: str = ""  # the key of the screen the first step leads to
    here: str = ""  # the key of this screen on the map
    list_row: bool = False  # the first step opens one item of a list (its own page), not the one the goal names


class AppMaps:
    """The stored maps of every explored app, checked against the installed versions."""

    def __init__(self, store: AppMapStore) -> None:
        self.store = store

    def load(self, package: str, app_version: str = "") -> AppMap | None:
        """The map of ``package``, or None when there is none or it is for another version
        (a stale map is deleted: the app changed, its screens may have too)."""
        data = self.store.load_app_map(package)
        if data is None:
            return None
        try:
            m = AppMap.from_data(data)
        except (MapError, KeyError, TypeError, ValueError) as exc:
            log.warning("ignoring the map of %s: %s", package, exc)
            return None
        if m.is_stale(app_version):
            log.info("the map of %s is for version %s, the phone has %s: forgetting it",
                     package, m.app_version, app_version)
            self.store.delete_app_map(package)
            return None
        return m

    def save(self, m: AppMap) -> None:
        self.store.save_app_map(m.package, m.to_data())

    def all(self) -> list[AppMap]:
        return [m for m in (self.load(p) for p in self.store.app_map_packages()) if m is not None]


class MapGuide:
    """Hints from a set of app maps; see the module docstring."""

    def __init__(self, maps: Iterable[AppMap], scorer: Scorer | str = "lexical", min_score: float = MIN_SCORE) -> None:
        self.maps = {m.package: m for m in maps}
        self.scorer = make_scorer(scorer) if isinstance(scorer, str) else scorer
        self.min_score = min_score

    def hint(self, goal: str, parse: ScreenParse, screen: Screen | None = None) -> Hint | None:
        package = (screen.foreground_package if screen is not None else "") or ""
        activity = (screen.foreground_activity if screen is not None else "") or ""
        m = self.maps.get(package)
        if m is None:
            return self._from_outside(goal)
        if only_opens(goal, m.label):
            return None  # the app is open: nowhere further to go
        sk = screen_key(parse, package, activity)
        here = m.find(sk.key, sk.shape)
        if here is None:
            return None
        choices = []
        for target, score in m.targets(screen_words(goal, m.label), self.scorer, k=4):
            steps = m.path(here, target)
            if score >= self.min_score and steps is not None:
                choices.append((score, len(steps), target, steps))
        if not choices:
            return None
        top = choices[0][0]
        _score, _n, target, steps = min((c for c in choices if c[0] >= top - NEAR), key=lambda c: (c[1], -c[0]))
        if not steps:
            return Hint(f"App map: this screen ('{m.screens[here].label()}') is where the map expects "
                        "what the task needs; act here rather than leave.", at_target=True, target=here, here=here)
        first = m.screens[here].elements.get(steps[0].element)
        if first is None:
            return None
        found = reidentify(Target(fingerprint=first.fingerprint, description=first.name), parse,
                           screen.image if screen is not None else None)
        where = f"App map: from here, '{m.screens[target].label()}' is reached by: "
        if found.element is None or not sure_match(found, first.fingerprint):
            if first.below:  # it lies further down this screen's list
                return Hint(where + f"scroll down, then {path_words(m, steps)}.")
            log.info("map path step %r not found on this screen: planning without the map", first.name)
            return None
        el = found.element
        c = el.rect.center
        follow = Action(ActionType.TAP, touch=c, target=Target(element_id=el.id, point=c, description=first.name))
        # one of several elements here that lead to the same screen, or whose resource id the map's
        # element shares with others here (a product card, a contact row): an item of a list,
        # interchangeable for the map, not for the goal
        siblings = any(e.src == here and e.dst == steps[0].dst and e.element != steps[0].element for e in m.edges.values())
        rid = first.fingerprint.resource_id
        shared = bool(rid) and sum(o.resource_id == rid for o in parse.elements) > 1
        row = (siblings or shared) and not set(tokens(first.name)) & set(tokens(goal))
        return Hint(where + f"{path_words(m, steps)}.", (el.id,), follow, target=target, here=here,
                    list_row=row, next=steps[0].dst)

    def _from_outside(self, goal: str) -> Hint | None:
        """On a screen of no mapped app: the app whose map best matches the goal (``rank_apps``:
        word weights shared by all apps, an app the goal names first), and its best-matching
        screen reachable from the app's first screen; the next app when it has none."""
        for m in self.maps.values():
            if only_opens(goal, m.label):
                return Hint(f"App map: open {m.label}.", follow=Action(ActionType.OPEN_APP, app=m.label))
        best = None
        ranked = rank_apps(goal, list(self.maps.values()), self.scorer)
        if ranked and ranked[0][1] < 1.0:  # no app named: the words must point at one app, clearly
            runner_up = ranked[1][1] if len(ranked) > 1 else 0.0
            top = ranked[0][1]
            if top < MIN_APP_SCORE or (top < CLEAR_APP and top - runner_up < APP_MARGIN):
                return None  # the model chooses the app
        for m, app_score in ranked:
            if app_score < MIN_APP_SCORE:
                break
            choices = []
            for target, score in m.targets(screen_words(goal, m.label), self.scorer, k=4):
                steps = m.path(m.root, target) if m.root else None
                if score >= self.min_score and steps is not None:
                    choices.append((score, len(steps), target, steps))
            if choices:
                top = max(c[0] for c in choices)
                _s, _n, target_, steps_ = min((c for c in choices if c[0] >= top - NEAR), key=lambda c: (c[1], -c[0]))
                best = (m, target_, steps_)
                break
        if best is None:
            return None
        m, target, steps = best
        app = m.label or m.package
        then = f", then {path_words(m, steps)}" if steps else ""
        return Hint(f"App map: '{m.screens[target].label()}' is in the {app} app: open {app}{then}.",
                    follow=Action(ActionType.OPEN_APP, app=app))


class GuidedPlanner:
    """A planner that sees the app map's hint; see the module docstring."""

    def __init__(self, planner: Planner, guide: MapGuide, device: Any = None, *, check_versions: bool = False,
                 evidence: bool = True) -> None:
        self.inner, self.guide, self.device = planner, guide, device
        self.evidence = evidence  # False: only the maps guide; the screen's evidence is never used
        self.hints: list[tuple[int, str]] = []  # (step index, hint) for reports
        self._check_versions = check_versions and device is not None
        self._labels: dict[str, str] | None = None  # package -> app name, read from the phone once
        self._final: Action | None = None  # the map's last step toward the goal, once proposed
        self._own: set[int] = set()  # the steps (by how many came before) this guide chose itself
        self._on_the_way: set[int] = set()  # those of them that were a map path's step toward its target
        self._visited: list[str] = []  # the map keys of the screens this run was on, in order
        self._keys: dict[int, str] = {}  # the structural key of the screen each step was planned on
        self._pointed: tuple[str, str] = ("", "")  # (screen text, name) of the last screen's focus

    def _drop_stale(self) -> None:
        """Forget the maps made for another version of their app than the phone's."""
        from agent.knowledge.explore import app_version

        self._check_versions = False
        for package, m in list(self.guide.maps.items()):
            if m.is_stale(app_version(self.device, package)):
                log.info("the map of %s is for version %s: not used", package, m.app_version)
                del self.guide.maps[package]

    def __getattr__(self, name: str) -> Any:  # client, samples, ... of the wrapped planner
        return getattr(self.inner, name)

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def uses_latent(self) -> bool:
        return self.inner.uses_latent

    def _screen(self) -> Screen | None:
        if self.device is None:
            return None
        try:
            package, activity = self.device.foreground()
        except Exception as exc:  # no foreground: plan without the map
            log.info("no foreground app for the map: %s", exc)
            return None
        import numpy as np

        return Screen(np.zeros((1, 1, 3), np.uint8), foreground_package=package, foreground_activity=activity)

    def propose(self, ctx: PlanContext) -> Proposal:
        screen = self._screen()
        done = self._finished(ctx, screen)
        f = self._focus(ctx, screen) if not done else None
        self._pointed = (ctx.screen, f.name if f is not None else "")
        if done:  # the screen shows the goal met: say so, with no model call
            self.hints.append((ctx.step_index, done))
            return Proposal(Action.simple(ActionType.COMPLETE), rationale=done, planner=f"{self.inner.name}+screen",
                            evidence=(f"checked on the screen: {done}",))
        try:
            if self._check_versions:
                self._drop_stale()
            hint = self.guide.hint(ctx.goal, ctx.parse, screen)
        except Exception:  # a damaged map must not stop the run
            log.exception("the app map could not give a hint")
            hint = None
        if not ctx.history:
            self._own.clear()
            self._on_the_way.clear()
            self._visited.clear()
            self._keys.clear()
        package = (screen.foreground_package if screen is not None else "") or ""
        self._keys[len(ctx.history)] = screen_key(ctx.parse, package).key
        if hint is not None and hint.here and (not self._visited or self._visited[-1] != hint.here):
            self._visited.append(hint.here)
        followed = self._follow(ctx, hint, screen)
        if followed is not None:
            self._own.add(len(ctx.history))
            return followed
        if hint is None or not hint.element_ids:
            extra = self._focus_hint(ctx, screen)
            if extra is not None:
                hint = extra if hint is None else Hint(f"{hint.text} {extra.text}", extra.element_ids)
        if hint is None:
            return self.inner.propose(ctx)
        self.hints.append((ctx.step_index, hint.text))
        parse = ctx.parse
        if hint.element_ids:
            first = tuple(e for e in parse.elements if e.id in hint.element_ids)
            rest = tuple(e for e in parse.elements if e.id not in hint.element_ids)
            parse = replace(parse, elements=first + rest)
        proposal = self.inner.propose(replace(ctx, parse=parse, notes=(*ctx.notes, hint.text)))
        return replace(proposal, evidence=(*proposal.evidence, hint.text))

    def _follow(self, ctx: PlanContext, hint: Hint | None, screen: Screen | None) -> Proposal | None:
        """A step taken without a model call, when the evidence is clear: the element the
        goal's words point at strongly on this screen — or the text the goal gives for a field
        here (``agent.knowledge.fill``); else the map's next step (the next
        element of a known path, the app to open); else, on the screen the map expects to
        hold the goal, the element the goal's words point at.  None when there is none, the
        user turned it down here, or it is the step just taken (again: it could undo it)."""
        f = self._focus(ctx, screen)
        usable = f is not None and not f.state_met and not just_tapped(f, ctx.history) \
            and f.element.kind is not ElementKind.EDIT_TEXT  # a field is typed into (fill), not tapped
        action: Action | None = None
        final, source, why = False, "map", ""
        typed = fill(ctx.goal, ctx.parse) if self.evidence else None
        if f is not None and hint is not None and hint.follow is not None and hint.follow.type is ActionType.OPEN_APP \
                and f.name.casefold() != (hint.follow.app or "").casefold() and screen is not None \
                and screen.foreground_package not in self.guide.maps:
            f = None  # outside every app the maps choose the app, word weights shared by all apps
        button = self._to_confirm(ctx) if typed is None else None
        if typed is not None:
            c = typed.field.rect.center
            action, source, why = Action(ActionType.TYPE, text=typed.text, target=Target(
                element_id=typed.field.id, point=c, description=element_name(typed.field))), "screen", typed.why
        elif button is not None:
            name = element_name(button)
            c = button.rect.center
            action, source = Action(ActionType.TAP, touch=c, target=Target(element_id=button.id, point=c,
                                                                         description=name)), "screen"
            why = f"The choice the task asks for is made on this form: '{name}' makes it count."
        elif f is not None and usable and (f.score >= STRONG or f.unique):
            action, final, source = _tap(f), True, "screen"
            why = f"On this screen, '{f.name}' is what the task's words point at."
        elif hint is not None and hint.follow is not None and self._may_follow(ctx, hint):
            action, why = hint.follow, hint.text
        elif hint is not None and hint.at_target and f is not None and usable and not self._model_acted(ctx):
            action, final = _tap(f), True
            why = f"{hint.text} On it, '{f.name}' is what the task's words point at."
        if action is None or _turned_down(action, ctx) or (ctx.history and _same_step(ctx.history[-1].action, action)) \
                or _sets_again(action, ctx) or self._took_here(action, ctx):
            return None
        if not _names_its_object(action, ctx, screen):
            return None
        self.hints.append((ctx.step_index, why))
        if source == "map" and not final:
            self._on_the_way.add(len(ctx.history))
        # a last step can finish the run only where the screen shows everything the goal names
        self._final = action if final and not missing_words(ctx.goal, ctx.parse, self._label(screen)) else None
        return Proposal(action, rationale=why, planner=f"{self.inner.name}+{source}", evidence=(why,))

    def _to_confirm(self, ctx: PlanContext) -> Element | None:
        """The OK / Save button that makes the choice just made count (``focus.ready_to_confirm``)."""
        if not self.evidence or not ctx.history:
            return None
        last = ctx.history[-1].action
        if last.type not in (ActionType.TAP, ActionType.TYPE) or last.target is None:
            return None
        taken = _taken(ctx.history)
        said = last.text if last.type is ActionType.TYPE else (last.target.description or "").split(" [")[0]
        return ready_to_confirm(ctx.goal, ctx.parse, last=said or "", taken=taken)

    def _took_here(self, action: Action, ctx: PlanContext) -> bool:
        """True when this guide already took ``action`` on a screen of this structure in this
        run: taking it again goes round in a circle (hour 7, minute 15, hour 7 …)."""
        here = self._keys.get(len(ctx.history))
        return any(i in self._own and self._keys.get(i) == here and _same_step(turn.action, action)
                   for i, turn in enumerate(ctx.history))

    def _model_acted(self, ctx: PlanContext) -> bool:
        """True when the step just taken was the model's (or the user's) and did something (not
        a wait): it is at work on this screen, and a weak focus should not interrupt it."""
        n = len(ctx.history)
        return n > 0 and (n - 1) not in self._own and ctx.history[-1].action.type is not ActionType.WAIT

    def _model_steers(self, ctx: PlanContext) -> bool:
        """True when the step just taken was the model's (or the user's), not this guide's,
        and it changed the screen's structure: it went somewhere the map did not say."""
        n = len(ctx.history)
        return n > 0 and (n - 1) not in self._own and self._keys.get(n - 1) != self._keys.get(n)

    def _may_follow(self, ctx: PlanContext, hint: Hint) -> bool:
        """Whether the map's next step may be taken without the model: not back to a screen
        this run has left (it would undo what was done there), not into one item of a list
        the goal does not name (the map went through one row; the goal may want another),
        not away from a screen that offers a value the goal gives or an element the goal's
        words name whole (it is to be done here), and not right after a step of the model's
        that went elsewhere or worked on this screen (it is steering: the map only advises)."""
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

    def _label(self, screen: Screen | None) -> str:
        """The name of the app in front: its map's, else the phone's ("" when neither says)."""
        package = (screen.foreground_package if screen is not None else "") or ""
        m = self.guide.maps.get(package)
        return m.label if m is not None and m.label and m.label != package else self._app_label(package)

    def _focus(self, ctx: PlanContext, screen: Screen | None) -> Focus | None:
        if not self.evidence:
            return None
        try:
            return focus(ctx.goal, ctx.parse, app_label=self._label(screen), scorer=self.guide.scorer)
        except Exception:  # evidence is optional: plan without it
            log.exception("no focus on this screen")
            return None

    def _finished(self, ctx: PlanContext, screen: Screen | None) -> str:
        """Why the screen shows the goal met ("" when it does not, or the user said it is not)."""
        if not self.evidence:
            return ""
        if any(a.type is ActionType.COMPLETE for a in ctx.rejected) or any(n.startswith(NOT_DONE_NOTE)
                                                                           for n in ctx.notes):
            return ""
        label = self._label(screen)
        if self._final is not None and ctx.history and _same_step(ctx.history[-1].action, self._final) \
                and ctx.history[-1].screen != ctx.screen:
            name = self._final.target.description if self._final.target is not None else "it"
            self._final = None
            f = self._focus(ctx, screen)
            if (f is None or (f.score < STRONG and not f.unique) or just_tapped(f, ctx.history)) \
                    and tap_can_finish(ctx.goal, name, ctx.parse, label):  # nothing further to do
                return f"'{name}', what the task's words point at, was tapped and the screen changed."
        try:
            why = finished(ctx.goal, ctx.parse, app_label=label, scorer=self.guide.scorer)
        except Exception:  # evidence is optional: plan without it
            log.exception("could not check the goal on the screen")
            return ""
        if why or not ctx.history or ctx.history[-1].screen == ctx.screen:
            return why
        if len(ctx.history) - 1 in self._on_the_way:
            return ""  # a step on the map's way to the screen that holds the goal answers nothing yet
        confirmed = _confirmed(ctx)
        if confirmed:
            return confirmed
        f = self._focus(ctx, screen)  # the element the goal points at was just tapped, and it did something
        if f is not None and f.asked_on is None and just_tapped(f, ctx.history) \
                and tap_can_finish(ctx.goal, f.name, ctx.parse, label):
            return f"'{f.name}', what the task's words point at, was just tapped and the screen changed."
        return self._last_tap_finished(ctx, label)

    def _last_tap_finished(self, ctx: PlanContext, label: str) -> str:
        """Why the tap just made (by the model or the user) looks like the goal's last step
        (``focus.last_tap_finishes``), or ""."""
        last = ctx.history[-1]
        said = (last.action.target.description if last.action.target is not None else "") or ""
        name = said.split(" [")[0].strip()
        if last.action.type is not ActionType.TAP or not name:
            return ""
        pointed = bool(self._pointed[1]) and self._pointed[0] == last.screen and same_name(name, self._pointed[1])
        taken = _taken(ctx.history)
        if last_tap_finishes(ctx.goal, name, ctx.parse, pointed=pointed, taken=taken, app_label=label,
                             scorer=self.guide.scorer):
            return f"'{name}' answers the task's last part, and nothing on the screen waits to be done."
        return ""

    def _app_label(self, package: str) -> str:
        """The name of the app ``package`` as the phone lists it, else its usual name from the
        package ("com.android.settings" -> "Settings"); "" for no package."""
        if not package:
            return ""
        if self._labels is None:
            from agent.device import KnowsApps

            self._labels = {}
            if isinstance(self.device, KnowsApps):
                try:
                    self._labels = {pkg: name for name, pkg in self.device.installed_apps()}
                except Exception as exc:  # a phone that went away: no names
                    log.info("no app names from the phone: %s", exc)
        return self._labels.get(package) or app_words(package)  # the phone cannot say: its usual name

    def _focus_hint(self, ctx: PlanContext, screen: Screen | None) -> Hint | None:
        """The screen's own evidence (``agent.knowledge.focus``) as a hint, or None."""
        f = self._focus(ctx, screen)
        if f is None:
            return None
        if f.state_met or just_tapped(f, ctx.history):
            if not f.state_met:
                return Hint(f"'{f.name}', the element the task's words point at, was just tapped: if the "
                            "task asks for nothing more, reply that it is complete.")
            return Hint(focus_note(f))
        return Hint(focus_note(f), (f.element.id,))


def screen_words(goal: str, app_label: str) -> str:
    """The goal less the words that name the app ("… in the Clock app"): they choose the app,
    not a screen of it (the Clock app's "Clock" tab answers "the weather in the Clock app")."""
    if not app_label:
        return goal
    pattern = rf"\b(?:(?:in|on|from|with|using|inside)\s+)?(?:(?:the|my)\s+)?{re.escape(app_label)}\s+app\b"
    return re.sub(pattern, " ", goal, flags=re.I)


def _taken(history: tuple[Turn, ...]) -> list[str]:
    """What the steps taken so far named and entered: the elements' names, the texts typed,
    the apps opened."""
    return [x for t in history
            for x in ((t.action.target.description if t.action.target else "") or "", t.action.text or "",
                      t.action.app or "") if x]


def _tap(f: Focus) -> Action:
    c = f.element.rect.center
    return Action(ActionType.TAP, touch=c, target=Target(element_id=f.element.id, point=c, description=f.name))


def _names_its_object(action: Action, ctx: PlanContext, screen: Screen | None) -> bool:
    """False for a sensitive step (deleting, sending, paying …, as the safety guard judges it)
    on a screen that does not show every word the goal names: "Delete note" on the wrong
    note's page matches "delete the note about the dentist" but the dentist is not there.
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


def just_tapped(f: Focus, history: tuple[Turn, ...]) -> bool:
    """True when the last step tapped the focused element: named alike, or (a tap with no
    name) at the same place."""
    if not history:
        return False
    action = history[-1].action
    if action.type not in (ActionType.TAP, ActionType.LONG_PRESS):
        return False
    said = action.target.description if action.target is not None else ""
    if said:  # named: by name (a dialog's OK and the next dialog's first option share a place)
        return same_name(said, f.name)
    return action.touch is not None and f.element.rect.contains(action.touch)


#: Buttons that close a dialog or form by accepting it.
_ACCEPT = frozenset({"ok", "save", "apply", "done", "confirm", "yes"})


def _confirmed(ctx: PlanContext) -> str:
    """Why the step just taken finished the task: it pressed a dialog's or form's OK / Save /
    Yes, no other such button waits now, and the goal asks for no other of them ("… and save
    it" after an OK on the way); "" otherwise."""
    action = ctx.history[-1].action
    said = (action.target.description if action.target is not None else "") or ""
    name = said.split(" [")[0].strip().casefold()
    if action.type is not ActionType.TAP or name not in _ACCEPT or confirm_button(ctx.parse) is not None:
        return ""
    if any(w in _ACCEPT and w != name for w in stems(ctx.goal)):
        return ""  # "… and save it": an OK on the way is not the Save the goal asks for
    return f"'{said.split(' [')[0].strip()}' accepted the choice and nothing else waits to be confirmed."


def with_maps(planner: Planner, store: object, device: Any = None, *, evidence: bool = True) -> Planner:
    """``planner`` guided by every stored app map and by the screen's own evidence (with no
    map, or no store of maps, by the screen's evidence alone; ``evidence=False``: by the maps
    only, and ``planner`` itself when there is none).

    Reads the store only: the maps' app versions are checked against the phone when the
    first step is planned (on the run's thread), and a map of another version is dropped."""
    maps = AppMaps(store).all() if isinstance(store, AppMapStore) else []
    if not maps and not evidence:
        return planner
    return GuidedPlanner(planner, MapGuide(maps), device, check_versions=bool(maps), evidence=evidence)
