"""The task repository (with PBD demonstrations) and the instruction set.

* ``TaskRepository``: successful episodes and user demonstrations as ``TaskRecord``s;
  ``find(goal)`` retrieves by similarity of goals; ``examples_for(goal)`` renders the
  best ones as task–solution pairs for a planner prompt (VisionTasker's PBD examples).
* ``InstructionSet``: step-description → instruction mappings learnt from solved tasks
  and user corrections, and user-marked decompositions of compound steps (Prompt2Task
  §4.2.3); ``decomposition()`` expands a known compound step.

Both persist through a ``KnowledgeStore``.  No LLM, no device.
"""

from __future__ import annotations

import logging
from dataclasses import replace

from agent.macros.types import Macro
from agent.types import Episode

from .retrieval import LexicalScorer, Scorer, top_k
from .reverse import is_success, record_from_episode, record_from_macro
from .store import KnowledgeStore
from .types import Instruction, InstructionMapping, TaskRecord

log = logging.getLogger(__name__)


class TaskRepository:
    def __init__(self, store: KnowledgeStore, scorer: Scorer | None = None) -> None:
        self.store = store
        self.scorer = scorer or LexicalScorer()

    def add(self, record: TaskRecord) -> TaskRecord:
        self.store.save_task(record)
        return record

    def add_episode(self, episode: Episode, *, goal: str | None = None) -> TaskRecord | None:
        """Archive a successful episode (failed ones teach nothing here); returns the record."""
        if not is_success(episode):
            log.info("episode %s did not succeed: not added to the task repository", episode.id)
            return None
        record = record_from_episode(episode, goal=goal)
        if not record.steps:
            return None
        return self.add(record)

    def add_demonstration(self, demo: Episode | Macro, goal: str) -> TaskRecord:
        """Store what the user showed (an episode they drove, or a recorded macro) for ``goal``."""
        if isinstance(demo, Macro):
            record = record_from_macro(demo, goal=goal)
        else:
            record = record_from_episode(demo, goal=goal, source="demonstration")
        if not record.steps:
            raise ValueError("the demonstration has no steps to learn from")
        return self.add(record)

    def all(self, source: str | None = None) -> list[TaskRecord]:
        return [r for r in self.store.tasks() if source is None or r.source == source]

    def find(self, goal: str, k: int = 3, *, source: str | None = None,
             app: str | None = None, min_score: float | None = None) -> list[tuple[TaskRecord, float]]:
        """The ``k`` most similar solved tasks (scores in [0, 1], above the scorer's threshold)."""
        records = [r for r in self.all(source) if app is None or r.app in (None, app)]
        hits = top_k(self.scorer, goal, [r.goal for r in records], k, min_score)
        return [(records[i], s) for i, s in hits]

    def best(self, goal: str, **kw: object) -> TaskRecord | None:
        hits = self.find(goal, 1, **kw)  # type: ignore[arg-type]
        return hits[0][0] if hits else None

    def example_lines(self, goal: str, k: int = 2, **kw: object) -> tuple[str, ...]:
        """One line per similar solved task ("Task: ... Solution: a -> b"), for
        ``RunSettings.examples`` (planners that take demonstrations as examples)."""
        return tuple(f"Task: {r.goal} Solution: {r.solution_text()}"
                     for r, _ in self.find(goal, k, **kw))  # type: ignore[arg-type]

    def examples_for(self, goal: str, k: int = 2, **kw: object) -> str:
        """Task–solution pairs for a planner prompt, or ``""`` when nothing is similar."""
        return format_examples([r for r, _ in self.find(goal, k, **kw)])  # type: ignore[arg-type]


def format_examples(records: list[TaskRecord]) -> str:
    """Render task–solution pairs the way PBD examples are put into planner prompts."""
    if not records:
        return ""
    lines = ["Solved examples of similar tasks (follow them where they fit this screen):"]
    for n, r in enumerate(records, 1):
        app = f" [app: {r.app}]" if r.app else ""
        lines.append(f"{n}. Task: {r.goal}{app}")
        lines.append(f"   Solution: {r.solution_text()}")
    return "\n".join(lines)


class InstructionSet:
    """Step description → instructions, learnt and user-corrected."""

    #: a compound step is only expanded automatically when this similar
    compound_min = 0.75

    def __init__(self, store: KnowledgeStore, scorer: Scorer | None = None) -> None:
        self.store = store
        self.scorer = scorer or LexicalScorer()

    def add(self, description: str, instructions: tuple[Instruction, ...] | list[Instruction], *,
            compound: bool | None = None, source: str = "user") -> InstructionMapping:
        ins = tuple(instructions)
        if not description.strip() or not ins:
            raise ValueError("a mapping needs a step description and at least one instruction")
        m = InstructionMapping(description.strip(), ins, compound=len(ins) > 1 if compound is None else compound,
                               source=source)
        self.store.save_mapping(m)
        return m

    def add_compound(self, description: str, instructions: list[Instruction]) -> InstructionMapping:
        """The user marked ``description`` as one step that needs several instructions."""
        if len(instructions) < 2:
            raise ValueError("a decomposition needs at least two instructions")
        return self.add(description, instructions, compound=True, source="user")

    def learn_from(self, record: TaskRecord) -> int:
        """Store each step description → instruction of a solved task; returns how many."""
        n = 0
        for desc, ins in zip(record.steps, record.instructions, strict=False):
            existing = {m.description.casefold(): m for m in self.store.mappings()}
            old = existing.get(desc.casefold())
            if old is not None and old.source == "user":
                continue  # a user's correction wins over what was inferred
            self.store.save_mapping(InstructionMapping(desc, (ins,), source=record.source))
            n += 1
        return n

    def all(self) -> list[InstructionMapping]:
        return self.store.mappings()

    def decomposition(self, description: str) -> tuple[Instruction, ...] | None:
        """The stored decomposition of a compound step like this one, if any."""
        maps = [m for m in self.all() if m.compound]
        hits = top_k(self.scorer, description, [m.description for m in maps], 1,
                     max(self.compound_min, self.scorer.threshold))
        if not hits:
            return None
        return maps[hits[0][0]].instructions

    def correct(self, description: str, instructions: list[Instruction]) -> InstructionMapping:
        """A user's correction of a parse: stored and preferred from now on."""
        m = self.add(description, instructions, source="user")
        return replace(m)
