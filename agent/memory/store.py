"""Where remembered decisions are kept: the ``DecisionStore`` protocol and an in-memory
implementation (tests, benchmarks, sessions without a database).

The app's SQLite store implements the protocol (``app.knowledge_store``); ``agent`` never
imports ``app``.  Decisions cross the boundary as ``Remembered`` objects.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from agent.memory.types import Remembered


@runtime_checkable
class DecisionStore(Protocol):
    """Remembered decisions, one document each."""

    def save_decision(self, entry: Remembered) -> None:
        """Insert or replace (by ``entry.id``)."""
        ...

    def decisions(self, app: str | None = None) -> list[Remembered]:
        """Every decision (of ``app`` when given), oldest first."""
        ...

    def delete_decision(self, entry_id: str) -> None: ...


class InMemoryDecisions:
    """``DecisionStore`` in a dict."""

    def __init__(self) -> None:
        self._rows: dict[str, Remembered] = {}

    def save_decision(self, entry: Remembered) -> None:
        self._rows[entry.id] = entry

    def decisions(self, app: str | None = None) -> list[Remembered]:
        rows = [r for r in self._rows.values() if app is None or r.app == app]
        return sorted(rows, key=lambda r: r.at)

    def delete_decision(self, entry_id: str) -> None:
        self._rows.pop(entry_id, None)
