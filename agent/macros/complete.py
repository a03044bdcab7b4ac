"""Completing a recorded macro from the app maps: the steps the map knows from where the
recording stops to what its goal is after, appended as the macro's next version.

A user records part of a task on the mirror ("open Settings" for a macro called "Turn
on dark theme") and asks the map for the rest.  ``complete(macro, maps, goal)``:

1. finds where the macro ends: walking its steps through the maps
   (``agent.knowledge.macro_path.follow``), or, given an ``Ending`` from a replay
   (``ending_by_replay``), the screen the phone showed;
2. asks that app's map for the screen most likely to hold the goal's target and the
   shortest known path there (``macro_path.best_target``: ``AppMap.targets`` and
   ``AppMap.path``, chosen as the planners' map guide chooses); from the home screen
   the best screen of any map, after opening its app on its first screen;
3. on that screen, the element the goal's words point at (``agent.knowledge.focus``):
   the "Dark theme" row for "Turn on dark theme" (a switch's row rather than the switch);
4. makes one step per tap, each carrying its element's fingerprint from the map (a replay
   finds it again like a recorded step's), a scroll first where the element was seen
   only below the fold, and "turn on" / "turn off" with the state the goal asks for
   where it asks one (a replay then leaves a switch alone that already shows it);
5. marks every added step "from the app map" in its words, and asks the safety guard
   (``agent.safety.assess``) about each on the map's copy of its screen: a step the
   guard calls sensitive, or one exploration left alone as sensitive, says
   "sensitive: <why>" and keeps its element's words as the target's description, so
   the guard calls it sensitive again when a replay reaches it and the replay asks;
6. returns a ``Completion``: the next version of the macro (``editing.next_version``,
   not saved: the caller shows it and saves it), the added steps, and where it goes.

When there is no map of the app, or the map knows no way from where the macro ends to
a screen that matches the goal, ``NoMapPath`` says so and names the command that builds
the map ("explore the app first: tapwise explore Settings").

No Qt, no model; talks to a phone only in ``ending_by_replay``.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass

from agent.knowledge.app_map import SKIPPED, AppMap, MapEdge
from agent.knowledge.focus import asked_state, focus
from agent.knowledge.macro_path import (
    HOME,
    Ending,
    MapParse,
    best_target,
    containing_row,
    find_map,
    follow,
    locate,
    map_parse,
)
from agent.knowledge.map_build import sure_match
from agent.knowledge.retrieval import LexicalScorer, Scorer
from agent.macros.editing import next_version
from agent.macros.reidentify import reidentify
from agent.macros.start import fresh_launch_step
from agent.macros.types import Macro, MacroStep
from agent.safety import assess
from agent.screen_text import is_home
from agent.types import Action, ActionType, Target
from vision.geometry import Point

log = logging.getLogger(__name__)

#: The words every added step carries.
MAP_MARK = "from the app map"
#: Why exploration may have left an element alone without it being sensitive.
_NOT_SENSITIVE = frozenset({"", "not found again"})
_SENSITIVE = re.compile(r"; sensitive: (.+)\)$")


class CompletionError(ValueError):
    """The macro cannot be completed; the message says why and what to do."""


class NoMapPath(CompletionError):
    """No map of the app, or no known way from where the macro ends to its goal."""


def explore_hint(app: str) -> str:
    """What to do when the map knows no way: build (or grow) it."""
    name = app if app and " " not in app else f'"{app}"' if app else "APP"
    return f"explore the app first: tapwise explore {name}"


@dataclass(frozen=True, slots=True)
class AddedStep:
    """One step the map adds: the step, its plain words and why it is sensitive ("" if not)."""

    step: MacroStep
    words: str
    sensitive: str = ""


@dataclass(frozen=True, slots=True)
class Completion:
    """A proposed completion: ``macro`` is the next version (not yet saved)."""

    macro: Macro
    goal: str
    app: str  # the app's name (or package) the added steps act in
    start: str  # the screen the recording ends on, in words
    target: str  # the screen the map expects the goal's target on
    added: tuple[AddedStep, ...]
    note: str = ""  # anything the user should know ("no element on 'Display' matches ...")

    @property
    def sensitive(self) -> tuple[AddedStep, ...]:
        return tuple(a for a in self.added if a.sensitive)

    def summary(self) -> str:
        n = len(self.added)
        steps = f"{n} step{'' if n == 1 else 's'}"
        if self.start == self.target:
            text = (f"The macro ends on '{self.start}', where the {self.app} map expects what “{self.goal}” needs: "
                    f"it adds {steps} there.")
        else:
            text = f"From '{self.start}', the {self.app} map adds {steps} towards '{self.target}' for “{self.goal}”."
        if self.sensitive:
            k = len(self.sensitive)
            text += f" {k} of them {'is' if k == 1 else 'are'} sensitive: a replay asks before {'it' if k == 1 else 'them'}."
        return text + (f" {self.note}" if self.note else "")


def is_from_map(step: MacroStep) -> bool:
    """True for a step a completion added."""
    return f"({MAP_MARK}" in step.description


def sensitive_reason(step: MacroStep) -> str:
    """Why an added step was marked sensitive ("" when it was not)."""
    found = _SENSITIVE.search(step.description)
    return found.group(1) if found else ""


def _marked(words: str, sensitive: str) -> str:
    return f"{words} ({MAP_MARK}; sensitive: {sensitive})" if sensitive else f"{words} ({MAP_MARK})"


def complete(macro: Macro, maps: Sequence[AppMap], goal: str | None = None, *, end: Ending | None = None,
             scorer: Scorer | None = None) -> Completion:
    """The macro completed from ``maps`` towards ``goal`` (default: its description, else its
    name); raises ``NoMapPath`` / ``CompletionError`` with what to do."""
    goal = " ".join((goal or macro.description or macro.name).split())
    if not goal:
        raise CompletionError("say what the macro is for (its goal) to complete it from the app map")
    if not macro.steps:
        raise CompletionError("the macro has no steps: record at least one before completing it from the map")
    maps = list(maps)
    scorer = scorer or LexicalScorer()
    ending = end if end is not None else follow(macro, maps)
    if not ending.known:
        m = find_map(maps, ending.package) if ending.package else None
        app = (m.label if m is not None else "") or ending.app_name or ending.package or macro.app or ""
        if m is None and ending.reason.startswith("no map"):
            raise NoMapPath(f"There is no app map of {app or 'this app'}: {explore_hint(app)}.")
        raise NoMapPath(f"The app map cannot tell where the macro ends: {ending.reason}. Replay it to find out "
                        f"(tapwise macro complete {_quote(macro.name)} --replay), or {explore_hint(app)} "
                        "(further), so that the map knows where its steps lead.")
    if ending.key == HOME:
        return _from_home(macro, maps, goal, scorer)
    m = find_map(maps, ending.package)
    if m is None or ending.key not in m.screens:
        app = ending.app_name or ending.package
        raise NoMapPath(f"There is no app map of {app}: {explore_hint(app)}.")
    found = best_target(m, ending.key, goal, scorer)
    app = m.label or m.package
    start = m.screens[ending.key].label()
    if found is None:
        raise NoMapPath(f"The map of {app} knows no way from '{start}' to a screen for “{goal}”: "
                        f"{explore_hint(app)} (or further, if it was explored before).")
    target, path = found
    added, note = _steps(m, path, target, goal, scorer, last=macro.steps[-1] if not path else None)
    if not added:
        raise CompletionError(f"Nothing to add: the macro already ends on '{start}', where the {app} map expects "
                              f"what “{goal}” needs. {note}".strip())
    return _completion(macro, goal, app, start, m.screens[target].label(), added, note)


def _from_home(macro: Macro, maps: Sequence[AppMap], goal: str, scorer: Scorer) -> Completion:
    """From the home screen: the best screen of any map, after opening its app fresh."""
    best: tuple[float, int, AppMap, str, list[MapEdge]] | None = None
    for m in maps:
        if not m.root:
            continue
        found = best_target(m, m.root, goal, scorer)
        if found is None:
            continue
        target, path = found
        score = next((s for k, s in m.targets(goal, scorer, k=4) if k == target), 0.0)
        if best is None or (score, -len(path)) > (best[0], -best[1]):
            best = (score, len(path), m, target, path)
    if best is None:
        raise NoMapPath(f"No app map knows a screen for “{goal}”: {explore_hint('APP')} (the app that does it).")
    _s, _n, m, target, path = best
    app = m.label or m.package
    opening = fresh_launch_step(m.package, m.label)
    opened = AddedStep(MacroStep(opening.action, _marked(opening.description, ""), expected_package=m.package),
                       opening.description)
    verdict = assess(opening.action)
    if verdict.sensitive:
        opened = AddedStep(MacroStep(opening.action, _marked(opening.description, verdict.reason),
                                     expected_package=m.package), opening.description, verdict.reason)
    added, note = _steps(m, path, target, goal, scorer, last=None)
    return _completion(macro, goal, app, "the home screen", m.screens[target].label(), [opened, *added], note)


def _completion(macro: Macro, goal: str, app: str, start: str, target: str, added: list[AddedStep],
                note: str) -> Completion:
    steps = (*macro.steps, *(a.step for a in added))
    new = next_version(macro, steps, description=macro.description or goal)
    log.info("completed %r from the %s map: %d step(s) to %r", macro.name, app, len(added), target)
    return Completion(new, goal, app, start, target, tuple(added), note)


def _steps(m: AppMap, path: list[MapEdge], target: str, goal: str, scorer: Scorer,
           last: MacroStep | None) -> tuple[list[AddedStep], str]:
    """The path's taps and the final element's; ``last`` is the recording's last step when it
    ends on the target screen itself (an element it already acts on is not added again)."""
    out: list[AddedStep] = []
    for edge in path:
        screen = m.screens[edge.src]
        mp = map_parse(screen)
        out += _tap(m, edge.src, mp, edge.element, "tap", None)
    mp = map_parse(m.screens[target])
    f = focus(goal, mp.parse, app_label=m.label, scorer=scorer)
    if f is None:
        return out, f"No element on '{m.screens[target].label()}' matches the goal's words: the macro ends there."
    el = containing_row(mp.parse, f.element)
    if last is not None and _acts_on(last, mp, el.id):
        return out, f"Its last step already acts on '{m.screens[target].elements[mp.keys[el.id]].name}'."
    asked = asked_state(goal)
    verb = "tap" if asked is None else "turn on" if asked else "turn off"
    out += _tap(m, target, mp, mp.keys[el.id], verb, asked)
    return out, ""


def _acts_on(step: MacroStep, mp: MapParse, element_id: str) -> bool:
    if step.action.type is not ActionType.TAP or step.target is None or step.target.fingerprint is None:
        return False
    found = reidentify(Target(fingerprint=step.target.fingerprint), mp.parse)
    return sure_match(found, step.target.fingerprint) and found.element is not None and \
        found.element.id == element_id


def _tap(m: AppMap, screen_key: str, mp: MapParse, element_key: str, verb: str,
         expect: bool | None) -> list[AddedStep]:
    """A scroll (when the element lies below the fold) and the tap on one map element."""
    screen = m.screens[screen_key]
    mel = screen.elements[element_key]
    el = mp.element_for(element_key)
    assert el is not None
    out: list[AddedStep] = []
    if mel.below:
        w, h = mp.parse.screen_size.width, mp.parse.screen_size.height
        words = f"scroll down on '{screen.label()}'"
        out.append(AddedStep(MacroStep(Action.swipe(w // 2, h * 4 // 5, w // 2, h // 5), _marked(words, ""),
                                       expected_package=m.package), words))
    left, top, right, bottom = mel.bounds
    point = Point((left + right) // 2, (top + bottom) // 2)
    words = f"{verb} '{mel.name}'"
    why = _sensitive(mel.status, mel.reason, el.id, words, mp, m.package)
    target = Target(point=point, description=words, fingerprint=mel.fingerprint)
    step = MacroStep(Action(ActionType.TAP, touch=point, target=target), _marked(words, why), target,
                     expected_package=m.package, expect_checked=expect)
    out.append(AddedStep(step, words, why))
    return out


def _sensitive(status: str, reason: str, element_id: str, words: str, mp: MapParse, package: str) -> str:
    """Why the safety guard calls tapping this element sensitive ("" when it does not)."""
    el = mp.parse.element(element_id)
    assert el is not None
    tap = Action(ActionType.TAP, touch=el.rect.center, target=Target(element_id=element_id, description=words))
    verdict = assess(tap, mp.parse, package)
    if verdict.sensitive:
        return verdict.reason
    if status == SKIPPED and reason not in _NOT_SENSITIVE:
        return f"{reason} — exploring left it alone"
    return ""


def ending_by_replay(replayer: object, macro: Macro, maps: Sequence[AppMap],
                     params: dict[str, str] | None = None) -> Ending:
    """Replay ``macro`` with ``replayer`` (an ``agent.macros.replay.Replayer``; nobody there
    to demonstrate a step) and find the screen it ends on on ``maps``."""
    from agent.macros.replay import Replayer, run_unattended

    assert isinstance(replayer, Replayer)
    result = run_unattended(replayer, macro, params)
    if not result.succeeded:
        return Ending(macro.app or "", "", f"the replay {result.status}" + (f": {result.message}" if result.message
                                                                           else ""))
    screen = replayer.device.screenshot(with_hierarchy=True)
    parse = replayer.parser.parse(screen)
    package = screen.foreground_package or replayer.device.foreground()[0] or ""
    activity = screen.foreground_activity or ""
    if is_home(package):
        return Ending("", HOME)
    return locate(maps, parse, package, activity)


def _quote(name: str) -> str:
    return f'"{name}"' if " " in name else name
