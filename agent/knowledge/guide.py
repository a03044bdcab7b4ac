"""The app maps as a planner's guide: for a goal and the current screen, which screen
most likely holds the target and the shortest known way there.

``MapGuide.hint(goal, parse, screen)`` returns a ``Hint``: one line for the prompt ("From
here, 'Internet' is reached by: 'Network & internet' → 'Internet'"), the id of the element
to tap first (which the structured reply form offers first) and the step itself, which
``agent.knowledge.guided.GuidedPlanner`` may take without a model call.  It returns None —
and the planner plans as it would without a map — when the screen is not on any map, no
screen matches the goal, there is no known path, or the path's first element cannot be
found again on this screen.  On a screen outside every mapped app (the launcher) it names
the app to open and the path from that app's first screen.  ``AppMaps`` loads the stored
maps and forgets those made for another version of their app; it saves a map under its
app and language (given a ``map_language.LanguageMaps``, it reads one language's maps).

No LLM; reads maps given to it; no device.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass

from agent.knowledge.app_map import QUOTED, AppMap, MapError, names_app, path_words, rank_apps
from agent.knowledge.focus import (
    only_opens,
)
from agent.knowledge.lexicon import Words, same_word
from agent.knowledge.map_build import sure_match
from agent.knowledge.map_language import map_id
from agent.knowledge.retrieval import Scorer, make_scorer, tokens
from agent.knowledge.screen_key import screen_key
from agent.knowledge.store import AppMapStore
from agent.macros.reidentify import reidentify
from agent.secrets.refs import REFERENCE
from agent.types import Action, ActionType, Target
from vision.types import Screen, ScreenParse

log = logging.getLogger(__name__)

#: A goal must match a screen at least this well for the map to say anything.
MIN_SCORE = 0.12
#: From outside every app, an app's map must match the goal at least this well to be named.
MIN_APP_SCORE = 0.15
#: ... and, when it matches less than ``CLEAR_APP``, lead the next app by ``APP_MARGIN``
#: (unless the goal names it).
CLEAR_APP, APP_MARGIN = 0.3, 0.03
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
        (a stale map is deleted: the app changed, its screens may have too).  In a store of
        every language's maps a bare package is the map of unknown language only, never
        another language's: read one language through ``map_language.LanguageMaps``, or
        name the key (``map_language.map_id``)."""
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
        """Store ``m`` as the map of its app in its language (``map_language.map_id``)."""
        self.store.save_app_map(map_id(m.package, m.language), m.to_data())

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

    def unreachable(self, goal: str, parse: ScreenParse, names: tuple[str, ...] = ()) -> list[str]:
        """The words naming what the goal is about that no explored screen of any app shows,
        and that this screen does not show either; [] when any of them is reachable, or
        nothing is mapped.  The goal's object is
        its words less the first (the verb), state and "go there" words, quoted texts and secrets,
        numbers and the words of times and amounts,
        people's names (two capitalised words) and the app's name: "Show the weather forecast in
        the Clock app" -> ['weather', 'forecast'] when no Clock screen says either.  ``names``:
        more names of apps (what the phone calls them), left out like the maps' own."""
        if not self.maps:
            return []
        words = Words.load()
        pool = list(self.maps.values())  # an app the goal names may not be the one to use
        text = QUOTED.sub(" ", REFERENCE.sub(" ", goal))  # typed values and secrets' names say no place
        text = re.sub(r"\b[A-Z][\w'-]+(?:\s+[A-Z][\w'-]+)+\b", " ", text)
        first = words.words(goal)[:1]
        app_names = {w for label in (*(m.label for m in self.maps.values()), *names) for w in words.words(label)}
        state = set(words.on_end) | set(words.off_end)
        objects = [w for w in dict.fromkeys(words.content(text)) if w not in first and w not in app_names
                   and w not in state and w not in words.amounts and not any(ch.isdigit() for ch in w)
                   and len(w) > 2]
        if not objects:
            return []
        seen = {w for m in pool for w in words.words(m.app_document())}
        seen |= {w for e in parse.elements for w in words.words(" ".join((e.text, e.label)))}
        if any(any(same_word(o, v) for v in seen) for o in objects):
            return []
        return objects

    def named_here(self, goal: str, package: str, label: str = "") -> str:
        """The name of the app in front (``label``, the phone's, else the map's) when it is
        mapped and the goal names it by either name ("… in the Clock app", "… in Notes",
        "in der Uhr-App"); "" otherwise."""
        m = self.maps.get(package)
        if m is None or not any(names_app(goal, n) for n in {m.label, label} if n):
            return ""
        return label or m.label or m.package

    def not_offered(self, goal: str, parse: ScreenParse, package: str, label: str = "") -> tuple[str, list[str]]:
        """Inside a mapped app that the goal names (``named_here``): its name and
        ``unreachable``'s words, what the goal is about that no explored screen of any app
        shows, nor this one; ("", []) anywhere else.  The goal points at this app and
        exploration found nothing of its object in it or elsewhere: the app does not seem to
        offer it.  Outside the app the goal names, a missing word is too often only a
        synonym the screens do not use ("countdown" for "Timer") to say more than advice.
        Searching this app's screens alone catches more and is wrong more often (the
        object is in another app: "notifications from the Shop app"; docs/results/generalization.md)."""
        app = self.named_here(goal, package, label)
        missing = self.unreachable(goal, parse, names=(label,) if label else ()) if app else []
        return (app, missing) if missing else ("", [])

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


def screen_words(goal: str, app_label: str) -> str:
    """The goal less the words that name the app ("… in the Clock app"): they choose the app,
    not a screen of it (the Clock app's "Clock" tab answers "the weather in the Clock app")."""
    if not app_label:
        return goal
    pattern = rf"\b(?:(?:in|on|from|with|using|inside)\s+)?(?:(?:the|my)\s+)?{re.escape(app_label)}\s+app\b"
    return re.sub(pattern, " ", goal, flags=re.I)
