"""When are two goals the same task? The decision memory's equivalence (``agent.memory.goals``)
judged on the virtual phone's task wordings, leaving one app out at a time.

Every pair of goal wordings of the task files is a case: the same task worded twice (it
should be equivalent) or two different tasks (it must not be: the memory would propose
the other task's steps).  For each app, the rating from which goals are equivalent is
chosen on the other apps' pairs — the lowest on a grid that makes no false equivalence
there — and scored on the pairs that involve the left-out app.  Printed: per fold the
chosen rating, the held-out false equivalences and the share of same-task pairs found;
pooled over the folds; and the same for the shipped ``EQUIVALENT``.

    python bench/bench_memory.py goals [--language en]

``judge`` asks the model (``agent.memory.same_task.SameTask``, as a run does on its first
screen) for every other wording of the yardstick's tasks which of the yardstick's first
wordings it is, and for tasks that were never taught (the other tasks of the same apps)
whether it is any of them: right, wrong (another task: the memory would propose its
steps, and the user would reject them), missed, and false alarms on the untaught ones.

    python bench/bench_memory.py judge --builtin qwen2.5-coder-0.5b
"""

from __future__ import annotations

import argparse
import sys
from itertools import combinations
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from agent.memory.goals import EQUIVALENT, contradicts, rating

GRID = tuple(round(0.5 + 0.05 * i, 2) for i in range(10))


def pairs(language: str) -> list[tuple[str, str, bool, float]]:
    """(app a, app b, same task?, rating or -1 when the goals contradict) for every pair of wordings."""
    from phone.virtual.tasks import load_tasks

    goals = []
    for t in load_tasks():
        wordings = getattr(t, "goals_in", None)
        said = wordings(language) if callable(wordings) else (t.goals if language == "en" else ())
        goals += [(t.id, t.app, g) for g in said]
    out = []
    for (ta, aa, ga), (tb, ab, gb) in combinations(goals, 2):
        r = -1.0 if contradicts(ga, gb) else rating(ga, gb)
        out.append((aa, ab, ta == tb, r))
    return out


def score(cases: list[tuple[str, str, bool, float]], at: float) -> tuple[int, int, int, int]:
    """(false equivalences, different-task pairs, same-task pairs found, same-task pairs)."""
    false = sum(1 for *_, same, r in cases if not same and r >= at)
    different = sum(1 for *_, same, _ in cases if not same)
    found = sum(1 for *_, same, r in cases if same and r >= at)
    same_pairs = sum(1 for *_, same, _ in cases if same)
    return false, different, found, same_pairs


def goals(language: str) -> None:
    cases = pairs(language)
    apps = sorted({a for a, *_ in cases} | {b for _, b, *_ in cases})
    print(f"{len(cases)} pairs of {language} goal wordings, {sum(c[2] for c in cases)} of them the same task; "
          f"{len(apps)} apps")
    print("left-out app | rating chosen on the others | held-out false equivalences | held-out same-task found")
    pooled = [0, 0, 0, 0]
    for app in apps:
        train = [c for c in cases if app not in (c[0], c[1])]
        test = [c for c in cases if app in (c[0], c[1])]
        at = next((g for g in GRID if score(train, g)[0] == 0), GRID[-1])
        f, d, s, n = score(test, at)
        pooled = [pooled[0] + f, pooled[1] + d, pooled[2] + s, pooled[3] + n]
        print(f"{app} | {at:.2f} | {f} of {d} | {s} of {n}")
    print(f"pooled held-out: false equivalences {pooled[0]} of {pooled[1]}, same task found {pooled[2]} of {pooled[3]}")
    f, d, s, n = score(cases, EQUIVALENT)
    print(f"shipped EQUIVALENT {EQUIVALENT:.2f} on all pairs: false equivalences {f} of {d}, same task found {s} of {n}")


def judge(args: argparse.Namespace) -> None:
    import random

    from bench_heal import client_for

    from agent.memory.same_task import SameTask
    from phone.virtual.task_sets import TASK_SETS
    from phone.virtual.tasks import load_tasks

    tasks = {t.id: t for t in load_tasks()}
    yardstick = [tasks[i] for i in TASK_SETS["yardstick"]]
    taught = [t.goals[0] for t in yardstick]
    apps = {t.app for t in yardstick}
    queries = [(g, t.goals[0]) for t in yardstick for g in t.goals[1:]]
    others = [t for t in tasks.values() if t.app in apps and t.id not in TASK_SETS["yardstick"]]
    random.Random(0).shuffle(others)
    queries += [(t.goals[0], None) for t in others[:args.untaught]]
    client, stop = client_for(args)
    if client is None:
        print("the judge is a model: give --builtin, --base-url or --scripted")
        return
    judge = SameTask(client)
    counts = {"right": 0, "wrong": 0, "missed": 0, "false alarm": 0, "quiet": 0}
    try:
        for query, want in queries:
            picked, calls = judge.pick(query, taught)
            verdict = ("right" if picked == want else "missed" if picked is None else "wrong") if want is not None \
                else ("quiet" if picked is None else "false alarm")
            counts[verdict] += 1
            print(f"{verdict:11} {query!r} -> {picked!r}" + (f" (taught as {want!r})" if want else ""), flush=True)
    finally:
        stop()
    taught_n = sum(1 for _, w in queries if w is not None)
    print(f"taught in other words: {counts['right']} right, {counts['wrong']} wrong, {counts['missed']} missed of "
          f"{taught_n}; never taught: {counts['false alarm']} false alarms, {counts['quiet']} rightly none of "
          f"{len(queries) - taught_n}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="what", required=True)
    g = sub.add_parser("goals", help="goal equivalence, one app left out at a time")
    g.add_argument("--language", default="en")
    j = sub.add_parser("judge", help="the model as the judge of 'the same task in other words'")
    j.add_argument("--builtin", default="")
    j.add_argument("--base-url", default="")
    j.add_argument("--backend", default="openai")
    j.add_argument("--model", default="")
    j.add_argument("--no-model", action="store_true")
    j.add_argument("--scripted", action="store_true", help=argparse.SUPPRESS)  # bench_heal's client options
    j.add_argument("--untaught", type=int, default=12, help="how many never-taught tasks to ask about")
    args = ap.parse_args(argv)
    if args.what == "goals":
        goals(args.language)
    else:
        judge(args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
