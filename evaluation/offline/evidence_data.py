"""Recorded trajectories as training material for the step ranker.

``examples(tasks)`` walks every recorded task with the recorded history (as the offline
benchmark replays it), describes each step's candidates (``agent.knowledge.step_features``)
and marks the one the recording took; the app is the example's group, so the ranker is
fitted and judged by leaving one app out.  ``judge`` says whether a candidate is the
recorded step (the same element, and for typing the same text).  Only element-form
recordings (DroidTask) carry the element ids this needs; other formats are skipped.
Reads parsed recordings only; no model, no device.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from agent.knowledge.lexicon import Words, fold
from agent.knowledge.ranker import Example
from agent.knowledge.step_features import Candidate, Move, step_view
from agent.planners.base import Turn
from evaluation.offline.replay import gold_turn
from evaluation.offline.types import GoldKind, OfflineTask


def examples(tasks: Sequence[OfflineTask], *, on_task: Callable[[OfflineTask], None] | None = None) -> list[Example]:
    """One example per recorded step of every task with parsed element-form steps."""
    words = Words.load()
    out: list[Example] = []
    for task in tasks:
        if on_task is not None:
            on_task(task)
        if any(s.gold.kind is GoldKind.AITW or s.screen.parse is None for s in task.steps):
            continue
        history: list[Turn] = []
        for step in task.steps:
            parse = step.screen.parse
            assert parse is not None
            view = step_view(task.goal, parse, history, words=words)
            gold = step.gold
            index = view.index_of(None, complete=True) if gold.kind is GoldKind.FINISH else view.index_of(gold.element_id)
            out.append(Example(view, index, task.app, typed=gold.text or ""))
            history.append(gold_turn(gold, ""))
    return out


def judge(example: Example, candidate: Candidate) -> bool:
    """Whether taking ``candidate`` is the recorded step: its element (or "complete"), and
    for a recorded typing the same text (case and spaces folded)."""
    if example.gold is None or example.view.candidates[example.gold] is not candidate:
        return False
    if example.typed:
        return candidate.move is Move.TYPE and fold(candidate.text).strip("'\"") == fold(example.typed).strip("'\"")
    return True
