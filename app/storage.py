"""The project's SQLite store: episodes, steps, macros (with versions) and the tables
the knowledge features use.  Screenshots live as PNG files beside the database and are
referenced by relative path and SHA-256.

Guarantees: WAL journal; every step is committed the moment ``append_step`` returns, so
a crash or kill never loses recorded steps; when another program holds the database,
writes wait (busy timeout) and retry, and then raise ``StoreBusy`` (an
``agent.sink.StepNotStored``) so the run stops instead of reporting an unstored step;
the schema carries a version and is migrated forward on open; a damaged database or one
written by a newer Tapwise is refused with a clear message and left untouched, and a
database Tapwise may not write is reported as a permissions problem.  Each running
episode records the process that runs it: on open, runs whose process is gone (killed)
are marked ``interrupted`` with the time of their last step, and ``close`` does the same
for runs this store began and never finished (Ctrl-C, input closed).  LLM prompts and
replies are stored up to ``MAX_CALL_CHARS`` each (the cut is marked) and credentials in
URLs are never stored.  Objects are (de)serialised only through ``agent.codec``.  This
module does no Qt and no networking.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import os
import socket
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

import sqlite_utils
from PIL import Image

from agent import codec
from agent.macros.types import Macro
from agent.redact import redact_url
from agent.sink import StepNotStored
from agent.types import Episode, EpisodeStatus, ImageRef, Step
from app.store_schema import MIGRATIONS, SCHEMA_VERSION
from vision.secret_mask import mask_password_fields
from vision.types import Screen

log = logging.getLogger(__name__)

#: The longest prompt or reply stored per LLM call (characters); longer ones are cut and marked.
MAX_CALL_CHARS = 100_000
#: How long one write waits for another program's lock (SQLite busy timeout), in seconds.
BUSY_TIMEOUT_S = 10.0
#: How many more times a write is tried after a busy timeout ran out.
WRITE_RETRIES = 2

T = TypeVar("T")


class StoreError(RuntimeError):
    """The database cannot be used; the message says why and what to do."""


class StoreCorrupt(StoreError):
    pass


class StoreTooNew(StoreError):
    pass


class StoreNotWritable(StoreError):
    """The database or its folder may not be written by this user (permissions, read-only disk)."""


class StoreBusy(StoreError, StepNotStored):
    """Another program kept the database locked past the busy timeout and the retries."""


def _capped(text: str, limit: int = MAX_CALL_CHARS) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n… [truncated by Tapwise: {limit} of {len(text)} characters stored]"


def _storable(doc: Any) -> Any:
    """An encoded document with every over-long string (LLM prompts and replies, the
    rationale quoting a reply) cut and marked, and credentials in URLs removed."""
    if isinstance(doc, str):
        return _capped(redact_url(doc))
    if isinstance(doc, dict):
        return {k: _storable(v) for k, v in doc.items()}
    if isinstance(doc, list):
        return [_storable(v) for v in doc]
    return doc


def _busy(exc: sqlite3.OperationalError) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def _not_writable(exc: sqlite3.Error) -> bool:
    text = str(exc).lower()
    return "readonly" in text or "read-only" in text or "unable to open" in text or "permission" in text


def _process_token(pid: int) -> str:
    """What tells process ``pid`` apart from a later one with the same number: its start
    time on Linux (``/proc``), else empty."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    return stat.rsplit(")", 1)[-1].split()[19] if ")" in stat else ""


def _process_alive(pid: int, token: str) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's live process
        return True
    except OSError:
        return False
    return not token or not _process_token(pid) or _process_token(pid) == token


class Store:
    """A Tapwise database at ``path`` (created on first use) with screenshots beside it.

    Thread-safe for the simple pattern the app uses (one writer at a time per process):
    every public method takes an internal lock.
    """

    def __init__(self, path: str | Path, *, busy_timeout_s: float = BUSY_TIMEOUT_S,
                 write_retries: int = WRITE_RETRIES) -> None:
        self.path = Path(path)
        self.media_dir = self.path.parent / (self.path.stem + "-media")
        self.busy_timeout_s, self.write_retries = busy_timeout_s, write_retries
        self._lock = threading.RLock()
        self._open_runs: set[str] = set()  # episodes this store began and has not finished
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreNotWritable(
                f"cannot create the folder {self.path.parent} for the database ({exc.strerror}). "
                "Choose a folder you may write (the 'database' setting, or --db)."
            ) from exc
        self._check_header()
        self._check_writable()
        try:
            conn = sqlite3.connect(str(self.path), check_same_thread=False, timeout=busy_timeout_s)
            self.db = sqlite_utils.Database(conn)
            self._refuse_newer()  # before anything (even the journal mode) changes the file
            self._write(lambda: self.db.execute("PRAGMA journal_mode=WAL"), "open the database")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute("PRAGMA foreign_keys=ON")
            self._write(self._migrate, "prepare the database")
        except StoreError:
            raise
        except sqlite3.DatabaseError as exc:
            if _not_writable(exc):
                raise StoreNotWritable(
                    f"{self.path} cannot be written ({exc}): check the permissions of the file and its "
                    "folder, or choose another database (the 'database' setting, or --db). "
                    "Nothing was changed."
                ) from exc
            raise StoreCorrupt(
                f"{self.path} could not be opened as a Tapwise database ({exc}). "
                "It was left untouched: move it aside (or restore a backup) and Tapwise "
                "will start a new one."
            ) from exc
        self._mark_interrupted()

    # ---- opening and migrating ------------------------------------------------------
    def _check_writable(self) -> None:
        """Refuse, as a permissions problem, a database (or its folder, which must hold the
        WAL journal and the screenshots) this user may not write."""
        where = self.path if self.path.exists() else self.path.parent
        folder_ok = os.access(self.path.parent, os.W_OK | os.X_OK)
        file_ok = not self.path.exists() or os.access(self.path, os.R_OK | os.W_OK)
        if not (folder_ok and file_ok):
            what = "the folder" if not folder_ok else "the file"
            raise StoreNotWritable(
                f"Tapwise may not write {what} {where if not folder_ok else self.path} (permissions or a "
                "read-only disk). The database is not damaged: give your user write access, or choose "
                "another database (the 'database' setting, or --db)."
            )

    def _write(self, fn: Callable[[], T], what: str, *, retry: bool = True) -> T:
        """Run one write, waiting for other programs' locks: SQLite's busy timeout, then
        ``write_retries`` more tries (with ``retry``); then ``StoreBusy``."""
        tries = self.write_retries + 1 if retry else 1
        for attempt in range(1, tries + 1):
            try:
                return fn()
            except sqlite3.OperationalError as exc:
                if not _busy(exc):
                    raise
                if self.db.conn.in_transaction:
                    self.db.conn.rollback()
                log.warning("%s: the database is locked by another program (try %d of %d)", what, attempt, tries)
                if attempt == tries:
                    waited = tries * self.busy_timeout_s
                    raise StoreBusy(
                        f"could not {what}: {self.path} stayed locked by another program for about "
                        f"{waited:.0f} s ({exc}). Close the other program using it (another Tapwise, a "
                        "database browser) and try again."
                    ) from exc
                time.sleep(min(1.0, self.busy_timeout_s / 10))
        raise AssertionError("unreachable")  # pragma: no cover

    def _mark_interrupted(self) -> None:
        """Runs left ``running`` by a process that is gone become ``interrupted``."""
        host = socket.gethostname()
        try:
            rows = self.db.execute(
                "SELECT id, owner_pid, owner_token FROM episodes WHERE status = ? "
                "AND (owner_host = ? OR owner_host IS NULL)",
                [EpisodeStatus.RUNNING.value, host],
            ).fetchall()
            gone = [(eid, pid) for eid, pid, token in rows if not _process_alive(int(pid or 0), token or "")]
            for eid, pid in gone:
                why = (f"the process running it (pid {pid}) ended before the run finished" if pid else
                       "it was left running by an older Tapwise")
                self._set_interrupted(eid, why, retry=False)
        except (sqlite3.Error, StoreError) as exc:  # never keeps the store from opening
            log.warning("could not check for interrupted runs in %s: %s", self.path, exc)

    def _set_interrupted(self, episode_id: str, why: str, *, retry: bool = True) -> None:
        row = self.db.execute(
            "SELECT MAX(finished_at), COUNT(*) FROM steps WHERE episode_id = ?", [episode_id]).fetchone()
        last, count = (row[0], row[1]) if row else (None, 0)
        if last is None:
            started = self.db.execute("SELECT started_at FROM episodes WHERE id = ?", [episode_id]).fetchone()
            last = started[0] if started else time.time()
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(last))
        note = f"interrupted: {why}; {count} step(s) stored, the last at {when}"

        def write() -> None:
            with self.db.conn:
                self.db.execute("UPDATE episodes SET status = ?, finished_at = ?, note = ? WHERE id = ? AND status = ?",
                                [EpisodeStatus.INTERRUPTED.value, last, note, episode_id,
                                 EpisodeStatus.RUNNING.value])

        self._write(write, f"mark run {episode_id} as interrupted", retry=retry)
        log.info("run %s marked interrupted: %s", episode_id, note)
    def _check_header(self) -> None:
        if not self.path.exists() or self.path.stat().st_size == 0:
            return
        with open(self.path, "rb") as fh:
            head = fh.read(16)
        if head != b"SQLite format 3\x00":
            raise StoreCorrupt(
                f"{self.path} is not a SQLite database (damaged or a different file). "
                "It was left untouched: move it aside and Tapwise will start a new one."
            )

    def schema_version(self) -> int:
        if "meta" not in self.db.table_names():
            return 0
        row = self.db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        return int(row[0]) if row else 0

    def _refuse_newer(self) -> None:
        current = self.schema_version()
        if current > SCHEMA_VERSION:
            raise StoreTooNew(
                f"{self.path} was written by a newer Tapwise (schema {current}; this "
                f"version reads up to {SCHEMA_VERSION}). Upgrade Tapwise; the database "
                "was not changed."
            )

    def _migrate(self) -> None:
        with self._lock:
            self._refuse_newer()
            current = self.schema_version()
            if current == SCHEMA_VERSION:
                return
            self.db.table("meta").create({"key": str, "value": str}, pk="key", if_not_exists=True)
            with self.db.conn:
                for version in range(current, SCHEMA_VERSION):
                    log.info("migrating %s from schema %d to %d", self.path, version, version + 1)
                    MIGRATIONS[version](self.db)
                    self.db.table("meta").upsert({"key": "schema_version", "value": str(version + 1)}, pk="key")

    def close(self) -> None:
        """Close the database; runs this store began and never finished are marked interrupted."""
        with self._lock:
            for episode_id in sorted(self._open_runs):
                try:
                    self._set_interrupted(episode_id, "the run stopped before it finished (interrupted or "
                                                      "its input ended)")
                except (sqlite3.Error, StoreError) as exc:
                    log.warning("could not mark run %s as interrupted: %s", episode_id, exc)
            self._open_runs.clear()
            self.db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- screenshots ----------------------------------------------------------------
    def save_screenshot(self, screen: Screen, name: str) -> ImageRef:
        """Write ``screen`` as PNG under the media folder, password fields painted over
        (``vision.secret_mask``); identical images are stored once."""
        screen = mask_password_fields(screen)
        buf = io.BytesIO()
        Image.fromarray(screen.image).save(buf, format="PNG", compress_level=1)
        data = buf.getvalue()
        digest = hashlib.sha256(data).hexdigest()
        rel = Path(name).with_suffix(".png")
        target = self.media_dir / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_suffix(".tmp")
        tmp.write_bytes(data)
        tmp.replace(target)
        return ImageRef(path=str(rel), sha256=digest, width=screen.size.width, height=screen.size.height)

    def load_screenshot(self, ref: ImageRef, *, verify: bool = True) -> Screen:
        import numpy as np

        path = self.media_dir / ref.path
        data = path.read_bytes()
        if verify and hashlib.sha256(data).hexdigest() != ref.sha256:
            raise StoreError(f"screenshot {path} does not match its recorded hash (changed on disk)")
        image = np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))
        return Screen(image=image)

    # ---- episodes and steps ----------------------------------------------------------
    def begin_episode(self, episode: Episode) -> None:
        row = {**self._episode_row(episode), "owner_host": socket.gethostname(), "owner_pid": os.getpid(),
               "owner_token": _process_token(os.getpid())}

        def write() -> None:
            with self.db.conn:
                self.db.table("episodes").insert(row, pk="id", replace=True)

        with self._lock:
            self._write(write, f"store the start of run {episode.id}")
            if episode.status is EpisodeStatus.RUNNING:
                self._open_runs.add(episode.id)

    def append_step(self, episode_id: str, step: Step, screen: Screen | None = None) -> Step:
        """Store one finished step (and its screenshot) and commit at once.

        Returns the step as stored (with its ``screenshot`` reference filled in).
        """
        with self._lock:
            if screen is not None and step.screenshot is None:
                step = replace(step, screenshot=self.save_screenshot(screen, f"{episode_id}/{step.index:04d}"))
            if step.finished_at is None:
                step = replace(step, finished_at=time.time())
            doc = _storable(codec.encode(step))
            stored = step

            def write() -> None:
                with self.db.conn:
                    self._insert_step(episode_id, stored, doc)

            self._write(write, f"store step {step.index + 1} of run {episode_id}")
            return step

    def amend_step(self, episode_id: str, step: Step) -> Step:
        """Store ``step`` over the one stored with its index (it gained what flashed after its action)."""
        return self.append_step(episode_id, step)

    def _insert_step(self, episode_id: str, step: Step, doc: dict[str, Any]) -> None:
        self.db.table("steps").insert(
            {
                "episode_id": episode_id,
                "idx": step.index,
                "outcome": step.outcome.value,
                "action_type": step.executed.type.value if step.executed else "",
                "decision": step.decision.kind.value if step.decision else "",
                "screenshot_path": step.screenshot.path if step.screenshot else "",
                "screenshot_sha256": step.screenshot.sha256 if step.screenshot else "",
                "started_at": step.started_at,
                "finished_at": step.finished_at,
                "doc": json.dumps(doc, ensure_ascii=False),
            },
            pk=("episode_id", "idx"),
            replace=True,
        )

    def finish_episode(self, episode_id: str, status: EpisodeStatus | str, note: str = "") -> None:
        status = EpisodeStatus(status)
        note = redact_url(note)

        def write() -> None:
            with self.db.conn:
                self.db.table("episodes").update(
                    episode_id, {"status": status.value, "finished_at": time.time(), "note": note}
                )

        with self._lock:
            self._write(write, f"store the end of run {episode_id}")
            self._open_runs.discard(episode_id)

    def load_episode(self, episode_id: str) -> Episode:
        with self._lock:
            try:
                row = self.db.table("episodes").get(episode_id)
            except sqlite_utils.db.NotFoundError:
                raise KeyError(f"no episode {episode_id!r} in {self.path}") from None
            header = codec.decode(json.loads(row["doc"]), "episode")
            steps = tuple(
                codec.decode(json.loads(r["doc"]), "step")
                for r in self.db.table("steps").rows_where("episode_id = ?", [episode_id], order_by="idx")
            )
        return replace(
            header,
            status=EpisodeStatus(row["status"]),
            finished_at=row["finished_at"],
            note=row["note"] or "",
            steps=steps,
        )

    def list_episodes(self, limit: int = 100) -> list[dict[str, Any]]:
        with self._lock:
            rows = self.db.execute(
                "SELECT e.id, e.goal, e.planner, e.model, e.status, e.started_at, e.finished_at, "
                "(SELECT COUNT(*) FROM steps s WHERE s.episode_id = e.id) AS steps, e.note "
                "FROM episodes e ORDER BY e.started_at DESC LIMIT ?",
                [limit],
            ).fetchall()
        keys = ["id", "goal", "planner", "model", "status", "started_at", "finished_at", "steps", "note"]
        return [dict(zip(keys, r, strict=True)) for r in rows]

    def _episode_row(self, episode: Episode) -> dict[str, Any]:
        header = replace(episode, steps=())
        return {
            "id": episode.id,
            "goal": episode.goal,
            "planner": episode.planner,
            "model": episode.model,
            "device": episode.device,
            "autonomy": episode.autonomy.value,
            "status": episode.status.value,
            "started_at": episode.started_at,
            "finished_at": episode.finished_at,
            "note": episode.note,
            "doc": json.dumps(codec.encode(header), ensure_ascii=False),
        }

    # ---- macros ---------------------------------------------------------------------
    def save_macro(self, macro: Macro) -> Macro:
        """Store ``macro`` as a new version (its version is set to latest + 1 if taken)."""
        with self._lock:
            latest = self.latest_macro_version(macro.id)
            if latest is not None and macro.version <= latest:
                macro = replace(macro, version=latest + 1)
            with self.db.conn:
                self.db.table("macros").insert(
                    {
                        "id": macro.id,
                        "version": macro.version,
                        "name": macro.name,
                        "app": macro.app or "",
                        "created_at": time.time(),
                        "doc": json.dumps(codec.encode(macro), ensure_ascii=False),
                    },
                    pk=("id", "version"),
                )
            return macro

    def latest_macro_version(self, macro_id: str) -> int | None:
        row = self.db.execute("SELECT MAX(version) FROM macros WHERE id = ?", [macro_id]).fetchone()
        return int(row[0]) if row and row[0] is not None else None

    def load_macro(self, macro_id: str, version: int | None = None) -> Macro:
        with self._lock:
            if version is None:
                version = self.latest_macro_version(macro_id)
                if version is None:
                    raise KeyError(f"no macro {macro_id!r}")
            try:
                row = self.db.table("macros").get((macro_id, version))
            except sqlite_utils.db.NotFoundError:
                raise KeyError(f"no macro {macro_id!r} version {version}") from None
            return codec.decode(json.loads(row["doc"]), "macro")  # type: ignore[no-any-return]

    def macro_versions(self, macro_id: str) -> list[int]:
        return [r[0] for r in self.db.execute("SELECT version FROM macros WHERE id = ? ORDER BY version", [macro_id])]

    def list_macros(self) -> list[dict[str, Any]]:
        rows = self.db.execute(
            "SELECT id, name, app, MAX(version), MAX(created_at) FROM macros GROUP BY id ORDER BY name"
        ).fetchall()
        return [{"id": r[0], "name": r[1], "app": r[2], "version": r[3], "updated_at": r[4]} for r in rows]

    def find_macro(self, name_or_id: str) -> Macro:
        row = self.db.execute(
            "SELECT id FROM macros WHERE id = ? OR name = ? ORDER BY created_at DESC LIMIT 1",
            [name_or_id, name_or_id],
        ).fetchone()
        if row is None:
            raise KeyError(f"no macro named or with id {name_or_id!r}")
        return self.load_macro(row[0])

    # ---- generic knowledge rows -------------------------------------------------------
    def put_row(self, table: str, row: dict[str, Any], pk: str | tuple[str, ...]) -> None:
        def write() -> None:
            with self._lock, self.db.conn:
                self.db.table(table).upsert(row, pk=pk)
        self._write(write, f"store a row in {table}")

    def delete_rows(self, table: str, where: str, args: list[Any]) -> None:
        """Delete ``table``'s rows matching ``where`` (nothing when the table is missing),
        waiting out another program's lock like every write."""
        def write() -> None:
            with self._lock, self.db.conn:
                if self.db.table(table).exists():
                    self.db.table(table).delete_where(where, args)
        self._write(write, f"delete rows of {table}")

    def ensure_table(self, table: str, columns: dict[str, type], pk: str) -> None:
        """Create ``table`` if it is missing, waiting out another program's lock like every write."""
        if self.db.table(table).exists():
            return

        def write() -> None:
            with self._lock, self.db.conn:
                self.db.table(table).create(columns, pk=pk, if_not_exists=True)
        self._write(write, f"create the table {table}")

    def rows(self, table: str, where: str | None = None, args: list[Any] | None = None) -> Iterator[dict[str, Any]]:
        with self._lock:
            yield from list(self.db.table(table).rows_where(where, args or []))

    def integrity_check(self) -> str:
        with self._lock:
            return str(self.db.execute("PRAGMA integrity_check").fetchone()[0])
