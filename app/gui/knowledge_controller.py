"""The knowledge browser's wiring: reads the task repository, the context library and
the interaction graph from the database on a worker thread, and applies the user's
edits (context records, forgetting a task) there too.  Never imports the window."""

from __future__ import annotations

import logging
from typing import Any

from app.gui.session import Workbench
from widgets.notifications import Level

log = logging.getLogger(__name__)

USER = "default"


class KnowledgeController:
    def __init__(self, ui: Workbench) -> None:
        self.w = ui
        panel = ui.knowledge_panel
        panel.contextEdited.connect(self.set_context)
        panel.contextDeleted.connect(self.delete_context)
        panel.taskDeleteRequested.connect(self.delete_task)

    def _kstore(self) -> Any:
        from app.knowledge_store import SqliteKnowledgeStore

        return SqliteKnowledgeStore(self.w.session.store())

    def refresh(self) -> None:
        def load() -> tuple[list, dict, Any]:
            from agent.knowledge.graph import InteractionGraph

            ks = self._kstore()
            return ks.tasks(), ks.load_context(USER), InteractionGraph.from_data(ks.load_graph()).picture()

        self.w.session.misc.submit(load, on_done=lambda r: self.w.knowledge_panel.set_data(*r),
                           on_error=lambda f: self.w.notify_failure("Could not read the knowledge base", f))

    def _apply(self, what: str, fn: Any) -> None:
        self.w.session.misc.submit(fn, on_done=lambda _r: self.refresh(),
                           on_error=lambda f: self.w.notify_failure(what, f))

    def set_context(self, path: str, value: Any) -> None:
        def apply() -> None:
            from agent.knowledge.context import ContextLibrary

            ContextLibrary(self._kstore(), USER).set(path, value)

        self._apply(f"Could not save “{path}”", apply)

    def delete_context(self, path: str) -> None:
        def apply() -> None:
            from agent.knowledge.context import ContextLibrary

            ContextLibrary(self._kstore(), USER).delete(path)

        self._apply(f"Could not delete “{path}”", apply)

    def delete_task(self, record_id: str) -> None:
        self._apply("Could not forget the task", lambda: self._kstore().delete_task(record_id))
        self.w.notify(Level.INFO, "The task was removed from the repository.")
