"""Shared pieces of the MCP tests: a person answering reviews from the test, and helpers
to read tool results."""

from __future__ import annotations

import json
import queue
import threading
from typing import Any

from agent.types import Decision
from app.mcp.supervisor import Review


class Person:
    """Stands where the user sits: each review waits until the test answers it."""

    def __init__(self) -> None:
        self.reviews: queue.Queue[Review] = queue.Queue()
        self._answers: queue.Queue[Decision] = queue.Queue()
        self.seen: list[Review] = []
        self._lock = threading.Lock()

    def review(self, review: Review) -> Decision:
        with self._lock:
            self.seen.append(review)
        self.reviews.put(review)
        return self._answers.get(timeout=60)

    def next_review(self, timeout: float = 30.0) -> Review:
        return self.reviews.get(timeout=timeout)

    def answer(self, decision: Decision) -> None:
        self._answers.put(decision)


def text_of(result: Any) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


def elements(result: Any) -> list[dict[str, Any]]:
    """The element JSON at the end of an observation in a tool result."""
    text = text_of(result)
    start = text.index("Elements (JSON):\n") + len("Elements (JSON):\n")
    return json.loads(text[start:].splitlines()[0])["elements"]  # type: ignore[no-any-return]


def element_id(result: Any, name: str, kind: str | None = None) -> str:
    for e in elements(result):
        if name in e["text"] and (kind is None or e["kind"] == kind):
            return str(e["id"])
    raise AssertionError(f"no element {name!r} in {[e['text'] for e in elements(result)]}")
