"""Worker threads for the window: nothing slow ever runs on the GUI thread.

- ``GuiPoster`` carries a callable from any thread to the GUI thread (a queued signal).
- ``SerialExecutor`` is the one executor per device: every device call (mirror frame,
  tap, hierarchy dump) runs on its single thread, in order, so the mirror and the agent
  never talk to the phone at the same time.
- ``SerializedDevice`` is a ``Device`` whose calls are sent to that executor; the agent
  loop gets one of these.
- ``LatestWins`` runs one job at a time on its own thread and keeps only the newest
  waiting request (live parsing of mirror frames: stale frames are dropped, never queued).
- ``GeneratorDriver`` drives the agent's two-way generator on its own thread: events go
  to the GUI, decisions come back through ``decide``; pause, single-step and stop.

This module knows Qt only for ``GuiPoster``; it builds no widgets.
"""

from __future__ import annotations

import logging
import os
import queue
import threading
import traceback
from collections import deque
from collections.abc import Callable, Generator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QCoreApplication, QEvent, QObject

from agent.device import Device, DeviceInfo, Key
from agent.types import Decision, DecisionKind
from vision.geometry import Size
from vision.types import Screen

log = logging.getLogger(__name__)


class GuiPoster(QObject):
    """Runs callables on the thread this object lives in (the GUI thread).

    Callables wait in a locked deque and a payload-free ``QEvent`` is posted to wake the
    GUI thread.  (A queued ``Signal(object)`` emitted from a plain Python thread leaks
    references in PySide6 6.12 and eventually crashes the interpreter.)
    """

    _EVENT_TYPE = QEvent.Type(QEvent.registerEventType())

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._queue: deque[Callable[[], Any]] = deque()
        self._lock = threading.Lock()
        self._closed = False
        self._wake_pending = False

    def post(self, fn: Callable[[], Any]) -> None:
        if self._closed:
            return
        with self._lock:
            self._queue.append(fn)
            if self._wake_pending:
                return
            self._wake_pending = True
        QCoreApplication.postEvent(self, QEvent(self._EVENT_TYPE))

    @property
    def closed(self) -> bool:
        """``close`` was called: nothing posted runs any more."""
        return self._closed

    def close(self) -> None:
        self._closed = True
        with self._lock:
            self._queue.clear()

    def drain(self) -> None:
        """Run everything posted so far (the GUI thread does this on its own)."""
        with self._lock:
            items = list(self._queue)
            self._queue.clear()
            self._wake_pending = False
        for fn in items:
            if self._closed:
                return
            try:
                fn()
            except Exception:  # a failing callback must not take down the event loop
                log.exception("GUI callback failed")

    def event(self, e: QEvent) -> bool:
        if e.type() == self._EVENT_TYPE:
            self.drain()
            return True
        return super().event(e)


@dataclass(frozen=True, slots=True)
class Failure:
    """An exception from a worker, with its formatted traceback for the detail view."""

    error: BaseException
    detail: str

    @property
    def message(self) -> str:
        return str(self.error) or type(self.error).__name__


def _failure(exc: BaseException) -> Failure:
    return Failure(exc, "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))


class SerialExecutor:
    """One thread per device: jobs run one after another, in submission order."""

    def __init__(self, name: str, poster: GuiPoster) -> None:
        self.name = name
        self._poster = poster
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"device-{name}")
        self._thread_ident: int | None = None
        self._pool.submit(self._remember_thread).result()
        self._shutdown = False

    def _remember_thread(self) -> None:
        self._thread_ident = threading.get_ident()

    @property
    def on_executor_thread(self) -> bool:
        return threading.get_ident() == self._thread_ident

    def submit(
        self,
        fn: Callable[..., Any],
        *args: Any,
        on_done: Callable[[Any], None] | None = None,
        on_error: Callable[[Failure], None] | None = None,
    ) -> Future:
        """Run ``fn(*args)`` on the device thread; callbacks run on the GUI thread."""
        if self._shutdown:
            fut: Future = Future()
            fut.set_exception(RuntimeError(f"executor {self.name} is shut down"))
            return fut
        fut = self._pool.submit(fn, *args)
        if on_done is not None or on_error is not None:
            def deliver(f: Future) -> None:
                if f.cancelled():
                    return
                exc = f.exception()
                if exc is None:
                    if on_done is not None:
                        result = f.result()
                        self._poster.post(lambda: on_done(result))
                elif on_error is not None:
                    failure = _failure(exc)
                    self._poster.post(lambda: on_error(failure))
                else:
                    log.error("device job failed: %s", exc)

            fut.add_done_callback(deliver)
        return fut

    def call(self, fn: Callable[..., Any], *args: Any, timeout: float | None = 60.0) -> Any:
        """Run ``fn(*args)`` on the device thread and wait for its result (not from the GUI thread)."""
        if self.on_executor_thread:
            return fn(*args)
        return self.submit(fn, *args).result(timeout=timeout)

    def shutdown(self, wait: bool = True) -> None:
        self._shutdown = True
        self._pool.shutdown(wait=wait, cancel_futures=True)


class SerializedDevice:
    """A ``Device`` whose every call runs on the device's serial executor."""

    def __init__(self, device: Device, executor: SerialExecutor) -> None:
        self._device = device
        self._ex = executor

    @property
    def inner(self) -> Device:
        return self._device

    @property
    def info(self) -> DeviceInfo:
        return self._device.info

    def screen_size(self) -> Size:
        return self._ex.call(self._device.screen_size)

    def screenshot(self, *, with_hierarchy: bool = False) -> Screen:
        return self._ex.call(lambda: self._device.screenshot(with_hierarchy=with_hierarchy))

    def dump_hierarchy(self) -> str:
        return self._ex.call(self._device.dump_hierarchy)

    def foreground(self) -> tuple[str, str]:
        return self._ex.call(self._device.foreground)

    def tap(self, x: int, y: int) -> None:
        self._ex.call(self._device.tap, x, y)

    def long_press(self, x: int, y: int, duration_ms: int = 800) -> None:
        self._ex.call(self._device.long_press, x, y, duration_ms)

    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 300) -> None:
        self._ex.call(self._device.swipe, x1, y1, x2, y2, duration_ms)

    def input_text(self, text: str) -> None:
        self._ex.call(self._device.input_text, text)

    def key(self, key: Key) -> None:
        self._ex.call(self._device.key, key)

    def open_app(self, name_or_package: str) -> None:
        self._ex.call(self._device.open_app, name_or_package)

    def close(self) -> None:
        """The window owns the device's life; the agent closing it is a no-op."""

    def __getattr__(self, name: str) -> Any:  # extra methods of richer devices
        attr = getattr(self._device, name)
        if callable(attr):
            return lambda *a, **k: self._ex.call(lambda: attr(*a, **k))
        return attr


class LatestWins:
    """A single worker thread that runs the newest request and drops older waiting ones.

    ``niceness`` > 0 lowers the thread's CPU priority (Linux schedules threads one by one;
    threads it starts, such as an inference library's pool, inherit it), so background
    work yields the CPU to the mirror and the GUI instead of competing with them."""

    def __init__(self, name: str, poster: GuiPoster, niceness: int = 0) -> None:
        self._poster = poster
        self._niceness = niceness
        self._cond = threading.Condition()
        self._pending: tuple[Callable[[], Any], Callable[[Any], None], Callable[[Failure], None] | None] | None = None
        self._stop = False
        self._busy = False
        self.dropped = 0
        self.completed = 0
        self._thread = threading.Thread(target=self._loop, name=f"latest-{name}", daemon=True)
        self._thread.start()

    def submit(
        self, fn: Callable[[], Any], on_done: Callable[[Any], None], on_error: Callable[[Failure], None] | None = None
    ) -> None:
        with self._cond:
            if self._pending is not None:
                self.dropped += 1
            self._pending = (fn, on_done, on_error)
            self._cond.notify()

    @property
    def busy(self) -> bool:
        with self._cond:
            return self._busy or self._pending is not None

    def _lower_priority(self) -> None:
        if self._niceness <= 0 or not hasattr(os, "setpriority"):
            return
        try:  # on Linux a thread id names one thread for setpriority
            tid = threading.get_native_id()
            os.setpriority(os.PRIO_PROCESS, tid, os.getpriority(os.PRIO_PROCESS, tid) + self._niceness)
        except OSError as exc:  # not allowed or not supported: run at normal priority
            log.debug("could not lower the priority of %s: %s", self._thread.name, exc)

    def _loop(self) -> None:
        self._lower_priority()
        while True:
            with self._cond:
                while self._pending is None and not self._stop:
                    self._cond.wait()
                if self._stop:
                    return
                fn, on_done, on_error = self._pending  # type: ignore[misc]
                self._pending = None
                self._busy = True
            try:
                result = fn()
            except Exception as exc:  # delivered to the GUI as a notification
                failure = _failure(exc)
                if on_error is not None:
                    self._poster.post(lambda f=failure, cb=on_error: cb(f))  # type: ignore[misc]
                else:
                    log.error("background job failed: %s", exc)
            else:
                self._poster.post(lambda r=result, cb=on_done: cb(r))  # type: ignore[misc]
            finally:
                with self._cond:
                    self._busy = False
                    self.completed += 1

    def shutdown(self, timeout: float = 10.0) -> None:
        with self._cond:
            self._stop = True
            self._pending = None
            self._cond.notify_all()
        self._thread.join(timeout)


class GeneratorDriver:
    """Drives a two-way generator (the agent loop) on its own thread.

    ``on_event`` runs on the GUI thread for every yielded event.  When an event asks for a
    decision, the driver waits for ``decide`` (or ``stop``).  ``pause`` holds the loop
    between events; ``step_once`` lets one more event through while paused.  ``stop``
    calls ``on_stop`` (the runner's cancel token), answers decisions with abort and keeps
    driving the generator to its own end, so the runner finishes and stores the episode;
    only a loop that ignores all that for ``MAX_EVENTS_AFTER_STOP`` events is closed.
    ``running`` stays true until ``on_finished`` (or ``on_error``) has run on the GUI thread
    (or the poster closed with the window), so nothing can start a second loop in the
    moment between the thread's end and the window hearing of it.
    """

    MAX_EVENTS_AFTER_STOP = 200

    def __init__(
        self,
        gen: Generator[Any, Any, Any],
        poster: GuiPoster,
        on_event: Callable[[Any], None],
        on_finished: Callable[[Any], None],
        on_error: Callable[[Failure], None],
        name: str = "agent",
        on_stop: Callable[[], None] | None = None,
        needs_decision: Callable[[Any], bool] = lambda _event: False,
    ) -> None:
        self._gen = gen
        self._needs_decision = needs_decision
        self._poster = poster
        self._on_event, self._on_finished, self._on_error = on_event, on_finished, on_error
        self._on_stop = on_stop
        self._decisions: queue.Queue[Decision] = queue.Queue()
        self._resume = threading.Event()
        self._resume.set()
        self._step_budget = 0
        self._stop = threading.Event()
        self.waiting = False
        self._started = False
        self._delivered = False  # set on the GUI thread as the end is handed over
        self._thread = threading.Thread(target=self._loop, name=f"driver-{name}", daemon=True)

    def start(self) -> None:
        self._started = True
        self._thread.start()

    @property
    def running(self) -> bool:
        return self._thread.is_alive() or (self._started and not self._delivered and not self._poster.closed)

    def _deliver(self, callback: Callable[[Any], None], value: Any) -> None:
        self._delivered = True
        callback(value)

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def decide(self, decision: Decision) -> None:
        self._decisions.put(decision)

    def pause(self, paused: bool) -> None:
        if paused:
            self._resume.clear()
        else:
            self._resume.set()

    def step_once(self) -> None:
        self._step_budget += 1
        self._resume.set()

    def stop(self) -> None:
        if self._stop.is_set():
            return
        self._stop.set()
        if self._on_stop is not None:
            try:
                self._on_stop()
            except Exception:
                log.exception("cancelling the loop failed")
        self._resume.set()
        self._decisions.put(Decision(DecisionKind.ABORT, feedback="stopped from the window", decided_by="window"))

    def join(self, timeout: float | None = None) -> bool:
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def _wait_resume(self) -> None:
        while not self._resume.wait(0.1):
            if self._stop.is_set():
                return
        if self._step_budget > 0:
            self._step_budget -= 1
            if self._step_budget == 0:
                self._resume.clear()

    def _loop(self) -> None:
        gen = self._gen
        result: Any = None
        after_stop = 0
        try:
            event = next(gen)
            while True:
                self._poster.post(lambda e=event: self._on_event(e))  # type: ignore[misc]
                if self._stop.is_set():
                    after_stop += 1
                    if after_stop > self.MAX_EVENTS_AFTER_STOP:
                        log.error("the agent loop ignored the stop request; closing it")
                        gen.close()
                        break
                if self._needs_decision(event):
                    self.waiting = True
                    decision = self._decisions.get()
                    self.waiting = False
                    if self._stop.is_set():
                        decision = Decision(DecisionKind.ABORT, feedback="stopped from the window", decided_by="window")
                    event = gen.send(decision)
                    continue
                if not self._stop.is_set():
                    self._wait_resume()
                event = next(gen)
        except StopIteration as done:
            result = done.value
        except Exception as exc:
            failure = _failure(exc)
            self._poster.post(lambda: self._deliver(self._on_error, failure))
            return
        self._poster.post(lambda: self._deliver(self._on_finished, result))
