"""Reading a recorded macro against the app maps: which screen of which map it ends on,
and the map's screens as parses other code can search.

* ``map_parse(screen)`` turns one ``MapScreen`` into a ``ScreenParse`` made of its mapped
  elements (their fingerprints' words, kinds and the places they were first seen; an
  element found only below the fold is placed under the screen), so the functions that
  read live screens (``agent.knowledge.focus``, ``agent.macros.reidentify``,
  ``agent.safety``) can read a screen the map only remembers.
* ``follow(macro, maps)`` walks the macro's steps through the maps without a phone:
  opening an app lands on its map's first screen, a tap follows the edge its element is
  known to lead along, Back returns to the screen before; typing, scrolling and
  flipping a switch stay.
  The result says where the macro ends (a map and a screen, the home screen, or unknown
  with the step the map could not follow).
* ``locate(maps, parse, package, activity)`` finds a screen seen on the phone (after a
  replay) on the maps.
* ``best_target(m, start, goal, scorer)`` is the map's answer for a goal from one screen:
  the screen most likely to hold the goal's target and the shortest known path there,
  chosen as ``agent.knowledge.guide.MapGuide`` chooses (the best score; among scores
  near it, the shortest path).

Pure functions over maps, macros and parses; no device, no model, no I/O; never changes
a map.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from agent.knowledge.app_map import OUTSIDE, AppMap, MapEdge, MapScreen
from agent.knowledge.guide import MIN_SCORE, NEAR
from agent.knowledge.map_build import sure_match
from agent.knowledge.retrieval import Scorer
from agent.knowledge.screen_key import screen_key
from agent.macros.reidentify import reidentify
from agent.macros.start import is_known_start
from agent.macros.types import Macro
from agent.types import ActionType, Target
from vision.geometry import Rect, Size
from vision.types import Element, ElementKind, ScreenParse

#: Where a walk is when the phone shows the home screen (or another app's launcher).
HOME = "<the home screen>"
_TOGGLES = (ElementKind.SWITCH, ElementKind.CHECK_BOX)
_OPENED = re.compile(r"^open the '(.+)' app$")
#: Steps that leave the screen as it was, as far as the map is concerned.
_STAYS = frozenset({ActionType.TYPE, ActionType.ENTER, ActionType.WAIT, ActionType.SWIPE})


@dataclass(frozen=True, slots=True)
class MapParse:
    """A map screen as a parse, and the map element key behind each element id."""

    parse: ScreenParse
    keys: dict[str, str]  # element id -> map element key

    def element_for(self, key: str) -> Element | None:
        for eid, k in self.keys.items():
            if k == key:
                return self.parse.element(eid)
        return None


@dataclass(frozen=True, slots=True)
class Ending:
    """Where a macro ends: ``package`` and ``key`` on its map; ``key == HOME`` on the home
    screen; ``key == ""`` when the maps cannot say (``reason`` says why, ``step`` which step)."""

    package: str = ""
    key: str = ""
    reason: str = ""
    step: int = -1  # the (0-based) step the walk could not follow
    app_name: str = ""  # the app's name as the recording says it ("Settings"), when it does

    @property
    def known(self) -> bool:
        return bool(self.key)


def find_map(maps: Iterable[AppMap], app: str) -> AppMap | None:
    """The map of ``app`` (a package or the app's name)."""
    want = app.strip().casefold()
    if not want:
        return None
    for m in maps:
        if want in (m.package.casefold(), m.label.casefold()):
            return m
    return None


def map_parse(screen: MapScreen) -> MapParse:
    """The mapped elements of ``screen`` as a parse (see the module docstring)."""
    w, h = screen.size if screen.size[0] > 0 and screen.size[1] > 0 else (1080, 2400)
    elements: list[Element] = []
    keys: dict[str, str] = {}
    for n, el in enumerate(screen.elements.values(), 1):
        fp = el.fingerprint
        left, top, right, bottom = el.bounds
        if right <= left or bottom <= top:
            left, top, right, bottom = 0, 0, 1, 1
        if el.below:  # seen after one scroll: under the screen, so rows do not mix
            top, bottom = top + h, bottom + h
        try:
            kind = ElementKind(fp.kind or el.kind)
        except ValueError:
            kind = ElementKind.UNKNOWN
        eid = str(n)
        elements.append(Element(eid, kind, Rect(left, top, right, bottom), text=fp.text, label=fp.label,
                                resource_id=fp.resource_id, class_name=fp.class_name, clickable=True,
                                checkable=kind in _TOGGLES, password=el.reason == "password field"))
        keys[eid] = el.key
    return MapParse(ScreenParse(Size(w, h), tuple(elements)), keys)


def containing_row(parse: ScreenParse, element: Element) -> Element:
    """For a switch or checkbox, the tappable row around it that has words (the row's
    words find it again more surely than a switch's "ON"); else ``element``."""
    if element.kind not in _TOGGLES:
        return element
    rows = [e for e in parse.elements if e.id != element.id and e.clickable and e.kind not in _TOGGLES
            and (e.text or e.label) and e.rect.contains_rect(element.rect)]
    return min(rows, key=lambda e: e.rect.area) if rows else element


def _app_name(description: str) -> str:
    found = _OPENED.match(description.strip())
    return found.group(1) if found else ""


def follow(macro: Macro, maps: Sequence[AppMap]) -> Ending:
    """Where ``macro`` ends, walking its steps through ``maps`` (see the module docstring)."""
    steps = macro.steps
    m: AppMap | None = None
    here = ""
    package = ""
    name = ""
    back: list[str] = []
    first = steps[0].action if steps else None
    opens_first = first is not None and (first.type is ActionType.OPEN_APP or is_known_start(steps[0]))
    if macro.app and not opens_first:  # a replay opens the macro's app before its first step
        m = find_map(maps, macro.app)
        package = m.package if m is not None else macro.app
        here = m.root if m is not None else ""
        if m is None:
            return Ending(package, "", f"no map of {macro.app}", -1)
    for i, step in enumerate(steps):
        a = step.action
        if a.type is ActionType.OPEN_APP:
            name = _app_name(step.description) or name
            m = find_map(maps, a.app or "")
            package = m.package if m is not None else (a.app or "")
            back = []
            if m is None:
                return Ending(package, "", f"no map of {name or a.app}", i, name)
            here = m.root
            if not here:
                return Ending(package, "", f"the map of {m.label or m.package} has no first screen", i, name)
            continue
        if a.type is ActionType.HOME:
            m, here, package, back = None, HOME, "", []
            continue
        if a.type in _STAYS:
            continue
        if m is None or not here or here == HOME:
            if a.type is ActionType.BACK and here == HOME:
                continue
            return Ending(package, "", f"step {i + 1} ('{step.description}') acts outside every mapped app", i, name)
        if a.type is ActionType.BACK:
            if back:
                here = back.pop()
            elif here == m.root:
                m, here, package = None, HOME, ""
            else:
                return Ending(package, "", f"the map does not know where Back leads from step {i + 1}", i, name)
            continue
        if a.type is not ActionType.TAP:
            return Ending(package, "", f"the map knows only taps, not step {i + 1} ('{step.description}')", i, name)
        if step.expect_checked is not None:
            continue  # a switch or checkbox flipped: the screen stays
        edge = _edge_of(m, here, step.target)
        if edge is None:
            screen = m.screens[here].label()
            return Ending(package, "", f"the map does not know where step {i + 1} ('{step.description}') leads "
                                       f"from '{screen}'", i, name)
        if edge.dst == OUTSIDE:
            return Ending(step.expected_package or "", "", f"step {i + 1} leaves {m.label or m.package}", i, name)
        if edge.dst != here:
            back.append(here)
            here = edge.dst
    if here == HOME:
        return Ending("", HOME, "", -1, name)
    return Ending(package, here, "", -1, name)


def _edge_of(m: AppMap, here: str, target: Target | None) -> MapEdge | None:
    """The known edge from screen ``here`` along the element the recorded ``target`` names."""
    if target is None or target.fingerprint is None or here not in m.screens:
        return None
    mp = map_parse(m.screens[here])
    found = reidentify(Target(fingerprint=target.fingerprint, description=target.description), mp.parse)
    if found.element is None or not sure_match(found, target.fingerprint):
        return None
    return m.edges.get((here, mp.keys[found.element.id]))


def locate(maps: Sequence[AppMap], parse: ScreenParse, package: str, activity: str = "") -> Ending:
    """The screen a phone shows, found on ``maps`` (by its structural key, else its shape)."""
    m = find_map(maps, package)
    if m is None:
        return Ending(package, "", f"no map of {package}" if package else "no app in front")
    sk = screen_key(parse, package, activity)
    found = m.find(sk.key, sk.shape)
    if found is None:
        return Ending(package, "", f"the screen the macro ends on is not on the map of {m.label or m.package}")
    return Ending(package, found)


def best_target(m: AppMap, start: str, goal: str, scorer: Scorer, *,
                min_score: float = MIN_SCORE) -> tuple[str, list[MapEdge]] | None:
    """The screen of ``m`` most likely to hold ``goal``'s target that can be reached from
    ``start``, and the shortest known path there; None when no such screen is known."""
    choices = []
    for target, score in m.targets(goal, scorer, k=4):
        steps = m.path(start, target)
        if score >= min_score and steps is not None:
            choices.append((score, len(steps), target, steps))
    if not choices:
        return None
    top = max(c[0] for c in choices)
    _score, _n, target, steps = min((c for c in choices if c[0] >= top - NEAR), key=lambda c: (c[1], -c[0]))
    return target, steps
