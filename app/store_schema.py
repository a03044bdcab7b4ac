"""The tables of the project's SQLite store and how an older database is brought forward:
``MIGRATIONS[i]`` takes a database from schema version ``i`` to ``i + 1``
(``app.storage.Store`` runs them in one transaction on open and records the version).
Table definitions only: no connection handling, no reads, no Qt.
"""

from __future__ import annotations

from collections.abc import Callable

import sqlite_utils

SCHEMA_VERSION = 3


def _migrate_to_1(db: sqlite_utils.Database) -> None:
    db.table("episodes").create(
        {
            "id": str,
            "goal": str,
            "planner": str,
            "model": str,
            "device": str,
            "autonomy": str,
            "status": str,
            "started_at": float,
            "finished_at": float,
            "note": str,
            "doc": str,
        },
        pk="id",
        if_not_exists=True,
    )
    db.table("steps").create(
        {
            "episode_id": str,
            "idx": int,
            "outcome": str,
            "action_type": str,
            "decision": str,
            "screenshot_path": str,
            "screenshot_sha256": str,
            "started_at": float,
            "finished_at": float,
            "doc": str,
        },
        pk=("episode_id", "idx"),
        foreign_keys=[("episode_id", "episodes", "id")],
        if_not_exists=True,
    )
    db.table("macros").create(
        {"id": str, "version": int, "name": str, "app": str, "created_at": float, "doc": str},
        pk=("id", "version"),
        if_not_exists=True,
    )


def _migrate_to_2(db: sqlite_utils.Database) -> None:
    """Tables for accumulated knowledge (task repository, instruction set, context
    library, interaction graph, demonstrations)."""
    db.table("task_repository").create(
        {"id": str, "goal": str, "app": str, "created_at": float, "doc": str},
        pk="id",
        if_not_exists=True,
    )
    db.table("instruction_set").create(
        {"key": str, "description": str, "doc": str, "updated_at": float},
        pk="key",
        if_not_exists=True,
    )
    db.table("context_library").create(
        {"key": str, "value": str, "source": str, "updated_at": float},
        pk="key",
        if_not_exists=True,
    )
    db.table("graph_nodes").create(
        {"id": str, "app": str, "signature": str, "doc": str, "updated_at": float},
        pk="id",
        if_not_exists=True,
    )
    db.table("graph_edges").create(
        {"src": str, "element": str, "dst": str, "count": int, "updated_at": float},
        pk=("src", "element", "dst"),
        if_not_exists=True,
    )
    db.table("demonstrations").create(
        {"id": str, "goal": str, "episode_id": str, "created_at": float, "doc": str},
        pk="id",
        if_not_exists=True,
    )


def _migrate_to_3(db: sqlite_utils.Database) -> None:
    """Which process runs an episode (host, pid and the pid's start token), so that runs
    whose process is gone can be marked interrupted."""
    episodes = db.table("episodes")
    for name, kind in (("owner_host", str), ("owner_pid", int), ("owner_token", str)):
        if name not in episodes.columns_dict:
            episodes.add_column(name, kind)


#: ``MIGRATIONS[i]`` brings a database from version ``i`` to ``i + 1``.
MIGRATIONS: list[Callable[[sqlite_utils.Database], None]] = [_migrate_to_1, _migrate_to_2, _migrate_to_3]
assert len(MIGRATIONS) == SCHEMA_VERSION
