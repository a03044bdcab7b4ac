"""The built-in models on the yardstick: for each bundled GGUF, start llama.cpp's server
(``app.builtin_model.server``), run ``tapwise bench online --tasks yardstick`` against it, and print
one table row per model × planner: success, partial completion, premature stop,
unparseable replies per step and seconds per step.  Results go into a results database,
so an interrupted run continues where it stopped (same ``--db``).

    nice .venv/bin/python bench/bench_builtin_models.py \\
        [--models qwen2.5-coder-0.5b,gemma-3-270m,smollm2-135m] \\
        [--planners zeroshot-,visiontasker] [--max-steps 6] [--db /tmp/yardstick.sqlite]

Only the table is printed (markdown); timings are figures to read, never asserted.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.builtin_model.catalog import MODELS, by_alias
from app.builtin_model.server import BuiltinServer, ServerOptions
from evaluation.metrics import summarise
from evaluation.results import ResultsDB


def run_model(alias: str, planners: str, tasks: str, max_steps: int, db: Path, ctx: int, extra: list[str]) -> None:
    model = by_alias(alias)
    # a fixed port per model: the server URL is part of a run's settings, so a rerun continues the run
    port = 18400 + [m.alias for m in MODELS].index(alias)
    server = BuiltinServer(model, ServerOptions(port=port, n_ctx=ctx))
    print(f"# {alias}: starting the server", file=sys.stderr, flush=True)
    url = server.start(lambda p: None)
    try:
        cmd = [str(Path(sys.executable).with_name("tapwise")), "bench", "online", "--planners", planners, "--tasks", tasks,
               "--model", alias, "--base-url", url, "--backend", "openai", "--max-steps", str(max_steps),
               "--db", str(db), "--run", f"yardstick-{alias}", "--timeout-s", "300", *extra]
        print("# tapwise " + " ".join(cmd[1:]), file=sys.stderr, flush=True)
        subprocess.run(cmd, check=False)
    finally:
        server.stop()


def table(db: Path, aliases: list[str]) -> str:
    lines = ["| model | planner | episodes | success | partial | premature stop | unparseable / step | steps | s / step |",
             "|---|---|---|---|---|---|---|---|---|"]
    with ResultsDB(db) as store:
        for alias in aliases:
            results = store.results(f"yardstick-{alias}")
            if not results:
                continue
            for planner, s in summarise(results).items():
                rs = [r for r in results if r.planner == planner]
                steps = max(1, sum(r.steps for r in rs))
                unparseable = sum(r.unparseable_replies for r in rs) / steps
                lines.append(
                    f"| {alias} | {planner} | {s.n} | {s.success.estimate:.0%} | {s.partial.estimate:.0%} | "
                    f"{s.premature_stop.estimate:.0%} | {unparseable:.2f} | {s.mean_steps:.1f} | {s.wall_s_per_step:.1f} |"
                )
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default=",".join(m.alias for m in MODELS))
    ap.add_argument("--planners", default="zeroshot-,visiontasker")
    ap.add_argument("--tasks", default="yardstick")
    ap.add_argument("--max-steps", type=int, default=6)
    ap.add_argument("--ctx", type=int, default=4096)
    ap.add_argument("--db", type=Path, default=Path("/tmp/tapwise-yardstick.sqlite"))
    ap.add_argument("--table-only", action="store_true", help="Print the table from --db without running.")
    args, extra = ap.parse_known_args()
    aliases = [a.strip() for a in args.models.split(",") if a.strip()]
    if not args.table_only:
        for alias in aliases:
            run_model(alias, args.planners, args.tasks, args.max_steps, args.db, args.ctx, extra)
    print(table(args.db, aliases))


if __name__ == "__main__":
    main()
