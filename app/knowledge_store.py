"""``SqliteKnowledgeStore``: the agent's ``KnowledgeStore`` protocol on the project's
SQLite database (``app.storage.Store``, tables created by its schema migration 2).

Tables used: ``task_repository`` and ``demonstrations`` (task records, by source),
``instruction_set`` (one row per step description), ``context_library`` (one row per
user and dotted path, JSON values), ``graph_nodes`` / ``graph_edges`` (the interaction
graph).  Documents are stored in a schema-versioned envelope built with
``agent.codec``'s converters.  App maps are kept under the keys
``agent.knowledge.map_language.map_id`` gives them (one per app and UI language); the
user's answer to exploring a real phone's apps on its own is kept per phone.
``decision_memory`` keeps the decision memory (``agent.memory.store.DecisionStore``).
Macros (with versions) are the ``Store``'s own methods, which already satisfy
``agent.knowledge.store.MacroStore``.  No Qt.
"""

from __future__ import annotations

import json
import time
from typing import Any

from agent import codec
from agent.knowledge.context import flatten
from agent.knowledge.types import InstructionMapping, TaskRecord
from agent.memory.types import Remembered
from app.storage import Store, StoreError

_DOC_VERSION = 1


def _wrap(kind: str, obj: object) -> str:
    return json.dumps({"schema": kind, "version": _DOC_VERSION, "data": codec.to_data(obj)}, ensure_ascii=False)


def _unwrap(kind: str, cls: type, text: str) -> Any:
    doc = json.loads(text)
    if not isinstance(doc, dict) or doc.get("schema") != kind:
        raise StoreError(f"a {kind} row holds something else; the database may be damaged")
    if int(doc.get("version", 0)) > _DOC_VERSION:
        raise StoreError(f"a {kind} row was written by a newer Tapwise (version {doc.get('version')}): upgrade")
    return codec.from_data(cls, doc["data"])


def _unflatten(flat: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for path, value in flat.items():
        node = out
        parts = path.split(".")
        for p in parts[:-1]:
            node = node.setdefault(p, {})
        node[parts[-1]] = value
    return out


class SqliteKnowledgeStore:
    """Knowledge tables of a Tapwise database.  Pass an open ``Store``."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.db = store.db

    # ---- task repository and demonstrations ----
    def save_task(self, record: TaskRecord) -> None:
        doc = _wrap("task_record", record)
        if record.source == "demonstration":
            self.store.put_row("demonstrations", {"id": record.id, "goal": record.goal,
                                                  "episode_id": record.episode_id or "",
                                                  "created_at": record.created_at, "doc": doc}, pk="id")
        else:
            self.store.put_row("task_repository", {"id": record.id, "goal": record.goal, "app": record.app or "",
                                                   "created_at": record.created_at, "doc": doc}, pk="id")

    def tasks(self) -> list[TaskRecord]:
        out = [_unwrap("task_record", TaskRecord, r["doc"]) for t in ("task_repository", "demonstrations")
               for r in self.store.rows(t)]
        return sorted(out, key=lambda r: r.created_at)

    def delete_task(self, record_id: str) -> None:
        for t in ("task_repository", "demonstrations"):
            self.store.delete_rows(t, "id = ?", [record_id])

    # ---- instruction set ----
    def save_mapping(self, mapping: InstructionMapping) -> None:
        self.store.put_row("instruction_set", {"key": mapping.description.strip().casefold(),
                                               "description": mapping.description,
                                               "doc": _wrap("instruction_mapping", mapping),
                                               "updated_at": mapping.updated_at}, pk="key")

    def mappings(self) -> list[InstructionMapping]:
        return [_unwrap("instruction_mapping", InstructionMapping, r["doc"]) for r in self.store.rows("instruction_set")]

    # ---- context library ----
    def load_context(self, user: str) -> dict[str, Any]:
        prefix = f"{user}/"
        flat = {r["key"][len(prefix):]: json.loads(r["value"])
                for r in self.store.rows("context_library", "key LIKE ?", [prefix.replace("%", r"\%") + "%"])
                if r["key"].startswith(prefix)}
        return _unflatten(flat)

    def save_context(self, user: str, data: dict[str, Any]) -> None:
        prefix = f"{user}/"
        now = time.time()
        with self.db.conn:
            self.db.table("context_library").delete_where("substr(key, 1, ?) = ?", [len(prefix), prefix])
            rows = [{"key": prefix + path, "value": json.dumps(value, ensure_ascii=False),
                     "source": "user", "updated_at": now} for path, value in flatten(data).items()]
            if rows:
                self.db.table("context_library").upsert_all(rows, pk="key")

    # ---- interaction graph ----
    def load_graph(self) -> dict[str, Any] | None:
        nodes = [json.loads(r["doc"]) for r in self.store.rows("graph_nodes")]
        edges = [{"src": r["src"], "element": r["element"], "dst": r["dst"], "count": r["count"]}
                 for r in self.store.rows("graph_edges")]
        if not nodes:
            return None
        meta = self.store.rows("context_library", "key = ?", ["_graph/merge_threshold"])
        threshold = next((json.loads(r["value"]) for r in meta), None)
        data: dict[str, Any] = {"nodes": nodes, "edges": edges}
        if threshold is not None:
            data["merge_threshold"] = threshold
        return data

    def save_graph(self, data: dict[str, Any]) -> None:
        now = time.time()
        with self.db.conn:
            self.db.table("graph_nodes").delete_where()
            self.db.table("graph_edges").delete_where()
            nodes = [{"id": n["id"], "app": n.get("app", ""), "signature": "|".join(f[0] for f in n.get("features", []))[:500],
                      "doc": json.dumps(n, ensure_ascii=False), "updated_at": now} for n in data.get("nodes", [])]
            if nodes:
                self.db.table("graph_nodes").insert_all(nodes, pk="id")
            edges = [{"src": e["src"], "element": e["element"], "dst": e["dst"], "count": int(e.get("count", 1)),
                      "updated_at": now} for e in data.get("edges", [])]
            if edges:
                self.db.table("graph_edges").insert_all(edges, pk=("src", "element", "dst"))
            if "merge_threshold" in data:
                self.db.table("context_library").upsert({"key": "_graph/merge_threshold",
                                                   "value": json.dumps(data["merge_threshold"]),
                                                   "source": "system", "updated_at": now}, pk="key")

    # ---- app maps (one document per app; ``agent.knowledge.app_map`` owns its shape) ----
    _MAP_PREFIX = "_appmap/"

    def save_app_map(self, package: str, data: dict[str, Any]) -> None:
        """Store (replace) the map of ``package``; ``data`` is ``AppMap.to_data()``."""
        if not package:
            raise StoreError("an app map needs the app's package name")
        self.store.put_row("context_library", {"key": self._MAP_PREFIX + package,
                                               "value": json.dumps(data, ensure_ascii=False),
                                               "source": "explore", "updated_at": time.time()}, pk="key")

    def load_app_map(self, package: str) -> dict[str, Any] | None:
        for r in self.store.rows("context_library", "key = ?", [self._MAP_PREFIX + package]):
            try:
                return dict(json.loads(r["value"]))
            except (ValueError, TypeError) as exc:
                raise StoreError(f"the stored map of {package} is damaged ({exc}): explore the app again") from None
        return None

    def app_map_packages(self) -> list[str]:
        prefix = self._MAP_PREFIX
        return sorted(r["key"][len(prefix):] for r in self.store.rows("context_library", "substr(key, 1, ?) = ?",
                                                                        [len(prefix), prefix]))

    # ---- whether the user let Tapwise explore a real phone's apps on its own, per phone ----
    _CONSENT_PREFIX = "_explore_consent/"

    def explore_consent(self, serial: str) -> bool | None:
        """The user's answer for this phone (None: never asked)."""
        for r in self.store.rows("context_library", "key = ?", [self._CONSENT_PREFIX + serial]):
            return bool(json.loads(r["value"]))
        return None

    def set_explore_consent(self, serial: str, allowed: bool) -> None:
        self.store.put_row("context_library", {"key": self._CONSENT_PREFIX + serial, "value": json.dumps(allowed),
                                               "source": "user", "updated_at": time.time()}, pk="key")

    def delete_app_map(self, package: str) -> None:
        self.store.delete_rows("context_library", "key = ?", [self._MAP_PREFIX + package])

    # ---- decision memory (``agent.memory``: one document per remembered decision) ----
    #: Created on first use with ``if_not_exists`` (no schema migration needed: a database
    #: without the table simply has no memory yet, and an older Tapwise ignores the table).
    _DECISIONS = "decision_memory"

    def _decisions_table(self) -> None:
        self.store.ensure_table(self._DECISIONS, {"id": str, "app": str, "goal": str, "screen": str,
                                                  "at": float, "doc": str}, pk="id")

    def save_decision(self, entry: Remembered) -> None:
        self._decisions_table()
        self.store.put_row(self._DECISIONS, {"id": entry.id, "app": entry.app, "goal": entry.goal,
                                             "screen": entry.screen, "at": entry.at,
                                             "doc": _wrap("remembered", entry)}, pk="id")

    def decisions(self, app: str | None = None) -> list[Remembered]:
        if not self.db.table(self._DECISIONS).exists():  # reading needs no table, and no write lock
            return []
        rows = self.store.rows(self._DECISIONS, None if app is None else "app = ?", None if app is None else [app])
        return sorted((_unwrap("remembered", Remembered, r["doc"]) for r in rows), key=lambda e: e.at)

    def delete_decision(self, entry_id: str) -> None:
        self.store.delete_rows(self._DECISIONS, "id = ?", [entry_id])
