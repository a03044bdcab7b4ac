"""Does a stored demonstration raise success?  Paired runs on the yardstick with a real model.

The knowledge store is filled with demonstrations of every built-in task *outside* the
yardstick (their reference solutions, in words, as ``TaskRecord``s).  For each yardstick
task the task repository retrieves the most similar demonstration (the product's own
retrieval); the task is then run twice on a fresh virtual phone with the same planner
and model: without examples, and with the retrieved demonstration as the planner's
example.  Printed: per task the retrieved demonstration and both outcomes, then the
paired counts (both / only with / only without / neither) and an exact sign test.

    nice .venv/bin/python bench/bench_demonstration.py --model smollm2-135m \\
        [--planner visiontasker] [--max-steps 6] [--tasks yardstick] [--constrained]

``--constrained`` asks for structured replies (the per-screen JSON schema, installed
apps included), as the product does with a server that enforces schemas.

With ``--base-url`` it uses that server; otherwise it starts the built-in model named by
``--model`` (see ``tapwise llm list``).  Timings are not the point here; nothing is asserted.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent.events import Executed, Finished, RunSettings
from agent.knowledge.repository import TaskRepository
from agent.knowledge.retrieval import LexicalScorer
from agent.knowledge.store import MemoryStore
from agent.knowledge.types import TaskRecord
from agent.llm import RetryPolicy, make_client
from agent.planners import make_planner
from agent.runner import drive, run_episode
from agent.types import Decision, DecisionKind
from evaluation import compose
from evaluation import online_bench as bench_online
from phone.virtual.phone import VirtualPhone
from phone.virtual.tasks import load_tasks
from vision.pipeline import PipelineConfig, ScreenParser


def step_words(step) -> str:  # type: ignore[no-untyped-def]
    """A reference step the way a person would write it down."""
    if step.target:
        t = step.target
        name = t.get("text") or t.get("desc") or t.get("contains") or t.get("near") or t.get("id")
        return f"{'long-press' if step.kind == 'long_press' else 'tap'} {name}"
    return {"open_app": f"open {step.app}", "type": f"type '{step.text}'", "back": "go back", "home": "go home",
            "enter": "press enter", "complete": "task complete", "impossible": "task impossible"}.get(
        step.kind, f"{'scroll' if step.kind == 'scroll' else 'swipe'} {step.direction}")


def demonstration_store(exclude: set[str]) -> TaskRepository:
    repo = TaskRepository(MemoryStore(), LexicalScorer())
    for t in load_tasks():
        if t.id not in exclude:
            repo.add(TaskRecord(goal=t.goal, steps=tuple(step_words(s) for s in t.solution), app=t.app,
                                source="demonstration"))
    return repo


def run_once(task, client, planner_name: str, max_steps: int, examples: tuple[str, ...],  # type: ignore[no-untyped-def]
             constrained: bool = False) -> tuple[bool, int]:
    phone = VirtualPhone(seed=0)
    try:
        task.setup(phone)
        planner = make_planner(planner_name, client, constrained=constrained, apps=compose.app_names(phone))
        settings = RunSettings(mode="auto", max_steps=max_steps, max_wait_s=0.0, examples=examples)
        final = None
        steps = 0
        for ev in drive(run_episode(task.goal, phone, ScreenParser(PipelineConfig(mode="tree")), planner, None,
                                    settings=settings), lambda ev: Decision(DecisionKind.APPROVE)):
            if isinstance(ev, Executed) and ev.action.is_terminal:
                final = ev.action
            if isinstance(ev, Finished):
                steps = len(ev.episode.steps)
        return bool(task.is_success(phone, final)), steps
    finally:
        phone.close()


def sign_test(only_with: int, only_without: int) -> float:
    """Two-sided exact sign test p-value on the discordant pairs."""
    n = only_with + only_without
    if n == 0:
        return 1.0
    k = min(only_with, only_without)
    p = sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n
    return min(1.0, 2 * p)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="smollm2-135m")
    ap.add_argument("--base-url", default="")
    ap.add_argument("--planner", default="visiontasker")
    ap.add_argument("--tasks", default="yardstick")
    ap.add_argument("--max-steps", type=int, default=6)
    ap.add_argument("--constrained", action="store_true", help="structured replies (per-screen JSON schema)")
    args = ap.parse_args()
    ids, _ = bench_online.select_tasks(args.tasks)
    tasks = [bench_online.find_task(args.tasks, i) for i in ids]
    yardstick, _ = bench_online.select_tasks("yardstick")
    repo = demonstration_store(set(ids) | set(yardstick))  # never the task itself, nor another yardstick task
    server = None
    url = args.base_url
    if not url:
        from app.builtin_model.catalog import by_alias
        from app.builtin_model.server import BuiltinServer, ServerOptions

        server = BuiltinServer(by_alias(args.model), ServerOptions(n_ctx=4096))
        url = server.start()
    client = make_client("openai", args.model, url, policy=RetryPolicy(attempts=2, backoff_s=0.5, timeout_s=300))
    pairs = []
    t0 = time.perf_counter()
    try:
        for task in tasks:
            examples = repo.example_lines(task.goal, k=1)
            without = run_once(task, client, args.planner, args.max_steps, (), args.constrained)
            with_demo = (run_once(task, client, args.planner, args.max_steps, examples, args.constrained)
                         if examples else None)
            pairs.append((task.id, examples, without, with_demo))
            shown = examples[0][:90] if examples else "(nothing similar retrieved)"
            print(f"{task.id}: without {'OK' if without[0] else 'fail'} ({without[1]} steps); "
                  f"with {'-' if with_demo is None else ('OK' if with_demo[0] else 'fail')}; demo: {shown}", flush=True)
    finally:
        if server is not None:
            server.stop()
    paired = [(w[0], d[0]) for _, _, w, d in pairs if d is not None]
    both = sum(a and b for a, b in paired)
    only_with = sum(b and not a for a, b in paired)
    only_without = sum(a and not b for a, b in paired)
    neither = sum(not a and not b for a, b in paired)
    print(f"\nmodel {args.model}, planner {args.planner}{' (constrained)' if args.constrained else ''}, max {args.max_steps} steps, {len(tasks)} tasks, "
          f"{len(paired)} with a retrieved demonstration, {time.perf_counter() - t0:.0f} s")
    print(f"success without: {sum(a for a, _ in paired)}/{len(paired)}; with: {sum(b for _, b in paired)}/{len(paired)}")
    print(f"pairs: both {both}, only with demonstration {only_with}, only without {only_without}, neither {neither}; "
          f"sign test p = {sign_test(only_with, only_without):.2f}")


if __name__ == "__main__":
    main()
