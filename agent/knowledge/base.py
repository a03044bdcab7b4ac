"""``Knowledge``: the four kinds of accumulated knowledge behind one object, and what
happens after a task ends (Prompt2Task's purple arrows): a successful episode goes to
the task repository, its step mappings to the instruction set, its page transitions to
the interaction graph and to its app's map (``app_map``, when the store keeps maps),
its app to the context library; a demonstration becomes a task–solution example for
later goals.  Persists through a ``KnowledgeStore``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from agent.macros.types import Macro
from agent.types import Episode

from .app_map import AppMap
from .context import ContextLibrary
from .graph import InteractionGraph
from .guide import AppMaps
from .map_build import learn_step
from .repository import InstructionSet, TaskRepository
from .retrieval import Scorer, make_scorer
from .reverse import _element_for, is_success
from .store import AppMapStore, KnowledgeStore
from .types import TaskRecord

log = logging.getLogger(__name__)


class Knowledge:
    def __init__(self, store: KnowledgeStore, *, user: str = "default", scorer: Scorer | str = "lexical") -> None:
        self.store = store
        self.scorer = make_scorer(scorer) if isinstance(scorer, str) else scorer
        self.tasks = TaskRepository(store, self.scorer)
        self.instructions = InstructionSet(store, self.scorer)
        self.context = ContextLibrary(store, user)
        self.graph = InteractionGraph.from_data(store.load_graph())

    def learn_transitions(self, episode: Episode, app: str = "") -> int:
        """Add the page transitions an episode went through to the interaction graph."""
        n = 0
        steps = episode.steps
        maps: dict[str, AppMap] = {}
        for cur, nxt in zip(steps, steps[1:], strict=False):
            if cur.parse is None or nxt.parse is None or cur.executed is None:
                continue
            el = _element_for(cur.executed, cur.parse)
            self.graph.add_transition(cur.parse, el, nxt.parse, cur.foreground_package or app,
                                      app_after=nxt.foreground_package or app)
            n += 1
            if el is not None and cur.foreground_package and isinstance(self.store, AppMapStore):
                pkg = cur.foreground_package
                if pkg not in maps:
                    maps[pkg] = AppMaps(self.store).load(pkg) or AppMap(pkg)
                learn_step(maps[pkg], cur.parse, el, nxt.parse, nxt.foreground_package or pkg,
                           "demonstration" if episode.planner == "demonstration" else "run")
        if n:
            self.store.save_graph(self.graph.to_data())
        for m in maps.values():
            AppMaps(self.store).save(m)  # type: ignore[arg-type]
        return n

    def learn_from_episode(self, episode: Episode, *, goal: str | None = None,
                           llm: Callable[[str], str] | None = None) -> TaskRecord | None:
        """After a task: archive it if it succeeded and update every kind of knowledge."""
        self.learn_transitions(episode)
        if not is_success(episode):
            return None
        record = self.tasks.add_episode(episode, goal=goal)
        if record is not None:
            self.instructions.learn_from(record)
            self.context.note_task(record, llm)
        return record

    def learn_from_demonstration(self, demo: Episode | Macro, goal: str) -> TaskRecord:
        """The user showed how: keep it as a task–solution example for similar goals."""
        record = self.tasks.add_demonstration(demo, goal)
        self.instructions.learn_from(record)
        if isinstance(demo, Episode):
            self.learn_transitions(demo)
        return record

    def planner_examples(self, goal: str, k: int = 2, app: str | None = None) -> str:
        """Task–solution pairs for the planner prompt (``""`` when nothing is similar)."""
        return self.tasks.examples_for(goal, k, app=app)
