"""The record of one run: the mirror's frames examined for flashes, and its video.

``RunCapture`` listens to a mirrored phone's stream (``StreamSource``: the ``StreamTap`` of
a ``MirroredDevice``, with the phone's size).  Frames go into a ``FrameRing``; a watcher
thread takes them (the newest first: only frames of an animation are skipped, never the
mirror slowed), keeps the ones that show something new and queues them in order for a
reader thread, which feeds them to a ``FlashTracker`` (the OCR's time is spent there).  With a video path
the H.264 packets also go to a ``VideoWriter``, and a side file beside the MP4
(``*.steps.json``) says when the video started and when each step's action was sent,
rewritten after each step.  The runner reaches it through ``agent.transient.RunRecord``:
``action_sent`` only appends under a lock, and ``transients``/``showing`` return what the
worker has found so far, so nothing on a step's path waits for the capture.

No Qt.  Nothing here knows about steps beyond their indices, nor about storage.
"""

from __future__ import annotations

import collections
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from agent.transient import Transient
from phone.record.flashes import FlashRules, FlashTracker, Read
from phone.record.ring import FrameRing, RingStats
from phone.record.video import VideoStats, VideoWriter
from vision.geometry import Rect, Size
from vision.ocr import changed_regions

log = logging.getLogger(__name__)

SIDE_SUFFIX = ".steps.json"
SIDE_VERSION = 1


class StreamSource(Protocol):
    """A mirrored stream to listen to (``phone.adb.stream_tap.StreamTap``)."""

    def listen_frames(self, fn: Callable[[Any], None]) -> Callable[[], None]: ...

    def listen_packets(self, fn: Callable[[Any], None]) -> tuple[list[Any], Callable[[], None]]: ...


@dataclass(frozen=True, slots=True)
class CaptureOptions:
    """What to record.  ``video``: the MP4 to write (None: no video)."""

    flashes: bool = True
    video: Path | None = None
    max_video_bytes: int | None = None
    ring_bytes: int = 8 * 1024 * 1024
    rules: FlashRules = field(default_factory=FlashRules)
    #: The watcher looks at most this many frames a second (the newest each time): a toast
    #: fades in over a few hundred milliseconds, and a phone playing a video at 60 frames a
    #: second must not cost the run a core.
    max_fps: float = 15.0


@dataclass(frozen=True, slots=True)
class CaptureSummary:
    """What a finished capture recorded."""

    transients: tuple[Transient, ...]
    video: VideoStats | None
    side_file: Path | None
    ring: RingStats
    frames_examined: int
    reads: int  # OCR calls
    hook_ms_max: float  # the longest ``action_sent``/``transients``/``showing`` call


def default_reader(models_of: Any = None) -> Read:
    """The OCR the capture reads changed regions with: PP-OCR of its own (the parser's
    engine is never waited for), on one thread (so it never takes both cores from the
    step's own parse), without onnxruntime's memory arena (small crops, small memory),
    recognising one line at a time (the recogniser's output for a batch of long lines is
    tens of MB), remembering crops it read already.  ``models_of``: a ``RapidOcrBackend``
    (the screen parser's) whose loaded models it runs with its own settings instead of
    loading a second copy (``reader_beside``); its calls then use that backend's threads.  Its models load on a thread of their own at once
    (seconds), so the worker follows the screen's changes meanwhile and the first read
    waits only for what is left of the loading.  After each read the C heap is trimmed
    (glibc's ``malloc_trim``): crops of every size leave freed buffers glibc would otherwise
    keep, and the process would grow by about 100 MB over a run (measured: no growth with
    the trim; see ``docs/results/run-record.md``)."""
    from vision.ocr import RapidOcrBackend

    backend = RapidOcrBackend(min_confidence=0.8, det_max_side=640, threads=1, cache_entries=32,
                              memory_arena=False, rec_batch=1, models_of=models_of)
    loading = threading.Thread(target=backend.warm_up, name="run-capture-ocr-load", daemon=True)
    loading.start()
    trim = _heap_trimmer()

    def read(image: Any) -> Any:
        loading.join()
        try:
            return backend.read(image)
        finally:
            trim()

    return read


def reader_beside(parser: Any) -> Read:
    """``default_reader`` sharing the models of ``parser``'s OCR when the parser reads the
    screen with PP-OCR (``vision.ocr.RapidOcrBackend``; a ``vision.pipeline.ScreenParser``
    not in tree mode): the window parses so by default, so the record adds no second copy
    of the weights (about 70 MB).  A parser that reads only the accessibility tree, or
    another OCR, or none: a reader of its own (a tree parser's OCR would be loaded for the
    record alone, with the parser's larger settings)."""
    from vision.ocr import RapidOcrBackend

    backend = None
    if getattr(getattr(parser, "config", None), "mode", "tree") == "tree":
        return default_reader()
    try:
        ocr = getattr(parser, "ocr_backend", None)
        backend = ocr() if callable(ocr) else None
    except Exception:  # no OCR in that parser (not installed, switched off): the record has its own
        log.debug("no OCR to share with the parser", exc_info=True)
    return default_reader(models_of=backend if isinstance(backend, RapidOcrBackend) else None)


def _heap_trimmer() -> Callable[[], None]:
    """glibc's ``malloc_trim(0)`` (hands freed heap memory back to the system), or a no-op
    where there is no glibc."""
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
        trim = libc.malloc_trim if libc is not None else None
    except (OSError, AttributeError):
        trim = None
    if trim is None:
        return lambda: None

    def run() -> None:
        trim(0)

    return run


def side_file_for(video: Path) -> Path:
    return video.with_name(video.stem + SIDE_SUFFIX)


class RunCapture:
    """See the module docstring; implements ``agent.transient.RunRecord``."""

    def __init__(self, source: StreamSource, options: CaptureOptions, *, device_size: Size | None = None,
                 read: Read | None = None) -> None:
        self.source = source
        self.options = options
        self.device_size = device_size
        self._read = read
        self.ring = FrameRing(max_bytes=options.ring_bytes)
        self._lock = threading.Lock()
        self._found: list[Transient] = []
        self._showing: list[Transient] = []
        self._actions: list[dict[str, Any]] = []
        self._stop = threading.Event()
        self._idle = threading.Event()
        self._thread: threading.Thread | None = None
        self._unsubscribe: list[Callable[[], None]] = []
        self._video: VideoWriter | None = None
        self._started_wall = self._started_mono = 0.0
        self._examined = 0
        self._hook_ms = 0.0
        self._told = 0  # actions handed to the tracker
        self._queue: collections.deque[Any] = collections.deque()  # changes for the reader, in order
        self._queue_cond = threading.Condition()
        self._reading = False
        self._reader: threading.Thread | None = None
        self._frame_size: tuple[int, int] | None = None  # of the frames examined
        self._side_dirty = threading.Event()
        self.tracker: FlashTracker | None = None

    # -- lifecycle ---------------------------------------------------------------------------------
    def start(self, video: Path | None = None) -> RunCapture:
        """Start listening; ``video`` (or the options') is the MP4 to write."""
        if video is not None:
            self.options = replace(self.options, video=video)
        self._started_wall, self._started_mono = time.time(), time.monotonic()
        if self.options.video is not None:
            self._video = VideoWriter(self.options.video, max_bytes=self.options.max_video_bytes)
            head, unsubscribe = self.source.listen_packets(self._video.packet)
            self._video.start(head, at_mono=self._started_mono)
            self._unsubscribe.append(unsubscribe)
            self._write_side_file()
        if self.options.flashes:
            self._unsubscribe.append(self.source.listen_frames(self._on_frame))
        self._thread = threading.Thread(target=self._watch, name="run-capture", daemon=True)
        self._reader = threading.Thread(target=self._read_changes, name="run-capture-read", daemon=True)
        self._thread.start()
        self._reader.start()
        return self

    def stop(self, timeout: float = 10.0) -> CaptureSummary:
        """Stop listening, finish the video (it lasts until now) and the side file."""
        end = time.monotonic()
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe.clear()
        self._stop.set()
        for thread in (self._thread, self._reader):
            if thread is not None:
                thread.join(timeout)
        self.ring.close()
        video = self._video.stop(end, timeout) if self._video is not None else None
        side = self._write_side_file(ended_mono=end, video=video) if self._video is not None else None
        with self._lock:
            found = tuple(self._found)
        return CaptureSummary(found, video, side, self.ring.stats(), self._examined,
                              self.tracker.reads if self.tracker is not None else 0, self._hook_ms)

    @property
    def recording(self) -> bool:
        """A video is being written (and has not stopped by itself)."""
        return self._video is not None and not self._stop.is_set() and not self._video.stats().stopped

    def video_stats(self) -> VideoStats | None:
        return self._video.stats() if self._video is not None else None

    # -- agent.transient.RunRecord ------------------------------------------------------------------
    #: An action under way counts as lasting this long until it is reported sent.
    PENDING_S = 60.0

    def action_begins(self, step: int, at: float, where: Rect | None = None) -> None:
        self.action_sent(step, at, at + self.PENDING_S, where)

    def action_sent(self, step: int, started: float, ended: float, where: Rect | None = None) -> None:
        t0 = time.perf_counter()
        with self._lock:  # held only for appends and copies, never while the worker reads text
            for a in self._actions:
                if a["index"] == step:
                    a.update(started=started, ended=ended, where=where)
                    self._told = min(self._told, self._actions.index(a))
                    break
            else:
                self._actions.append({"index": step, "started": started, "ended": ended, "where": where})
        self._side_dirty.set()  # the worker tells its tracker and rewrites the side file
        self._timed(t0)

    def transients(self) -> Sequence[Transient]:
        t0 = time.perf_counter()
        with self._lock:
            found = tuple(self._found)
        self._timed(t0)
        return found

    def showing(self, step: int) -> Sequence[Transient]:
        t0 = time.perf_counter()
        with self._lock:
            out = tuple(t for t in self._showing if t.step == step)
        self._timed(t0)
        return out

    def settle(self, timeout_s: float) -> None:
        """Wait until the worker has examined every frame offered so far and text seen
        after the last action had the time a long toast lasts to go away (at most
        ``timeout_s``)."""
        deadline = time.monotonic() + max(0.0, timeout_s)
        with self._lock:
            last = max((a["ended"] for a in self._actions), default=0.0)
        while time.monotonic() < deadline and self._thread is not None and self._thread.is_alive():
            with self._lock:
                pending = any(t.first_seen >= last - 0.1 for t in self._showing)
            waited = time.time() - last
            if self._idle.is_set() and (not pending or waited > self.options.rules.max_life_s) and waited >= 4.0:
                return
            time.sleep(0.05)

    def _timed(self, t0: float) -> None:
        ms = (time.perf_counter() - t0) * 1000
        if ms > self._hook_ms:
            self._hook_ms = ms

    # -- the mirror's thread -----------------------------------------------------------------------------
    def _on_frame(self, frame: Any) -> None:
        self.ring.offer(frame.image, frame.received_at, frame.index)
        self._idle.clear()

    # -- the workers --------------------------------------------------------------------------------------
    # The watcher takes the mirror's newest frame, shrinks it and sees whether anything changed
    # (milliseconds); changes are queued in order for the reader, which compares them and reads
    # text (OCR: often a second).  A slow read never makes the watcher miss a change, so a toast
    # that came and went while a read was under way is still seen as two changes.
    MAX_QUEUED = 8  # changes waiting for the reader; beyond, the oldest is dropped (two merge)

    def _watch(self) -> None:
        try:
            self._watch_frames()
        except Exception:  # the record loses its flashes from here on, never the run
            log.exception("the record's watcher stopped")
        finally:
            self._enqueue(None)  # the reader's end, whatever happened

    def _watch_frames(self) -> None:
        last: Any = None
        while not self._stop.is_set():
            if self._side_dirty.is_set():
                self._side_dirty.clear()
                self._write_side_file()
            if not self.options.flashes:
                self._idle.set()
                self._side_dirty.wait(0.2)
                continue
            frame = self.ring.take(0.2)
            if frame is None:
                with self._queue_cond:
                    if not self._queue and not self._reading:
                        self._idle.set()
                continue
            t0 = time.monotonic()
            last = self._sort(frame, last)
            self._stop.wait(max(0.0, 1.0 / self.options.max_fps - (time.monotonic() - t0)))
        frame = self.ring.take(0) if self.options.flashes else None
        if frame is not None:  # the newest frame when the run stopped: what the screen ended on
            self._sort(frame, last)

    def _sort(self, frame: Any, last: Any) -> Any:
        """Queue ``frame`` for the reader as a change or as a repeat of ``last``; returns the
        newest distinct frame."""
        self._examined += 1
        small = self.ring.shrink(frame)  # examined at the size the ring keeps (bounded memory)
        if last is not None and small.image.shape == last.image.shape and not changed_regions(
                last.image, small.image, threshold=self.options.rules.diff_threshold).regions:
            self._enqueue(("seen", small))
            return last
        self.ring.keep(small)
        self._enqueue(("frame", small))
        return small

    def _enqueue(self, item: Any) -> None:
        with self._queue_cond:
            q = self._queue
            if item is not None and item[0] == "seen" and q and q[-1] is not None and q[-1][0] == "seen":
                q[-1] = item  # repeats of one screen: only the latest matters
            else:
                q.append(item)
            while len(q) > self.MAX_QUEUED:
                q.popleft()
            self._queue_cond.notify()

    def _read_changes(self) -> None:
        if self.options.flashes:
            self._make_tracker()
        while True:
            with self._queue_cond:
                while not self._queue:
                    if self._stop.is_set() and not self._watching():
                        return  # stopped, and no watcher left to say so
                    self._queue_cond.wait(0.5)
                item = self._queue.popleft()
                self._reading = item is not None
            if item is None:
                return
            try:
                if self.tracker is not None:
                    self._examine(*item)
            except Exception:  # one bad frame loses its change, never the record
                log.exception("examining a frame failed")
            finally:
                with self._queue_cond:
                    self._reading = False

    def _watching(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def _make_tracker(self) -> None:
        try:
            read = self._read if self._read is not None else default_reader()
        except Exception:
            log.exception("no OCR for the record of the run: flashes are not looked for")
            return
        self.tracker = FlashTracker(read, self.options.rules)

    def _tell_tracker(self) -> None:
        """Hand the tracker the actions sent since the last time (on the reader's thread)."""
        with self._lock:
            fresh = [dict(a) for a in self._actions[self._told:]]
            self._told = len(self._actions)
        if self.tracker is not None:
            for a in fresh:
                self.tracker.action(a["index"], a["started"], a["ended"], self._to_frame(a["where"]))

    def _examine(self, kind: str, small: Any) -> None:
        tracker = self.tracker
        assert tracker is not None
        h, w = small.image.shape[:2]
        self._frame_size = (w, h)
        self._tell_tracker()
        found: list[Transient] = []
        if kind == "seen":
            tracker.seen_again(small.at)
        else:
            found = tracker.feed(small.image, small.at)
        showing = tracker.showing()
        with self._lock:
            self._found.extend(self._to_device(t, w, h) for t in found)
            self._showing = [self._to_device(t, w, h) for t in showing]
        for t in found:
            log.info("flashed after step %d: %r (%.1f s)", t.step + 1, t.text, t.seconds)

    def _to_frame(self, where: Rect | None) -> Rect | None:
        """A device-pixel rect in the pixels of the frames examined (the ring's size)."""
        size, frame = self.device_size, self._frame_size
        if where is None or size is None or frame is None or not size.width or not size.height:
            return where
        sx, sy = frame[0] / size.width, frame[1] / size.height
        return Rect(int(where.left * sx), int(where.top * sy), int(where.right * sx) + 1, int(where.bottom * sy) + 1)

    def _to_device(self, t: Transient, w: int, h: int) -> Transient:
        size = self.device_size
        if size is None or (size.width, size.height) == (w, h) or not w or not h:
            return t
        sx, sy = size.width / w, size.height / h
        r = t.rect
        return replace(t, rect=Rect(round(r.left * sx), round(r.top * sy), round(r.right * sx), round(r.bottom * sy)))

    # -- the side file -----------------------------------------------------------------------------------------
    def _write_side_file(self, ended_mono: float | None = None, video: VideoStats | None = None) -> Path | None:
        """``run.steps.json`` beside the MP4: when the video began (wall clock) and each
        step's action in video seconds.  Written whole or not at all."""
        path = self.options.video
        if path is None:
            return None
        with self._lock:
            actions = list(self._actions)
        doc: dict[str, Any] = {
            "version": SIDE_VERSION,
            "video": path.name,
            "started_at": self._started_wall,
            "steps": [{"index": a["index"], "at_s": round(a["started"] - self._started_wall, 3),
                       "ended_s": round(a["ended"] - self._started_wall, 3)} for a in actions],
        }
        if ended_mono is not None:
            doc["duration_s"] = round(ended_mono - self._started_mono, 3)
        if video is not None:
            doc.update(bytes=video.bytes, packets=video.packets, dropped=video.dropped, stopped=video.stopped,
                       width=video.width, height=video.height)
        side = side_file_for(path)
        tmp = side.with_name(f"{side.name}.{os.getpid()}.{threading.get_ident()}.part")
        try:
            side.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(json.dumps(doc, indent=1), encoding="utf-8")
            tmp.replace(side)
        except OSError as exc:
            log.warning("could not write %s: %s", side, exc)
            return None
        return side


def read_side_file(video: Path) -> dict[str, Any] | None:
    """The side file of ``video`` as written by ``RunCapture`` (None when absent or unreadable)."""
    side = side_file_for(video)
    try:
        doc = json.loads(side.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) and doc.get("version") == SIDE_VERSION else None
