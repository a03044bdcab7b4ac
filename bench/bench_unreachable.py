"""The maps' "impossible" answer per wording and language (issue 40, part 3), with no model.

For every virtual-phone task and every wording of its goal in each language, the task is
set up on a fresh phone in that language and the explorer's maps of that language
(``bench/bench_app_map.py explore --maps FILE [--language de]``) are asked what
``agent.knowledge.guided.GuidedPlanner`` asks them before the first step:
``MapGuide.unreachable(goal, start screen)`` — the words naming what the goal is about
that no mapped screen shows.  When it names any, a small model's run answers "impossible"
at once.  Printed per language and wording (0, the tuned one, apart from the others):
how many impossible tasks it catches and how many possible ones it wrongly calls
impossible, then every wrong call with the words it looked for.

This is the start screen only: a run asks again on every screen (a word the screen shows
stops it) and never again once the user turned "impossible" down, so a wrong call costs
one intervention.  Nothing is asserted; figures go to docs/results/ with the command.

    nice .venv/bin/python bench/bench_unreachable.py --maps-en runs/maps-en.json --maps-de runs/maps-de.json
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent.knowledge.app_map import AppMap
from agent.knowledge.guide import MapGuide
from phone.virtual.phone import VirtualPhone
from phone.virtual.tasks import load_tasks
from vision.config import PipelineConfig
from vision.pipeline import ScreenParser


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--maps-en", required=True, help="the English maps (JSON, as bench_app_map.py explore writes)")
    ap.add_argument("--maps-de", default="", help="the German maps; German goals are left out without them")
    args = ap.parse_args()
    parser = ScreenParser(PipelineConfig(mode="tree"))
    tasks = load_tasks()
    tally: Counter[tuple[str, str, str, str]] = Counter()
    wrong: list[str] = []
    for lang, path in (("en", args.maps_en), ("de", args.maps_de)):
        if not path:
            continue
        guide = MapGuide([AppMap.from_data(d) for d in json.loads(Path(path).read_text(encoding="utf-8"))])
        for task in tasks:
            for n, goal in enumerate(task.wordings(lang)):
                phone = VirtualPhone(seed=0, lang=lang)
                try:
                    task.setup(phone)
                    missing = guide.unreachable(goal, parser.parse(phone.screenshot(with_hierarchy=True)))
                finally:
                    phone.close()
                key = (lang, "w0" if n == 0 else "w1+", "impossible" if task.impossible else "possible")
                tally[(*key, "n")] += 1
                tally[(*key, "said")] += bool(missing)
                if missing and not task.impossible:
                    wrong.append(f"| {lang} w{n} | {task.id} | {goal} | {', '.join(missing)} |")
    print("| language · wordings | impossible tasks caught | possible tasks called impossible |\n|---|---|---|")
    for lang in ("en", "de"):
        for w in ("w0", "w1+"):
            if tally[(lang, w, "possible", "n")]:
                print(f"| {lang} · {w}{' (tuned)' if (lang, w) == ('en', 'w0') else ''} | "
                      f"{tally[(lang, w, 'impossible', 'said')]} / {tally[(lang, w, 'impossible', 'n')]} | "
                      f"{tally[(lang, w, 'possible', 'said')]} / {tally[(lang, w, 'possible', 'n')]} |")
    print("\n| wording | task | goal | words no mapped screen shows |\n|---|---|---|---|")
    print("\n".join(wrong))


if __name__ == "__main__":
    main()
