"""Who answers a ``ConsentQuestion``, and what is remembered.

``ConsentGate`` is the protocol a front end implements (the window's dialog, a terminal
prompt); it is called on the thread that makes the request and blocks until the user
answers.  ``ConsentMemory`` keeps "for this task" answers, per model (the application's
is a file beside the settings; ``InMemoryConsents`` for one process).  ``RememberedOnly``
answers from memory and says no to anything else (for front ends that cannot ask, such as
the MCP server); ``AllowAll`` says yes (for benchmarks run by their author on loopback
stand-ins).  No I/O here.
"""

from __future__ import annotations

import threading
from typing import Protocol, runtime_checkable

from agent.privacy.types import ConsentAnswer, ConsentKind, ConsentQuestion


@runtime_checkable
class ConsentGate(Protocol):
    def ask(self, question: ConsentQuestion) -> ConsentAnswer: ...


@runtime_checkable
class ConsentMemory(Protocol):
    def allowed(self, kind: ConsentKind, model: str, goal: str) -> bool: ...

    def remember(self, kind: ConsentKind, model: str, goal: str) -> None: ...


def task_key(goal: str) -> str:
    """What makes two goals the same task for remembered consent: the words, case and spacing aside."""
    return " ".join(goal.lower().split())


class InMemoryConsents:
    """"For this task" answers kept for the life of the object."""

    def __init__(self) -> None:
        self._kept: set[tuple[str, str, str]] = set()
        self._lock = threading.Lock()

    def allowed(self, kind: ConsentKind, model: str, goal: str) -> bool:
        with self._lock:
            return (kind.value, model, task_key(goal)) in self._kept

    def remember(self, kind: ConsentKind, model: str, goal: str) -> None:
        with self._lock:
            self._kept.add((kind.value, model, task_key(goal)))


class AllowAll:
    """Says yes to everything (benchmarks with loopback stand-ins; never a user's default)."""

    def ask(self, question: ConsentQuestion) -> ConsentAnswer:
        return ConsentAnswer.ONCE


class RememberedOnly:
    """Says no to anything the user has not allowed before (front ends that cannot ask)."""

    def ask(self, question: ConsentQuestion) -> ConsentAnswer:
        return ConsentAnswer.NO


class Consent:
    """A gate with a memory (see ``permit``).  Thread-safe; one question at a time."""

    def __init__(self, gate: ConsentGate, memory: ConsentMemory | None = None) -> None:
        self.gate = gate
        self.memory = memory if memory is not None else InMemoryConsents()
        self._lock = threading.Lock()

    def permit(self, question: ConsentQuestion) -> bool:
        """Ask (unless remembered); a "for this task" answer to an escalation is remembered
        for the task and the model.  Sending to a remote server is asked once per run, never
        remembered: the user sees each run's first request."""
        remembers = question.kind is ConsentKind.ESCALATE
        with self._lock:
            if remembers and self.memory.allowed(question.kind, question.model, question.goal):
                return True
            answer = self.gate.ask(question)
            if answer is ConsentAnswer.TASK and remembers:
                self.memory.remember(question.kind, question.model, question.goal)
            return answer is not ConsentAnswer.NO
