"""Helpers for the macro tests on the virtual phone: its screens parsed from the view tree
alone (as a run with ``use_hierarchy="only"`` parses them), observations for the recorder,
a recording made by tapping named elements, and a replay driven to its end."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from agent.events import AwaitingDecision
from agent.macros.recorder import Observation, Recorder
from agent.types import Action
from vision.types import ScreenParse


def tree_parse(screen: Any) -> ScreenParse:
    from vision.hierarchy import parse_uiautomator

    tp = parse_uiautomator(screen.hierarchy_xml, screen.size)
    return ScreenParse(screen.size, tp.elements, tp.blocks)


class TreeParser:
    """``tree_parse`` as the replayer's parser."""

    def parse(self, screen: Any) -> ScreenParse:
        return tree_parse(screen)


def observe(phone: Any) -> Observation:
    """What the recorder sees of the phone now."""
    s = phone.screenshot(with_hierarchy=True)
    return Observation(tree_parse(s), s.image, s.foreground_package)


def observer(phone: Any) -> Callable[[], Observation]:
    return lambda: observe(phone)


def record_taps(phone: Any, words: Iterable[str], rec: Recorder | None = None) -> Recorder:
    """Tap the elements whose text is each of ``words`` in turn, recording every tap (into
    ``rec`` when given: a recording already begun)."""
    rec = rec if rec is not None else Recorder()
    for w in words:
        before = observe(phone)
        el = [e for e in before.parse.elements if e.text == w][0]
        c = el.rect.center
        phone.tap(c.x, c.y)
        rec.record(Action.tap(c.x, c.y), before, observe(phone))
    return rec


def drive_replay(replay: Any, answer: Callable[[int, AwaitingDecision], Any]) -> tuple[Any, list[Any]]:
    """Run a replay to its end, answering every decision request with ``answer(macro_step,
    event)``; the replay's result and every event it gave."""
    events: list[Any] = []
    reply = None
    try:
        while True:
            ev = replay.events.send(reply)
            events.append(ev)
            reply = answer(replay.step_of(ev), ev) if isinstance(ev, AwaitingDecision) else None
    except StopIteration as stop:
        return stop.value, events
