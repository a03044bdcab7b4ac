"""Offline step evaluation of the built-in model on recorded real-app trajectories.

Starts llama.cpp's server with a bundled GGUF (``app.builtin_model.server``, fixed port so a
rerun continues the same run), runs ``tapwise bench offline`` against it for each planner
with structured and free replies (paired on the same tasks), and prints the Markdown
summary (action accuracy, completion, per app, the kinds of wrong step, paired tests).
``--oracle`` runs the scripted gold oracle instead (no model; the sanity ceiling).
Results go into a results database, so an interrupted run continues (same ``--db``/``--run``).
A real-model run belongs under the shared LLM lock on a shared machine:

    flock /tmp/tapwise-llm.lock timeout 3000 nice .venv/bin/python bench/bench_offline.py \\
        ../shared/real-agent/droidtask-dev --planners visiontasker,zeroshot- \\
        --tasks applauncher/task1,camera/task1 --db runs/offline.sqlite

Figures are printed, never asserted; timings depend on the machine's load.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.builtin_model.catalog import MODELS, by_alias, default_model
from app.builtin_model.server import BuiltinServer, ServerOptions
from evaluation.offline.summary import markdown
from evaluation.results import ResultsDB


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dataset", nargs="?", default=str(Path(__file__).resolve().parents[2] / "shared/real-agent/droidtask-dev"))
    ap.add_argument("--planners", default="visiontasker,zeroshot-")
    ap.add_argument("--model", default="", help="built-in model alias (default: the default built-in model)")
    ap.add_argument("--oracle", action="store_true", help="the scripted gold oracle instead of a model")
    ap.add_argument("--tasks", default="", help="task ids or app names to keep (comma-separated)")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--db", default="runs/offline.sqlite")
    ap.add_argument("--run", default="")
    ap.add_argument("--ctx", type=int, default=8192)
    ap.add_argument("--out", default="", help="also write the report into this folder")
    ap.add_argument("--replies", choices=["both", "structured", "free"], default="both")
    ap.add_argument("--no-evidence", action="store_true", help="the bare planners, without the screen's evidence "
                    "for the goal that the window's runs plan with (agent.knowledge.focus)")
    ap.add_argument("--folds", choices=["none", "app"], default="none",
                    help="'app': also replay each app's tasks with the evidence fitted on the other apps")
    ap.add_argument("--keep-small", type=int, default=-1, help="elements offered to a built-in model (default: the policy's)")
    args = ap.parse_args()
    tapwise = str(Path(sys.executable).with_name("tapwise"))
    replies = {"both": ["--both-replies"], "structured": ["--constrained"], "free": ["--free"]}[args.replies]
    common = [args.dataset, "--planners", args.planners, *replies, "--db", args.db,
              "--no-evidence" if args.no_evidence else "--evidence"]
    if args.tasks:
        common += ["--tasks", args.tasks]
    if args.limit:
        common += ["--limit", str(args.limit)]
    if args.out:
        common += ["--out", args.out]
    if args.folds != "none":
        common += ["--folds", args.folds]
    if args.keep_small >= 0:
        common += ["--keep-small", str(args.keep_small)]
    server = None
    if args.oracle:
        run = args.run or "offline-oracle"
        cmd = [tapwise, "bench", "offline", *common, "--oracle", "--run", run]
    else:
        model = by_alias(args.model) if args.model else default_model()
        run = args.run or f"offline-{model.alias}"
        server = BuiltinServer(model, ServerOptions(port=18500 + [m.alias for m in MODELS].index(model.alias),
                                                    n_ctx=args.ctx))
        print(f"# {model.alias}: starting the server", file=sys.stderr, flush=True)
        url = server.start(lambda p: None)
        cmd = [tapwise, "bench", "offline", *common, "--model", model.alias, "--base-url", url, "--backend", "openai",
               "--timeout-s", "300", "--run", run]
    print("# tapwise " + " ".join(cmd[1:]), file=sys.stderr, flush=True)
    try:
        subprocess.run(cmd, check=False)
    finally:
        if server is not None:
            server.stop()
    with ResultsDB(args.db) as store:
        print(markdown(store.results(run), f"run {run}"))


if __name__ == "__main__":
    main()
