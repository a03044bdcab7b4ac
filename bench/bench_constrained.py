"""Constrained against free replies: two `tapwise bench online` runs compared cell by cell.

Run the same tasks, seeds and planners twice into one results database, once with
``--constrained`` and once with ``--free``, then:

    python bench/bench_constrained.py --db RESULTS.db [--db MORE.db ...] --constrained RUN_A --free RUN_B

(several databases: runs made side by side, one database per server, read as one).

It prints, per mode and planner: episodes, success, partial completion, premature stops
(said "done" or "impossible" while the task was not done), unreadable
replies (not an action in the form asked for), episodes ended by the repeat rule, replies that named an element not on the
screen (from the planners' ``reply:`` evidence and the failed steps' messages) and
seconds per step; then a two-sided paired permutation test (``evaluation.stats``) of
success and of partial completion over the cells both runs finished.  Reads only.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterable
from typing import Any

from evaluation.metrics import STOP_REPEAT, EpisodeResult
from evaluation.results import ResultsDB
from evaluation.stats import paired_permutation_test

#: What counts as a reply naming an element that is not on the screen.
OFF_SCREEN = re.compile(r"names no element on this screen|there is no element|names an element a dialog covers|"
                        r"no element .* on this screen", re.I)


def partial(r: EpisodeResult) -> float:
    if r.success:
        return 1.0
    return r.checkpoints_reached / r.checkpoints_total if r.checkpoints_total else 0.0


UNREADABLE = re.compile(r"unreadable|not a valid action|outside the form|malformed|placeholder", re.I)


def unreadable_replies(r: EpisodeResult) -> int:
    """Replies that could not be read as an action in the form asked for: ``reply:`` entries
    saying so (re-asks, re-plans, structured replies read as free text) and failed steps
    whose message says so (counted once each, a lower bound)."""
    return _replies_saying(r, UNREADABLE)


def off_screen_replies(r: EpisodeResult) -> int:
    """Replies naming something that is not on the screen: each ``reply:`` entry that says
    so, and each failed step whose message says so (its replies are not kept otherwise)."""
    return _replies_saying(r, OFF_SCREEN)


def _replies_saying(r: EpisodeResult, pattern: re.Pattern[str]) -> int:
    """``reply:`` entries matching ``pattern``, plus each failed step whose message matches."""
    n = 0
    for rec in r.step_records:
        n += sum(1 for e in rec.get("replies") or () if pattern.search(e))
        if rec.get("error") and pattern.search(str(rec["error"])):
            n += 1
    return n


def summary(results: Iterable[EpisodeResult]) -> dict[str, Any]:
    rs = list(results)
    steps = sum(r.steps for r in rs)
    return {
        "episodes": len(rs),
        "success": sum(r.success for r in rs) / len(rs) if rs else 0.0,
        "partial": sum(partial(r) for r in rs) / len(rs) if rs else 0.0,
        "unparseable": sum(unreadable_replies(r) for r in rs),
        "premature": sum(r.premature_stop for r in rs) / len(rs) if rs else 0.0,
        "repeats": sum(r.stopped_by == STOP_REPEAT for r in rs),
        "off_screen": sum(off_screen_replies(r) for r in rs),
        "steps": steps,
        "s_per_step": sum(r.wall_s for r in rs) / steps if steps else 0.0,
    }


def key(r: EpisodeResult) -> tuple[str, str, int, str]:
    return (r.planner, r.task_id, r.seed, r.noise)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", required=True, action="append", help="results database (repeat to read several)")
    ap.add_argument("--constrained", required=True, help="run name of the --constrained run")
    ap.add_argument("--free", required=True, help="run name of the --free run")
    args = ap.parse_args(argv)
    runs: dict[str, list[EpisodeResult]] = {"constrained": [], "free": []}
    for path in args.db:
        with ResultsDB(path) as db:
            runs["constrained"] += db.results(args.constrained)
            runs["free"] += db.results(args.free)
    pairs = {key(r): r for r in runs["free"] if r.error is None}
    both = [(c, pairs[key(c)]) for c in runs["constrained"] if c.error is None and key(c) in pairs]
    planners = sorted({c.planner for c, _ in both})
    header = f"{'planner':<14}{'mode':<13}{'cells':>6}{'success':>9}{'partial':>9}{'prem.stop':>10}{'unparsed':>9}" \
             f"{'repeats':>8}{'off-screen':>11}{'steps':>7}{'s/step':>8}"
    print(header)
    for planner in planners:
        for mode, idx in (("constrained", 0), ("free", 1)):
            s = summary(p[idx] for p in both if p[0].planner == planner)
            print(f"{planner:<14}{mode:<13}{s['episodes']:>6}{100 * s['success']:>8.1f}%{100 * s['partial']:>8.1f}%"
                  f"{100 * s['premature']:>9.1f}%{s['unparseable']:>9}{s['repeats']:>8}{s['off_screen']:>11}{s['steps']:>7}{s['s_per_step']:>8.1f}")
    if not both:
        print("no cells finished in both runs")
        return
    only_c = sum(c.success and not f.success for c, f in both)
    only_f = sum(f.success and not c.success for c, f in both)
    print(f"discordant cells: {only_c} succeed only constrained, {only_f} only free "
          f"(of {len(both)} paired cells)")
    for name, fn in (("success", lambda r: float(r.success)), ("partial", partial)):
        test = paired_permutation_test([fn(c) for c, _ in both], [fn(f) for _, f in both])
        print(f"paired permutation test, {name} (constrained - free): {test.describe()}")
    for planner in planners:
        sub = [p for p in both if p[0].planner == planner]
        tasks = " ".join(f"{c.task_id}:{int(c.success)}{int(f.success)}" for c, f in sub)
        print(f"{planner} per task (constrained, free success): {tasks}")


if __name__ == "__main__":
    main()
