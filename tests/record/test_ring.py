"""The frame ring stays within its memory budget under a stream faster than its consumer,
never holds more than one frame waiting, and says how many frames it skipped."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from phone.record.ring import FrameRing, RingFrame


def _frame(i: int, h: int = 2400, w: int = 1080) -> np.ndarray:
    img = np.full((h, w, 3), i % 251, np.uint8)
    img.setflags(write=False)
    return img


def test_a_fast_stream_never_takes_the_ring_past_its_budget():
    ring = FrameRing(max_bytes=6 * 1024 * 1024, keep_side=1280)  # ~2.2 MB per kept 1080x2400 frame
    offered = 400
    peaks: list[int] = []
    done = threading.Event()

    def mirror() -> None:  # as fast as the mirror's thread can go: no pause between frames
        for i in range(offered):
            ring.offer(_frame(i), time.monotonic(), i)
        done.set()

    def consumer() -> None:
        while not (done.is_set() and ring.take(0) is None):
            frame = ring.take(0.05)
            if frame is not None:
                ring.keep(frame)
                peaks.append(ring.stats().bytes)

    threads = [threading.Thread(target=mirror), threading.Thread(target=consumer)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    stats = ring.stats()
    assert stats.offered == offered
    assert stats.kept >= 1
    assert stats.kept + stats.skipped <= offered  # the consumer only ever saw the newest frame waiting
    assert max(peaks) <= ring.max_bytes and stats.peak_bytes <= ring.max_bytes
    assert all(f.image.shape[0] == 1280 for f in ring.frames())  # kept downscaled: the longer side is 1280
    assert stats.frames == len(ring.frames()) <= ring.max_bytes // ring.frames()[0].nbytes


def test_frames_older_than_the_ring_span_are_dropped():
    ring = FrameRing(max_bytes=64 * 1024 * 1024, max_age_s=2.0)
    for i, t in enumerate((100.0, 100.5, 101.0, 102.5, 103.4)):
        ring.keep(RingFrame(_frame(i, 64, 32), at=t, mono=t, index=i))
    assert [f.index for f in ring.frames()] == [3, 4]
    assert ring.before(103.0) is not None and ring.before(103.0).index == 3
    assert ring.stats().span_s == pytest.approx(0.9)


def test_an_offered_frame_waits_alone_and_the_newest_wins():
    ring = FrameRing()
    for i in range(5):
        ring.offer(_frame(i, 16, 16), time.monotonic(), i)
    got = ring.take(0)
    assert got is not None and got.index == 4
    assert ring.take(0) is None
    assert ring.stats().skipped == 4
    assert got.at <= time.time()  # its wall-clock time is when its bytes arrived


def test_closing_wakes_a_waiting_consumer():
    ring = FrameRing()
    woke = []
    t = threading.Thread(target=lambda: woke.append(ring.take(30)))
    t.start()
    time.sleep(0.1)
    ring.close()
    t.join(5)
    assert woke == [None]
