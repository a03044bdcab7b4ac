"""What the macro and knowledge features need from storage, as Protocols, plus an
in-memory implementation for tests and for running without a database.

The app's SQLite store (``app/storage.py`` + ``app/knowledge_store.py``) implements
these; ``agent`` never imports ``app``.  Documents cross this boundary as core objects;
the implementation serialises them with ``agent.codec``.
"""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any, Protocol, runtime_checkable

from agent.macros.types import Macro

from .types import InstructionMapping, TaskRecord


@runtime_checkable
class MacroStore(Protocol):
    """Macros with versions (``app.storage.Store`` has these methods)."""

    def save_macro(self, macro: Macro) -> Macro:
        """Store as a new version; returns the macro with the version it got."""
        ...

    def load_macro(self, macro_id: str, version: int | None = None) -> Macro:
        """The given version or the latest; ``KeyError`` when absent."""
        ...

    def macro_versions(self, macro_id: str) -> list[int]: ...

    def list_macros(self) -> list[dict[str, Any]]: ...

    def find_macro(self, name_or_id: str) -> Macro: ...


@runtime_checkable
class KnowledgeStore(Protocol):
    """Task repository, demonstrations, instruction set, context library, page graph."""

    def save_task(self, record: TaskRecord) -> None: ...

    def tasks(self) -> list[TaskRecord]: ...

    def delete_task(self, record_id: str) -> None: ...

    def save_mapping(self, mapping: InstructionMapping) -> None:
        """Upsert by ``mapping.description`` (case-insensitive)."""
        ...

    def mappings(self) -> list[InstructionMapping]: ...

    def load_context(self, user: str) -> dict[str, Any]: ...

    def save_context(self, user: str, data: dict[str, Any]) -> None: ...

    def load_graph(self) -> dict[str, Any] | None: ...

    def save_graph(self, data: dict[str, Any]) -> None: ...


@runtime_checkable
class AppMapStore(Protocol):
    """App maps (``agent.knowledge.app_map``), one JSON document per app package."""

    def save_app_map(self, package: str, data: dict[str, Any]) -> None: ...

    def load_app_map(self, package: str) -> dict[str, Any] | None: ...

    def app_map_packages(self) -> list[str]: ...

    def delete_app_map(self, package: str) -> None: ...


class MemoryStore:
    """The three protocols in memory (tests, and sessions without a database)."""

    def __init__(self) -> None:
        self._macros: dict[str, dict[int, Macro]] = {}
        self._tasks: dict[str, TaskRecord] = {}
        self._mappings: dict[str, InstructionMapping] = {}
        self._context: dict[str, dict[str, Any]] = {}
        self._graph: dict[str, Any] | None = None
        self._maps: dict[str, dict[str, Any]] = {}

    # macros
    def save_macro(self, macro: Macro) -> Macro:
        versions = self._macros.setdefault(macro.id, {})
        if versions and macro.version <= max(versions):
            macro = replace(macro, version=max(versions) + 1)
        versions[macro.version] = macro
        return macro

    def load_macro(self, macro_id: str, version: int | None = None) -> Macro:
        versions = self._macros.get(macro_id)
        if not versions:
            raise KeyError(f"no macro {macro_id!r}")
        v = max(versions) if version is None else version
        if v not in versions:
            raise KeyError(f"no macro {macro_id!r} version {version}")
        return versions[v]

    def macro_versions(self, macro_id: str) -> list[int]:
        return sorted(self._macros.get(macro_id, {}))

    def list_macros(self) -> list[dict[str, Any]]:
        out = []
        for mid, versions in self._macros.items():
            latest = versions[max(versions)]
            out.append({"id": mid, "name": latest.name, "app": latest.app or "", "version": latest.version,
                        "updated_at": latest.created_at})
        return sorted(out, key=lambda r: r["name"])

    def find_macro(self, name_or_id: str) -> Macro:
        if name_or_id in self._macros:
            return self.load_macro(name_or_id)
        for r in self.list_macros():
            if r["name"] == name_or_id:
                return self.load_macro(r["id"])
        raise KeyError(f"no macro named or with id {name_or_id!r}")

    # knowledge
    def save_task(self, record: TaskRecord) -> None:
        self._tasks[record.id] = record

    def tasks(self) -> list[TaskRecord]:
        return sorted(self._tasks.values(), key=lambda r: r.created_at)

    def delete_task(self, record_id: str) -> None:
        self._tasks.pop(record_id, None)

    def save_mapping(self, mapping: InstructionMapping) -> None:
        self._mappings[mapping.description.strip().casefold()] = mapping

    def mappings(self) -> list[InstructionMapping]:
        return list(self._mappings.values())

    def load_context(self, user: str) -> dict[str, Any]:
        return copy.deepcopy(self._context.get(user, {}))

    def save_context(self, user: str, data: dict[str, Any]) -> None:
        self._context[user] = copy.deepcopy(data)

    def load_graph(self) -> dict[str, Any] | None:
        return copy.deepcopy(self._graph)

    def save_graph(self, data: dict[str, Any]) -> None:
        self._graph = copy.deepcopy(data)

    # app maps
    def save_app_map(self, package: str, data: dict[str, Any]) -> None:
        self._maps[package] = copy.deepcopy(data)

    def load_app_map(self, package: str) -> dict[str, Any] | None:
        return copy.deepcopy(self._maps.get(package))

    def app_map_packages(self) -> list[str]:
        return sorted(self._maps)

    def delete_app_map(self, package: str) -> None:
        self._maps.pop(package, None)
