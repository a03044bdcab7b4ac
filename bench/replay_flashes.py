"""Replay recorded runs through the flash tracker: what the record would find in them now.

Each argument is a run's MP4 (``run.mp4`` beside its screenshots; the side file
``run.steps.json`` beside it says when the video began and when each step's action went
out).  Its frames are fed to ``phone.record.flashes.FlashTracker`` at their times (at most
``--fps`` a second, the newest first, as the live record's watcher does), with the
actions, and read by the record's own OCR (``phone.record.capture.default_reader``, one
for every run).  Prints the flashes found per run, with ``--reads`` every region read and
what was read there before and after.  Used to find why a live run missed a message
(``docs/results/run-record.md``) and to check a change of the tracker's rules on runs
recorded before it: run it on the same MP4s before and after the change.  Frames decoded
from the MP4 are the frames the live record examined (the same H.264 stream); only which
of them the watcher took can differ.

Usage: ``PYTHONPATH=. python bench/replay_flashes.py RUN.mp4 [...] [--fps 15] [--reads]``.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path


def replay(video: Path, read: object, fps: float) -> list[tuple[str, int, float]]:
    """The flashes the tracker finds in ``video``: (text, step index, seconds shown)."""
    import av

    from phone.record.capture import read_side_file
    from phone.record.flashes import FlashTracker
    from phone.record.ring import FrameRing, RingFrame

    side = read_side_file(video)
    if side is None:
        raise SystemExit(f"{video}: no side file (run.steps.json) beside it")
    t0 = float(side["started_at"])
    tracker = FlashTracker(read)  # type: ignore[arg-type]
    for s in side["steps"]:
        tracker.action(int(s["index"]), t0 + float(s["at_s"]), t0 + float(s["ended_s"]))
    ring, found, last = FrameRing(), [], -1.0
    with av.open(str(video)) as container:
        for frame in container.decode(video=0):
            t = float(frame.pts * frame.time_base)
            if t - last < 1.0 / fps:
                continue
            last = t
            small = ring.shrink(RingFrame(frame.to_ndarray(format="rgb24"), t0 + t, t0 + t)).image
            if tracker.same(small):
                tracker.seen_again(t0 + t)
            else:
                found += tracker.feed(small, t0 + t)
    return [(f.text, f.step, round(f.seconds, 2)) for f in found]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("videos", nargs="+", type=Path)
    ap.add_argument("--fps", type=float, default=15.0, help="frames examined a second at most (the watcher's)")
    ap.add_argument("--reads", action="store_true", help="log every region read, before and after")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    if args.reads:
        logging.getLogger("phone.record.flashes").setLevel(logging.DEBUG)
    from phone.record.capture import default_reader

    read = default_reader()
    for video in args.videos:
        print(json.dumps({"video": str(video), "flashes": replay(video, read, args.fps)}, ensure_ascii=False),
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
