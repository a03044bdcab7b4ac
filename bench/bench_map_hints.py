"""Which app the maps send each goal to from the home screen, per language and wording,
with no model.

For every virtual-phone task that starts on the home screen and every wording of its goal
in each language, the task is set up on a fresh phone in that language and the explorer's
maps of that language (``bench/bench_app_map.py explore --maps FILE [--language de]``) are
asked what ``agent.knowledge.guided.GuidedPlanner`` asks them before the first step:
``MapGuide.hint(goal, start screen)``.  A hint that opens an app is taken without a model
call, so a wrong one costs the supervisor a rejection; no hint leaves the choice to the
model.  Printed per language and wording (0, the tuned one, apart from the others): how
many hints open the task's app, how many another app, how many goals get none; then every
wrong one.  Impossible tasks are left out (no app is right for them).  Nothing is
asserted; figures go to docs/results/ with the command.

    nice .venv/bin/python bench/bench_map_hints.py --maps-en .cache/maps-now.json --maps-de .cache/maps-de.json
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
from agent.types import ActionType
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
    tally: Counter[tuple[str, str, str]] = Counter()
    wrong: list[str] = []
    for lang, path in (("en", args.maps_en), ("de", args.maps_de)):
        if not path:
            continue
        guide = MapGuide([AppMap.from_data(d) for d in json.loads(Path(path).read_text(encoding="utf-8"))])
        for task in load_tasks():
            if task.impossible:
                continue
            for n, goal in enumerate(task.wordings(lang)):
                phone = VirtualPhone(seed=0, lang=lang)
                try:
                    task.setup(phone)
                    if phone.find_app(task.app) is None or phone.foreground()[0] == task.app:
                        break  # an app the phone lacks, or a task that starts inside its app
                    wanted = {phone.find_app(task.app).label.casefold()}  # type: ignore[union-attr]
                    wanted |= {name.casefold() for name, pkg in phone.installed_apps() if pkg == task.app}
                    shot = phone.screenshot(with_hierarchy=True)
                    hint = guide.hint(goal, parser.parse(shot), shot)
                finally:
                    phone.close()
                opens = hint.follow.app if hint is not None and hint.follow is not None \
                    and hint.follow.type is ActionType.OPEN_APP else None
                verdict = "none" if opens is None else "right" if opens.casefold() in wanted else "wrong"
                tally[(lang, "w0" if n == 0 else "w1+", verdict)] += 1
                if verdict == "wrong":
                    wrong.append(f"| {lang} w{n} | {task.id} | {goal} | {opens} | {hint.text if hint else ''} |")
    print("| language · wordings | the task's app | another app | no hint |\n|---|---|---|---|")
    for lang in ("en", "de"):
        for w in ("w0", "w1+"):
            if sum(tally[(lang, w, v)] for v in ("right", "wrong", "none")):
                print(f"| {lang} · {w} | {tally[(lang, w, 'right')]} | {tally[(lang, w, 'wrong')]} | "
                      f"{tally[(lang, w, 'none')]} |")
    print("\n| wording | task | goal | opens | hint |\n|---|---|---|---|---|")
    print("\n".join(wrong))


if __name__ == "__main__":
    main()
