"""The runner's side of the record of a run: telling it about actions, and putting what
flashed on the screen into the steps and into the next screen's description.

``FlashSteps`` wraps an ``agent.transient.RunRecord`` (or nothing: every method is then a
no-op).  Each call only reads or appends (the record works on threads of its own) and
reports the milliseconds it took, so the runner can show what the record costs a step.
``pull`` returns the stored steps that gained transients since the last pull (to store
again and announce) and the lines for the next screen's description: what flashed after
the last action and, not yet gone, what appeared over the screen without being part of
the parsed screen.  A message is told to the model once.  No I/O, no Qt.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from agent.transient import RunRecord, Transient, by_step, screen_note
from agent.types import Action, ActionType, Episode, Step
from vision.geometry import Rect
from vision.types import ScreenParse

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Pulled:
    """What a pull found: steps to store again, lines for the screen, and its cost."""

    amended: tuple[Step, ...] = ()
    note: str = ""
    ms: float = 0.0


@dataclass
class FlashSteps:
    """See the module docstring."""

    record: RunRecord | None = None
    _told: set[tuple[int, str]] = field(default_factory=set)
    _attached: dict[int, tuple[Transient, ...]] = field(default_factory=dict)

    def _call(self, fn: Callable[..., Any], *args: Any) -> tuple[Any, float]:
        t0 = time.perf_counter()
        try:
            out = fn(*args)
        except Exception:  # the record is an extra: a step never fails for it
            log.warning("the record of the run failed", exc_info=True)
            out = None
        return out, (time.perf_counter() - t0) * 1000

    def action_begins(self, step: int, at: float, action: Action) -> float:
        """Milliseconds spent telling the record an action is about to go out (a wait,
        which does not touch the phone, is not told)."""
        if self.record is None or action.type is ActionType.WAIT:
            return 0.0
        return self._call(self.record.action_begins, step, at, touched(action))[1]

    def action_sent(self, step: int, started: float, ended: float, action: Action) -> float:
        if self.record is None or action.type is ActionType.WAIT:
            return 0.0
        return self._call(self.record.action_sent, step, started, ended, touched(action))[1]

    def pull(self, episode: Episode, last_step: int | None, parse: ScreenParse | None) -> Pulled:
        """What the record found so far; ``last_step`` is the index of the step whose action
        went out last (None before any), ``parse`` the screen now."""
        if self.record is None:
            return Pulled()
        found, ms1 = self._call(self.record.transients)
        amended = self._attach(episode, found or ())
        note = ""
        ms2 = 0.0
        if last_step is not None:
            showing, ms2 = self._call(self.record.showing, last_step)
            note = self._note(by_step(found or ()).get(last_step, ()), showing or (), parse)
        return Pulled(tuple(amended), note, ms1 + ms2)

    def settle(self, timeout_s: float) -> None:
        """At the end of a run: let the record examine what is still on its way."""
        if self.record is not None:
            self._call(self.record.settle, timeout_s)

    def _attach(self, episode: Episode, found: Any) -> list[Step]:
        grouped = by_step(found)
        out: list[Step] = []
        for step in episode.steps:
            got = grouped.get(step.index, ())
            if got and got != self._attached.get(step.index, ()):
                self._attached[step.index] = got
                out.append(replace(step, transients=got))
        return out

    def _note(self, flashed: Any, showing: Any, parse: ScreenParse | None) -> str:
        on_screen = _screen_words(parse)
        new_flashed = [t for t in flashed if (t.step, t.text.casefold()) not in self._told]
        new_showing = [t for t in showing if (t.step, t.text.casefold()) not in self._told
                       and t.text.casefold() not in on_screen]
        for t in (*new_flashed, *new_showing):
            self._told.add((t.step, t.text.casefold()))
        return screen_note(new_flashed, new_showing)


def touched(action: Action) -> Rect | None:
    """The part of the screen an action touches (device pixels), or None (keys, typing
    without a field, opening an app)."""
    points = [p for p in (action.touch, action.lift) if p is not None]
    if not points and action.type is ActionType.TYPE and action.target is not None and action.target.point is not None:
        points = [action.target.point]
    if not points:
        return None
    xs, ys = [p.x for p in points], [p.y for p in points]
    return Rect(min(xs), min(ys), max(xs) + 1, max(ys) + 1)


def _screen_words(parse: ScreenParse | None) -> str:
    """The parsed screen's words, folded, to tell text that is part of it from text over it."""
    if parse is None:
        return ""
    return "\n".join(" ".join(x for x in (e.text, e.label) if x) for e in parse.elements).casefold()


def with_steps(episode: Episode, amended: tuple[Step, ...]) -> Episode:
    """``episode`` with the amended steps in place of the ones stored before."""
    if not amended:
        return episode
    by_index = {s.index: s for s in amended}
    return replace(episode, steps=tuple(by_index.get(s.index, s) for s in episode.steps))
