"""Run benchmark cells on a Ray cluster's phones; every result is written by this driver.

``run_on_ray`` connects to a cluster (or starts a local Ray instance whose phones are
in-process virtual phones), finds the phones the hosts advertise (``evaluation.farm.phones``),
and keeps each phone busy with one cell at a time: a cell is a Ray task that needs that
phone's resource, so it runs on the host that has the phone.  Results come back to the
driver, which alone writes the results database (no concurrent writers on a shared
file system), so ``--run NAME`` resumes exactly as a local run does.

Failures: a worker process that dies mid-cell is retried by Ray on the same phone
(``max_retries``); a cell whose retries are spent, or whose phone (host) left the
cluster, goes back into the queue for any phone, up to ``attempts`` times, then is saved
as an error result.  Only that cell is lost, never the run.
"""

from __future__ import annotations

import logging
import os
import socket
import sys
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from evaluation.farm.phones import PhoneSlot, local_slots, resource_table, slots_in
from evaluation.metrics import EpisodeResult
from evaluation.online import Job, ProgressFn, RunOutcome, error_result
from evaluation.results import ResultsDB

log = logging.getLogger(__name__)

INSTALL_HINT = "install the farm extra: `.venv/bin/pip install -e '.[farm]'` (Ray)"
#: Ray picks the machine's network address for a node unless told this is a one-machine
#: instance; a local farm then stays on loopback.
LOOPBACK_ENV = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}


class FarmError(RuntimeError):
    """The farm cannot run (no Ray, no cluster, no phones); the message says what to do."""


def import_ray(loopback: bool = False) -> Any:
    """Import Ray; ``loopback``: a one-machine cluster reached on 127.0.0.1 (Ray reads
    that setting once, at import, so it must be decided before the first import)."""
    if loopback and "ray" not in sys.modules:
        for k, v in LOOPBACK_ENV.items():
            os.environ.setdefault(k, v)
    try:
        import ray
    except ModuleNotFoundError:
        raise FarmError(f"Ray is not installed; {INSTALL_HINT}") from None
    return ray


def is_loopback(address: str | None) -> bool:
    """A local instance, or a cluster address on 127.0.0.0/8 / localhost."""
    if address in (None, "", "local"):
        return True
    host = address.removeprefix("ray://").rsplit(":", 1)[0]
    return host == "localhost" or host.startswith("127.")


def _check_reachable(address: str, timeout_s: float = 5.0) -> None:
    """Fail fast, with what to do, when a HOST:PORT address has nobody listening (Ray
    itself would retry for minutes)."""
    if address == "auto" or address.startswith("ray://") or ":" not in address:
        return
    host, _, port = address.rpartition(":")
    try:
        with socket.create_connection((host, int(port)), timeout=timeout_s):
            return
    except (OSError, ValueError) as exc:
        raise FarmError(
            f"nothing answers at {address} ({exc}); start the head there with `tapwise farm serve --phones N` "
            "or check the address"
        ) from None


@dataclass(frozen=True)
class FarmOptions:
    address: str | None = None
    """None or "local": a local Ray instance; "auto", "HOST:PORT" or "ray://…": a cluster."""
    local_phones: int = 2
    """Phones of a local instance (in-process virtual phones)."""
    retries_per_worker: int = 2
    """Ray's own retries of a cell whose worker process died (same phone)."""
    attempts: int = 3
    """Times a cell is queued again when its retries are spent or its phone left."""
    poll_s: float = 1.0
    phones_wait_s: float = 30.0
    """How long to wait for the first phone to appear in the cluster."""


def _connect(ray: Any, opts: FarmOptions) -> bool:
    """Connect (or start a local instance); True when this call started Ray."""
    if ray.is_initialized():
        return False
    address = opts.address
    if address in (None, "", "local"):
        ray.init(
            resources=resource_table(local_slots(opts.local_phones)),
            include_dashboard=False,
            log_to_driver=False,
            configure_logging=False,
        )
        return True
    _check_reachable(address)
    try:
        ray.init(address=address, log_to_driver=False, configure_logging=False)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise FarmError(
            f"cannot reach the Ray cluster at {address} ({exc}); start one with "
            "`tapwise farm serve --phones N` (head) or check the address"
        ) from None
    return True


def _cell_function(ray: Any, retries: int) -> Any:
    def farm_cell(job: Job, slot: PhoneSlot) -> EpisodeResult:
        from evaluation.farm.cells import play

        return play(job, slot)

    return ray.remote(num_cpus=0, max_retries=retries, retry_exceptions=False)(farm_cell)


def run_on_ray(
    db: ResultsDB,
    run_id: str,
    jobs: Sequence[Job],
    opts: FarmOptions | None = None,
    *,
    retry_errors: bool = False,
    on_result: ProgressFn | None = None,
    on_skip: Callable[[int], None] | None = None,
    on_phones: Callable[[list[PhoneSlot]], None] | None = None,
) -> RunOutcome:
    """Run the cells ``run_id`` does not hold yet on the cluster's phones; see the module
    docstring.  ``KeyboardInterrupt`` cancels what runs, keeps what was saved, re-raises."""
    opts = opts or FarmOptions()
    ray = import_ray(loopback=is_loopback(opts.address))
    started = _connect(ray, opts)
    try:
        return _Scheduler(ray, db, run_id, jobs, opts, retry_errors, on_result, on_skip, on_phones).run()
    finally:
        if started:
            ray.shutdown()


class _Scheduler:
    def __init__(self, ray: Any, db: ResultsDB, run_id: str, jobs: Sequence[Job], opts: FarmOptions,
                 retry_errors: bool, on_result: ProgressFn | None, on_skip: Callable[[int], None] | None,
                 on_phones: Callable[[list[PhoneSlot]], None] | None) -> None:
        self.ray, self.db, self.run_id, self.jobs, self.opts = ray, db, run_id, list(jobs), opts
        self.on_result, self.on_phones = on_result, on_phones
        done = db.done_cells(run_id, include_errors=not retry_errors)
        self.todo: deque[tuple[Job, int]] = deque((j, 0) for j in self.jobs if j.key not in done)
        self.skipped = len(self.jobs) - len(self.todo)
        if on_skip is not None:
            on_skip(self.skipped)
        self.finished = self.errors = 0
        self.running: dict[Any, tuple[Job, PhoneSlot, int]] = {}
        self.free: list[PhoneSlot] = []
        self.known: set[PhoneSlot] = set()
        self.cell = _cell_function(ray, opts.retries_per_worker)

    def run(self) -> RunOutcome:
        deadline = time.monotonic() + self.opts.phones_wait_s
        self._refresh_phones()
        while not self.known and self.todo and time.monotonic() < deadline:  # a node may still be joining
            time.sleep(0.5)
            self._refresh_phones()
        if not self.known and self.todo:
            raise FarmError(
                "the Ray cluster offers no virtual phones: run `tapwise farm serve --phones N` on a host "
                "(or use --ray without an address for a local instance)"
            )
        try:
            while self.todo or self.running:
                self._submit()
                ready, _ = self.ray.wait(list(self.running), num_returns=1, timeout=self.opts.poll_s)
                for ref in ready:
                    self._collect(ref)
                if not ready:
                    self._refresh_phones()
                    if not self.known and not self.running:
                        raise FarmError("every phone left the Ray cluster; the run is kept, run it again to resume")
        except KeyboardInterrupt:
            for ref in list(self.running):
                self.ray.cancel(ref, force=True)
            raise
        return RunOutcome(len(self.jobs), self.skipped, self.finished, self.errors)

    def _submit(self) -> None:
        while self.todo and self.free:
            job, tries = self.todo.popleft()
            slot = self.free.pop(0)
            ref = self.cell.options(resources={slot.resource: 1}, name=f"cell {job.label()}").remote(job, slot)
            self.running[ref] = (job, slot, tries)
            log.info("cell %s -> %s", job.label(), slot.label())

    def _collect(self, ref: Any) -> None:
        job, slot, tries = self.running.pop(ref)
        try:
            result: EpisodeResult = self.ray.get(ref)
        except self.ray.exceptions.RayError as exc:  # worker retries spent, node lost, cancelled
            self._requeue_or_fail(job, tries, f"{slot.label()}: {type(exc).__name__}: {str(exc)[:300]}")
        else:
            self._record(result)
        if slot in self.known:
            self.free.append(slot)

    def _requeue_or_fail(self, job: Job, tries: int, why: str) -> None:
        if tries + 1 < self.opts.attempts:
            log.warning("cell %s lost (%s); queued again", job.label(), why)
            self.todo.appendleft((job, tries + 1))
        else:
            self._record(error_result(job, f"lost {tries + 1} times; last: {why}"))

    def _record(self, result: EpisodeResult) -> None:
        self.db.save(self.run_id, result)
        self.finished += 1
        self.errors += result.error is not None
        if self.on_result is not None:
            self.on_result(result, self.skipped + self.finished, len(self.jobs))

    def _refresh_phones(self) -> None:
        alive = {s for s in slots_in(self.ray.cluster_resources()) if s.runs_virtual_tasks}
        for slot in sorted(alive - self.known, key=lambda s: s.resource):
            self.free.append(slot)
        gone = self.known - alive
        if gone:
            self.free = [s for s in self.free if s not in gone]
            for ref, (job, slot, tries) in list(self.running.items()):
                if slot in gone:  # its host left: the task would wait forever for the phone
                    self.ray.cancel(ref, force=True)
                    del self.running[ref]
                    self._requeue_or_fail(job, tries, f"{slot.label()} left the cluster")
        changed = alive != self.known
        self.known = alive
        if changed and self.on_phones is not None:
            self.on_phones(sorted(alive, key=lambda s: s.resource))

