"""Fit the step ranker the window plans with, from recorded real-app trajectories.

    .venv/bin/python scripts/train_evidence.py ../shared/real-agent/droidtask-dev

Reads every DroidTask task under the folder, describes each recorded step's candidates,
chooses the policy (when the ranker acts alone, when "complete" is withheld, how much of
the ranking the model is offered) on leave-one-app-out predictions, fits the weights on
every app, and writes ``agent/knowledge/data/step_ranker.json`` (or ``--out``) with the
held-out figures and this command in its ``meta``.  Prints the held-out figures.  The
same command on the same data rebuilds the same file.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent.knowledge.ranker import L2
from agent.knowledge.ranker_train import train
from evaluation.offline.datasets import load_dataset
from evaluation.offline.evidence_data import examples, judge

DEFAULT_OUT = Path(__file__).resolve().parents[1] / "agent/knowledge/data/step_ranker.json"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dataset", help="a folder of DroidTask apps (<app>/task*.yaml)")
    ap.add_argument("--out", default=str(DEFAULT_OUT))
    ap.add_argument("--l2", type=float, default=L2, help="L2 penalty of the fit")
    args = ap.parse_args()
    t0 = time.time()
    _kind, tasks, problems = load_dataset(args.dataset, "droidtask")
    for src, msg in problems:
        print(f"skipped {src}: {msg}", file=sys.stderr)
    data = examples(tasks)
    print(f"{len(data)} recorded steps from {len(tasks)} tasks of {len({e.group for e in data})} apps "
          f"({time.time() - t0:.0f} s)", file=sys.stderr)
    ranker = train(data, l2=args.l2, judge=judge,
                   on_fold=lambda g: print(f"  held out: {g}", file=sys.stderr, flush=True))
    dataset = Path(args.dataset)
    ranker.meta["command"] = f"scripts/train_evidence.py {dataset.parent.name}/{dataset.name}" + \
        (f" --l2 {args.l2}" if args.l2 != L2 else "")
    ranker.save(args.out)
    print(json.dumps({"policy": ranker.to_data()["policy"], "held_out": ranker.meta["held_out"]}, indent=1))
    print(f"wrote {args.out} ({time.time() - t0:.0f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
