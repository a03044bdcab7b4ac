"""SQLite store for online benchmark results, so an interrupted run can continue.

One database holds many named runs.  A run records its settings once; each finished
benchmark cell (planner × task × seed × noise × the goal's language and wording) is committed the moment it completes
(WAL journal), so killing the process loses at most the cells in flight.  Problems that
are not cells — a task file that failed to load — are kept beside the run for the
report.  Only this module touches the results database.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

from evaluation.metrics import EpisodeResult

SCHEMA_VERSION = 2  # 2: the goal's wording and language are part of a cell (1 had neither: wording 0, English)

_RESULTS_DDL = """CREATE TABLE IF NOT EXISTS results (
    run_id TEXT NOT NULL, planner TEXT NOT NULL, task_id TEXT NOT NULL, seed INTEGER NOT NULL,
    noise TEXT NOT NULL, status TEXT NOT NULL, doc TEXT NOT NULL, finished_at REAL NOT NULL,
    wording INTEGER NOT NULL DEFAULT 0, language TEXT NOT NULL DEFAULT 'en',
    PRIMARY KEY (run_id, planner, task_id, seed, noise, wording, language)
);"""

_DDL = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY, settings TEXT NOT NULL, created_at REAL NOT NULL, updated_at REAL NOT NULL
);
{_RESULTS_DDL}
CREATE TABLE IF NOT EXISTS problems (
    run_id TEXT NOT NULL, source TEXT NOT NULL, message TEXT NOT NULL, at REAL NOT NULL,
    PRIMARY KEY (run_id, source)
);
"""


class ResultsError(RuntimeError):
    """The results database cannot be used as asked; the message says what to do."""


class SettingsMismatch(ResultsError):
    pass


#: Settings that change what a cell measures: a run cannot continue with different values.
FIXED_SETTINGS = ("model", "base_url", "max_steps", "sample_temperature", "samples", "backend", "parse_mode", "estimator")

_FIELDS = {f.name for f in fields(EpisodeResult)}


def result_to_json(r: EpisodeResult) -> str:
    d = asdict(r)
    d["step_records"] = list(r.step_records)
    return json.dumps(d, ensure_ascii=False)


def result_from_json(text: str) -> EpisodeResult:
    d = json.loads(text)
    d = {k: v for k, v in d.items() if k in _FIELDS}
    d["step_records"] = tuple(d.get("step_records") or ())
    return EpisodeResult(**d)


class ResultsDB:
    """A results database file (created on first use)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._con = sqlite3.connect(self.path, timeout=30)
            self._con.execute("PRAGMA journal_mode=WAL")
            self._con.executescript(_DDL)
            row = self._con.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
            if row is None:
                self._con.execute("INSERT INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
            elif int(row[0]) > SCHEMA_VERSION:
                raise ResultsError(
                    f"{self.path} was written by a newer Tapwise (results schema {row[0]}); upgrade to read it"
                )
            elif int(row[0]) < 2:
                self._add_wording_columns()
            self._con.commit()
        except sqlite3.DatabaseError as exc:
            raise ResultsError(f"{self.path} is not a usable results database: {exc}") from exc

    def _add_wording_columns(self) -> None:
        """Schema 1 -> 2: every earlier cell asked wording 0 in English (one transaction)."""
        cols = {r[1] for r in self._con.execute("PRAGMA table_info(results)")}
        if "wording" not in cols:
            self._con.executescript(
                "BEGIN; ALTER TABLE results RENAME TO results_v1;"
                + _RESULTS_DDL
                + "INSERT INTO results (run_id, planner, task_id, seed, noise, status, doc, finished_at) "
                "SELECT run_id, planner, task_id, seed, noise, status, doc, finished_at FROM results_v1; "
                "DROP TABLE results_v1; COMMIT;")
        self._con.execute("UPDATE meta SET value=? WHERE key='schema'", (str(SCHEMA_VERSION),))

    def close(self) -> None:
        self._con.close()

    def __enter__(self) -> ResultsDB:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- runs ----------------------------------------------------------------------
    def open_run(self, run_id: str, settings: dict[str, Any]) -> bool:
        """Start run ``run_id`` or continue it; returns True when it already existed.

        Continuing with different ``FIXED_SETTINGS`` is refused, since the old and new
        cells would not be comparable."""
        row = self._con.execute("SELECT settings FROM runs WHERE run_id=?", (run_id,)).fetchone()
        now = time.time()
        if row is None:
            self._con.execute(
                "INSERT INTO runs VALUES (?, ?, ?, ?)", (run_id, json.dumps(settings, sort_keys=True), now, now)
            )
            self._con.commit()
            return False
        old = json.loads(row[0])
        diffs = [
            f"{k}: {old.get(k)!r} then, {settings.get(k)!r} now"
            for k in FIXED_SETTINGS
            if old.get(k) != settings.get(k)
        ]
        if diffs:
            raise SettingsMismatch(
                f"run {run_id!r} was started with different settings ({'; '.join(diffs)}); "
                "continue it with the same settings or pick another --run name"
            )
        merged = {**old, **settings}
        self._con.execute(
            "UPDATE runs SET settings=?, updated_at=? WHERE run_id=?", (json.dumps(merged, sort_keys=True), now, run_id)
        )
        self._con.commit()
        return True

    def run_settings(self, run_id: str) -> dict[str, Any]:
        row = self._con.execute("SELECT settings FROM runs WHERE run_id=?", (run_id,)).fetchone()
        if row is None:
            raise ResultsError(f"no run named {run_id!r} in {self.path} (runs: {', '.join(self.runs()) or 'none'})")
        return dict(json.loads(row[0]))

    def runs(self) -> list[str]:
        return [r[0] for r in self._con.execute("SELECT run_id FROM runs ORDER BY created_at")]

    # ---- cells ---------------------------------------------------------------------
    def save(self, run_id: str, result: EpisodeResult) -> None:
        status = "error" if result.error else "done"
        self._con.execute(
            "INSERT OR REPLACE INTO results (run_id, planner, task_id, seed, noise, status, doc, finished_at, wording, "
            "language) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                run_id,
                result.planner,
                result.task_id,
                int(result.seed),
                result.noise,
                status,
                result_to_json(result),
                time.time(),
                int(result.wording),
                result.language,
            ),
        )
        self._con.commit()

    def done_keys(self, run_id: str, *, include_errors: bool = True) -> set[tuple[str, str, int, str]]:
        """(planner, task, seed, noise) of finished cells in any wording and language
        (errored ones too unless asked not): for benchmarks without those axes."""
        return {k[:4] for k in self.done_cells(run_id, include_errors=include_errors)}  # type: ignore[misc]

    def done_cells(self, run_id: str, *, include_errors: bool = True) -> set[tuple[str, str, int, str, int, str]]:
        """(planner, task, seed, noise, wording, language) of finished cells (errored ones too unless asked not)."""
        q = "SELECT planner, task_id, seed, noise, wording, language, status FROM results WHERE run_id=?"
        return {
            (p, t, int(s), n, int(w), lang)
            for p, t, s, n, w, lang, status in self._con.execute(q, (run_id,))
            if include_errors or status == "done"
        }

    def results(self, run_id: str) -> list[EpisodeResult]:
        q = "SELECT doc FROM results WHERE run_id=? ORDER BY planner, task_id, seed, noise, language, wording"
        return [result_from_json(r[0]) for r in self._con.execute(q, (run_id,))]

    # ---- problems ------------------------------------------------------------------
    def add_problems(self, run_id: str, problems: Iterable[tuple[str, str]]) -> None:
        now = time.time()
        self._con.executemany(
            "INSERT OR REPLACE INTO problems VALUES (?, ?, ?, ?)", [(run_id, s, m, now) for s, m in problems]
        )
        self._con.commit()

    def problems(self, run_id: str) -> list[tuple[str, str]]:
        q = "SELECT source, message FROM problems WHERE run_id=? ORDER BY source"
        return [(s, m) for s, m in self._con.execute(q, (run_id,))]
