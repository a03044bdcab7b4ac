"""The frame ring: the last few seconds of the mirror's decoded frames, bounded in memory.

``FrameRing.offer`` is what the mirror's thread calls for every decoded frame: it only
parks a reference in a one-place inbox (the newest frame wins; one not taken in time is
counted as skipped) and returns, so the mirror is never slowed.  The consumer (the record
of a run, ``phone.record.capture``) ``take``s frames from the inbox on its own thread and
``keep``s the ones it wants: a kept frame is stored downscaled (its longer side at most
``keep_side`` pixels) and the oldest frames are dropped while the ring holds more than
``max_bytes`` or frames older than ``max_age_s``.  ``frames``/``before`` read the ring.

Thread-safe; no Qt, no I/O.  Frames are read-only arrays and are never copied on the
mirror's thread.
"""

from __future__ import annotations

import collections
import logging
import threading
import time
from dataclasses import dataclass, field

import numpy as np

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True, eq=False)
class RingFrame:
    """One frame: RGB pixels (read-only), when it was on the screen (wall clock and
    monotonic seconds), and its number in the stream."""

    image: np.ndarray
    at: float  # time.time() of the moment its bytes arrived
    mono: float  # time.monotonic() of the same moment
    index: int = 0
    scale: float = 1.0  # frame pixels per stored pixel (>1 when stored downscaled)

    @property
    def nbytes(self) -> int:
        return int(self.image.nbytes)


@dataclass(frozen=True, slots=True)
class RingStats:
    offered: int
    skipped: int  # offered but replaced before the consumer took them
    kept: int
    frames: int  # in the ring now
    bytes: int  # held by the ring now
    peak_bytes: int
    span_s: float  # seconds between the oldest and the newest frame in the ring


@dataclass
class _Inbox:
    frame: RingFrame | None = None
    offered: int = 0
    skipped: int = 0
    cond: threading.Condition = field(default_factory=threading.Condition)


class FrameRing:
    """See the module docstring."""

    def __init__(self, *, max_bytes: int = 8 * 1024 * 1024, max_age_s: float = 8.0, keep_side: int = 1280) -> None:
        if max_bytes <= 0:
            raise ValueError("the ring needs a positive byte budget")
        self.max_bytes = max_bytes
        self.max_age_s = max_age_s
        self.keep_side = keep_side
        self._inbox = _Inbox()
        self._lock = threading.Lock()
        self._frames: collections.deque[RingFrame] = collections.deque()
        self._bytes = 0
        self._peak = 0
        self._kept = 0
        self._closed = False

    # -- the mirror's side ---------------------------------------------------------------
    def offer(self, image: np.ndarray, received_mono: float, index: int = 0) -> None:
        """A decoded frame (read-only RGB) whose bytes arrived at ``received_mono``
        (``time.monotonic()``).  Constant time, never blocks for long."""
        now_mono, now_wall = time.monotonic(), time.time()
        frame = RingFrame(image, now_wall - (now_mono - received_mono), received_mono, index)
        inbox = self._inbox
        with inbox.cond:
            if inbox.frame is not None:
                inbox.skipped += 1
            inbox.frame = frame
            inbox.offered += 1
            inbox.cond.notify()

    # -- the consumer's side --------------------------------------------------------------
    def take(self, timeout: float) -> RingFrame | None:
        """The newest offered frame not taken yet, waiting up to ``timeout`` seconds."""
        inbox = self._inbox
        with inbox.cond:
            if inbox.frame is None and not self._closed:
                inbox.cond.wait(timeout)
            frame, inbox.frame = inbox.frame, None
            return frame

    def shrink(self, frame: RingFrame) -> RingFrame:
        """``frame`` as the ring would store it: downscaled when larger than ``keep_side``."""
        return _downscaled(frame, self.keep_side)

    def keep(self, frame: RingFrame) -> RingFrame:
        """Store ``frame`` (downscaled when larger than ``keep_side``); returns what is stored."""
        stored = _downscaled(frame, self.keep_side)
        with self._lock:
            self._frames.append(stored)
            self._bytes += stored.nbytes
            self._kept += 1
            self._trim(stored.mono)
            self._peak = max(self._peak, self._bytes)
        return stored

    def _trim(self, now_mono: float) -> None:
        while len(self._frames) > 1 and (self._bytes > self.max_bytes
                                          or now_mono - self._frames[0].mono > self.max_age_s):
            old = self._frames.popleft()
            self._bytes -= old.nbytes

    def frames(self, since_mono: float | None = None) -> list[RingFrame]:
        """Stored frames, oldest first (those at or after ``since_mono`` when given)."""
        with self._lock:
            return [f for f in self._frames if since_mono is None or f.mono >= since_mono]

    def before(self, mono: float) -> RingFrame | None:
        """The newest stored frame that arrived before ``mono`` (what the screen showed then)."""
        with self._lock:
            found = None
            for f in self._frames:
                if f.mono >= mono:
                    break
                found = f
            return found

    def stats(self) -> RingStats:
        with self._lock:
            span = self._frames[-1].mono - self._frames[0].mono if len(self._frames) > 1 else 0.0
            frames, held, peak, kept = len(self._frames), self._bytes, self._peak, self._kept
        with self._inbox.cond:
            offered, skipped = self._inbox.offered, self._inbox.skipped
        return RingStats(offered, skipped, kept, frames, held, peak, span)

    def close(self) -> None:
        """Wake a waiting ``take`` and forget every frame."""
        with self._inbox.cond:
            self._closed = True
            self._inbox.frame = None
            self._inbox.cond.notify_all()
        with self._lock:
            self._frames.clear()
            self._bytes = 0


def _downscaled(frame: RingFrame, keep_side: int) -> RingFrame:
    h, w = frame.image.shape[:2]
    longer = max(h, w)
    if keep_side <= 0 or longer <= keep_side:
        return frame
    import cv2

    factor = longer / keep_side
    small = cv2.resize(frame.image, (max(1, round(w / factor)), max(1, round(h / factor))),
                       interpolation=cv2.INTER_AREA)
    small.setflags(write=False)
    return RingFrame(small, frame.at, frame.mono, frame.index, frame.scale * factor)
