"""Exploring an app once to build its map (``agent.knowledge.app_map``).

``Explorer(device, parser, app).run()`` drives any ``agent.device.Device``:

* breadth-first over the elements of each screen: tap one untried element, note the
  screen it led to, press Back to return, and go on with the next element;
* each new screen's main list is scrolled down once: elements that appear there join
  the screen (marked ``below``; finding one again scrolls down first);
* when a screen has nothing left to try, go to the next screen (in the order they were
  found) that has, by restarting the app and following the shortest known path; an
  element of the path that cannot be found again marks that screen unreachable;
* when Back leaves the app or lands somewhere unexpected, restart the app (Back until
  the app is left, then open it again);
* bounded by ``ExploreBudget`` (device actions and seconds), stoppable through a
  ``CancelToken``, reporting ``ExploreProgress`` after every action, and resumable:
  give it the map of an earlier run and it carries on with what that one left untried
  (unless it was made for another app version or in another UI language than the phone
  shows now: the map records the language, ``agent.knowledge.map_language``).

Safety: an element the safety guard (``agent.safety.assess``) calls sensitive is never
tapped and is recorded as "not tried: <category>"; password fields are never touched;
nothing is ever typed.  On a phone that is not virtual ``run`` refuses to start unless
the ``consent`` callback, shown ``RISKS``, says yes.

Qt-free; no LLM; the only I/O is the device.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from agent.device import Device, DeviceError, Key
from agent.knowledge.app_map import OUTSIDE, SKIPPED, TRIED, AppMap, MapElement, MapScreen
from agent.knowledge.map_build import new_screen, sure_match
from agent.knowledge.map_language import phone_language
from agent.knowledge.screen_key import screen_key
from agent.llm.base import CancelToken
from agent.macros.reidentify import reidentify
from agent.safety import assess
from agent.types import Action, ActionType, Target
from vision.types import Element, Screen, ScreenParse

log = logging.getLogger(__name__)

#: What the user is told before exploring a real phone.
RISKS = ("Exploring taps every button of the app, one after another, to learn where each leads.\n"
         "It never taps what looks like deleting, sending, paying, installing or changing security "
         "settings, and never types anything — but it will flip switches and change settings that "
         "are not sensitive (Wi-Fi, dark theme, alarms on/off), open screens that may start things "
         "(a call, a timer), and it cannot recognise every risky button in every app.\n"
         "Use a test phone or an app whose data you can lose; you can stop at any time.")

_ATTEMPTS = 2  # failed returns before a screen is called unreachable
_LIST_SHARE = 0.4  # a list at least this tall (share of the screen) may hide elements below


class ExploreRefused(RuntimeError):
    """The user did not agree to explore a real phone."""


@runtime_checkable
class KnowsAppVersions(Protocol):
    """A phone that can say which version of an app is installed."""

    def app_version(self, package: str) -> str: ...


def app_version(device: object, package: str) -> str:
    """The installed version of ``package`` ("" when the phone cannot tell)."""
    try:
        if isinstance(device, KnowsAppVersions):
            return device.app_version(package)
        shell = getattr(device, "shell", None)
        if callable(shell):
            out = str(shell(["dumpsys", "package", package]))
            for line in out.splitlines():
                line = line.strip()
                if line.startswith("versionName="):
                    return line.split("=", 1)[1].strip()
    except Exception as exc:  # a version we cannot read only means the map is never called stale
        log.info("could not read the version of %s: %s", package, exc)
    return ""


@dataclass(frozen=True, slots=True)
class ExploreBudget:
    """When exploration stops: device actions, seconds, screens."""

    max_steps: int = 400
    max_seconds: float = 900.0
    max_screens: int = 80
    settle_s: float = 0.0  # pause after each action (real phones animate)
    scroll: bool = True  # also look below the fold of each new screen's list

    def __post_init__(self) -> None:
        if self.max_steps < 1 or self.max_seconds <= 0 or self.max_screens < 1:
            raise ValueError("the exploration budget needs at least one step, one screen and some seconds")


@dataclass(frozen=True, slots=True)
class ExploreProgress:
    """Where an exploration stands, after each action."""

    app: str
    steps: int
    max_steps: int
    seconds: float
    screens: int
    transitions: int
    untried: int
    message: str
    done: bool = False

    @property
    def fraction(self) -> float:
        """How much of the step budget is spent (0..1)."""
        return min(1.0, self.steps / max(1, self.max_steps))


@dataclass
class _Seen:
    screen: Screen
    parse: ScreenParse
    package: str
    key: str
    shape: str = ""


def _centre(e: Element) -> tuple[int, int]:
    c = e.rect.center
    return int(c.x), int(c.y)


class Explorer:
    """One exploration of one app; see the module docstring."""

    def __init__(self, device: Device, parser: object, app: str, *, app_map: AppMap | None = None,
                 budget: ExploreBudget | None = None, progress: Callable[[ExploreProgress], None] | None = None,
                 cancel: CancelToken | None = None, consent: Callable[[str], bool] | None = None,
                 save: Callable[[AppMap], None] | None = None, save_every: int = 25) -> None:
        self.device, self.parser, self.app = device, parser, app
        self.budget = budget or ExploreBudget()
        self.progress, self.cancel, self.consent = progress, cancel, consent
        self.save, self.save_every = save, max(1, save_every)
        self.map = app_map
        self.steps = 0
        self.sensitive_taps = 0  # must stay 0: counted from the guard's verdict on what was tapped
        self._t0 = 0.0
        self._seconds0 = 0.0
        self._steps0 = 0
        self._failed: dict[str, int] = {}
        self._package = ""
        self._root = ""

    # ---- the budget --------------------------------------------------------------------------
    def _elapsed(self) -> float:
        return time.perf_counter() - self._t0

    def _out_of_budget(self) -> str:
        if self.cancel is not None and self.cancel.cancelled:
            return "stopped by the user"
        if self.steps >= self.budget.max_steps:
            return f"step budget of {self.budget.max_steps} spent"
        if self._elapsed() >= self.budget.max_seconds:
            return f"time budget of {self.budget.max_seconds:.0f} s spent"
        return ""

    def _report(self, message: str, done: bool = False) -> None:
        m = self.map
        assert m is not None
        m.steps_used = self._steps0 + self.steps
        m.seconds_used = self._seconds0 + self._elapsed()
        if self.save is not None and (done or self.steps % self.save_every == 0):
            self.save(m)
        if self.progress is not None:
            cov = m.coverage()
            self.progress(ExploreProgress(m.label or self.app, self.steps, self.budget.max_steps,
                                          round(self._elapsed(), 1), cov["screens"], cov["transitions"],
                                          cov["untried"], message, done))

    # ---- the device ----------------------------------------------------------------------------
    def _act(self, what: Callable[[], None]) -> None:
        self.steps += 1
        what()
        if self.budget.settle_s:
            time.sleep(self.budget.settle_s)

    def _observe(self) -> _Seen:
        seen, activity = self._look()
        if seen.package == self._package:
            self._register(seen, activity)
        return seen

    def _look(self) -> tuple[_Seen, str]:
        """The screen as it is now, not added to the map; and its activity."""
        screen = self.device.screenshot(with_hierarchy=True)
        parse = self.parser.parse(screen)  # type: ignore[attr-defined]
        package = screen.foreground_package or ""
        activity = screen.foreground_activity or ""
        if not package:
            package, activity = self.device.foreground()
        sk = screen_key(parse, package, activity)
        return _Seen(screen, parse, package, sk.key, sk.shape), activity

    def _register(self, seen: _Seen, activity: str) -> MapScreen:
        m = self.map
        assert m is not None
        screen = m.screens.get(seen.key)
        if screen is not None:
            screen.visits += 1
            return screen
        screen, found = new_screen(seen.key, seen.parse, seen.package, activity, seen.screen.image, seen.shape)
        for key, el in screen.elements.items():
            reason = self._why_not(found[key], seen)
            if reason:
                el.status, el.reason = SKIPPED, reason
        m.screens[seen.key] = screen
        if self.budget.scroll:
            self._below(seen, screen, activity)
        log.info("new screen %s %r with %d elements", seen.key, screen.title, len(screen.elements))
        return screen

    def _list_of(self, parse: ScreenParse) -> Element | None:
        """The screen's main scrolling list (the tallest), if it is tall enough to hide things."""
        lists = [e for e in parse.elements if e.scrollable and not e.covered
                 and e.rect.height >= parse.screen_size.height * _LIST_SHARE]
        return max(lists, key=lambda e: e.rect.height, default=None)

    def _scroll(self, container: Element, down: bool = True) -> None:
        r = container.rect
        x = int(r.center.x)
        low, high = int(r.top + r.height * 0.8), int(r.top + r.height * 0.2)
        self._act(lambda: self.device.swipe(x, low, x, high, 400) if down else self.device.swipe(x, high, x, low, 400))

    def _below(self, seen: _Seen, screen: MapScreen, activity: str) -> None:
        """Scroll the screen's list down once and add the elements that appear there (marked
        ``below``), then scroll back up."""
        container = self._list_of(seen.parse)
        if container is None or self._out_of_budget():
            return
        self._scroll(container)
        after, _act = self._look()
        if after.package == self._package and after.screen.foreground_activity == seen.screen.foreground_activity:
            more, found = new_screen(after.key, after.parse, after.package, activity, None, after.shape)
            for key, el in more.elements.items():
                if key in screen.elements:
                    continue
                el.below = True
                reason = self._why_not(found[key], after)
                if reason:
                    el.status, el.reason = SKIPPED, reason
                screen.elements[key] = el
        self._scroll(container, down=False)
        self._scroll(container, down=False)

    def _why_not(self, e: Element, seen: _Seen) -> str:
        if e.password:
            return "password field"
        tap = Action(ActionType.TAP, target=Target(element_id=e.id))
        verdict = assess(tap, seen.parse, seen.package)
        if verdict.sensitive and verdict.category is not None:
            return verdict.category.value
        return ""

    def _leave_and_open(self) -> _Seen:
        """Back out of the app (or press Home), then open it again on its first screen."""
        for _ in range(6):
            seen = self._observe()
            if seen.package != self._package:
                break
            self._act(lambda: self.device.key(Key.BACK))
        else:
            self._act(lambda: self.device.key(Key.HOME))
        self._act(lambda: self.device.open_app(self.app))
        return self._observe()

    def _find(self, seen: _Seen, el: MapElement) -> tuple[Element | None, _Seen]:
        """``el`` on this screen (scrolling the list down once for one found below); returns
        the element and the screen it was found on."""
        match = reidentify(Target(fingerprint=el.fingerprint, description=el.name), seen.parse, seen.screen.image)
        if sure_match(match, el.fingerprint) or not el.below:
            return (match.element if sure_match(match, el.fingerprint) else None), seen
        container = self._list_of(seen.parse)
        if container is None:
            return None, seen
        self._scroll(container)
        seen, _act = self._look()
        match = reidentify(Target(fingerprint=el.fingerprint, description=el.name), seen.parse, seen.screen.image)
        return (match.element if sure_match(match, el.fingerprint) else None), seen

    def _go_to(self, target: str, here: _Seen | None = None) -> _Seen | None:
        """Follow the shortest known path to ``target``, from ``here`` when one is known,
        else after restarting the app; None when lost."""
        m = self.map
        assert m is not None
        if here is not None and here.package == self._package and m.path(here.key, target) is not None:
            got = self._follow(here, target)
            if got is not None:
                return got
        seen = self._leave_and_open()
        if seen.package != self._package:
            return None
        return self._follow(seen, target)

    def _follow(self, seen: _Seen, target: str) -> _Seen | None:
        m = self.map
        assert m is not None
        steps = m.path(seen.key, target)
        if steps is None:
            return None
        for edge in steps:
            if self._out_of_budget():
                return None
            el = m.screens[edge.src].elements.get(edge.element)
            found = None
            if el is not None and seen.key == edge.src:
                found, seen = self._find(seen, el)
            if found is None:
                return None
            self._act(lambda f=found: self.device.tap(*_centre(f)))  # type: ignore[misc]
            seen = self._observe()
        return seen if seen.key == target else None

    # ---- the exploration ----------------------------------------------------------------------
    def run(self) -> AppMap:
        """Explore until nothing is left to try or the budget is spent; returns the map."""
        info = self.device.info
        if not info.is_virtual:
            if self.consent is None or not self.consent(RISKS):
                raise ExploreRefused("exploring a real phone needs your consent: " + RISKS.splitlines()[0])
        self._t0 = time.perf_counter()
        self.device.key(Key.HOME)
        self.device.open_app(self.app)
        first = self.device.screenshot(with_hierarchy=True)
        package = first.foreground_package or self.device.foreground()[0]
        if not package:
            raise DeviceError(f"could not tell which app {self.app!r} is", "is it installed?")
        version = app_version(self.device, package)
        language = phone_language(self.device)
        other_language = self.map is not None and bool(language) and self.map.language != language
        if self.map is None or self.map.package != package or self.map.is_stale(version) or other_language:
            if self.map is not None and self.map.is_stale(version):
                log.info("the map of %s was for version %s, the phone has %s: starting again",
                         package, self.map.app_version, version)
            elif other_language:
                log.info("the map of %s is in %r, the phone shows %r: starting a map of this language",
                         package, self.map.language if self.map else "", language)
            self.map = AppMap(package, self.app, version, language=language)
        m = self.map
        m.app_version = version or m.app_version
        m.language = language or m.language
        m.label = m.label or self.app
        self._package = package
        self._steps0, self._seconds0 = m.steps_used, m.seconds_used
        m.complete = False
        seen = self._observe()
        self._root = m.root = m.root or seen.key
        self._report(f"opened {self.app}")
        stop = self._explore(seen)
        if not stop:
            m.complete = True
            stop = "nothing left to try"
        self._report(stop, done=True)
        return m

    def _next_screen(self) -> str | None:
        m = self.map
        assert m is not None
        for s in m.screens.values():  # dicts keep discovery order: breadth-first
            if s.untried() and not s.unreachable:
                return s.key
        return None

    def _explore(self, seen: _Seen) -> str:
        m = self.map
        assert m is not None
        while True:
            stop = self._out_of_budget()
            if stop:
                return stop
            if seen.package != self._package:
                seen = self._leave_and_open()
                if seen.package != self._package:
                    raise DeviceError(f"{self.app!r} does not open", "is it installed and does it start?")
                continue
            screen = m.screens[seen.key]
            todo = screen.untried()
            if not todo:
                target = self._next_screen()
                if target is None:
                    return ""
                if len(m.screens) >= self.budget.max_screens and target not in m.screens:
                    return f"screen budget of {self.budget.max_screens} reached"
                got = self._go_to(target, seen)
                if got is None:
                    if self._out_of_budget():
                        continue
                    self._failed[target] = self._failed.get(target, 0) + 1
                    if self._failed[target] >= _ATTEMPTS:
                        m.screens[target].unreachable = "no known way back here"
                        self._report(f"could not come back to '{m.screens[target].label()}'")
                    seen = self._observe()
                else:
                    seen = got
                continue
            seen = self._try(seen, screen, todo[0])

    def _try(self, seen: _Seen, screen: MapScreen, el: MapElement) -> _Seen:
        m = self.map
        assert m is not None
        found, seen = self._find(seen, el)
        if found is None:
            el.status, el.reason = SKIPPED, "not found again"
            return seen
        verdict = assess(Action(ActionType.TAP, target=Target(element_id=found.id)), seen.parse, seen.package)
        if verdict.sensitive or found.password:  # the screen changed around it: ask again
            el.status = SKIPPED
            el.reason = found.password and "password field" or (verdict.category.value if verdict.category else "sensitive")
            return seen
        self._act(lambda: self.device.tap(*_centre(found)))
        el.status = TRIED
        after = self._observe()
        dst = after.key if after.package == self._package else OUTSIDE
        if dst != OUTSIDE and len(m.screens) > self.budget.max_screens:
            m.screens.pop(dst, None)  # over the screen budget: keep the edge, forget the screen
        m.add_edge(screen.key, el.key, dst)
        self._report(f"'{el.name}' → " + ("another app" if dst == OUTSIDE else
                                          f"'{m.screens[dst].label()}'" if dst in m.screens else dst[:6]))
        if dst == screen.key:
            return after
        self._act(lambda: self.device.key(Key.BACK))
        back = self._observe()
        if back.key == screen.key or not screen.untried() or back.package == self._package:
            return back  # elsewhere in the app: explore there; the loop comes back here later
        got = self._go_to(screen.key, back)
        return got if got is not None else self._observe()


def explore(device: Device, parser: object, app: str, **kwargs: object) -> AppMap:
    """``Explorer(device, parser, app, **kwargs).run()``."""
    return Explorer(device, parser, app, **kwargs).run()  # type: ignore[arg-type]


__all__ = ["RISKS", "ExploreBudget", "ExploreProgress", "ExploreRefused", "Explorer", "KnowsAppVersions",
           "app_version", "explore"]
