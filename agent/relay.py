"""Passing a run's events through unchanged while something listens to each one.

``relay(gen, hear)`` yields ``gen``'s events, sends the decisions back into it and returns
what it returns; ``hear(event)`` is called for each event before it is passed on, on the
thread that drives the run.  A listener that fails is logged and the run goes on: what
listens (learning, the decision memory) is an extra, the run is not.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Generator
from typing import Any, TypeVar

from agent.events import Event
from agent.types import Decision

log = logging.getLogger(__name__)

R = TypeVar("R")


def relay(gen: Generator[Event, Decision | None, R], hear: Callable[[Event], None], *,
          what: str = "a listener") -> Generator[Event, Decision | None, R]:
    """``gen`` unchanged, ``hear`` told of every event first (see the module docstring)."""
    reply: Any = None
    try:
        while True:
            try:
                event = gen.send(reply)
            except StopIteration as stop:
                return stop.value  # type: ignore[no-any-return]
            try:
                hear(event)
            except Exception:  # best effort: the run goes on
                log.warning("%s failed on %s", what, type(event).__name__, exc_info=True)
            reply = yield event
    finally:
        gen.close()
