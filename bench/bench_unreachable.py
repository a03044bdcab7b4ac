"""What the maps say about each goal on its start screen, per wording and language, with no
model (issue 40): the maps' "impossible" answer, or (``--hints``) which app they open.

For every virtual-phone task and every wording of its goal in each language, the task is
set up on a fresh phone in that language and the explorer's maps of that language
(``bench/bench_app_map.py explore --maps FILE [--language de]``) are asked what
``agent.knowledge.guided.GuidedPlanner`` asks them before the first step:

* ``MapGuide.unreachable(goal, start screen)`` — the words naming what the goal is about
  that no mapped screen shows.  When it names any, the model is told so.  Printed per
  language and wording (0, the tuned one, apart from the others): how many impossible
  tasks it catches and how many possible ones it wrongly calls impossible, then every
  wrong call with the words it looked for.  This is the start screen only: a run asks
  again on every screen and never again once the user turned "impossible" down.
* with ``--in-app``, ``MapGuide.not_offered(goal, screen, app)`` on the first screen of
  each mapped app the goal names (where a run that opened it stands): inside the app the
  goal names, a small model's run proposes "impossible" on it.
* with ``--hints``, ``MapGuide.hint(goal, start screen)`` on the home screen — a hint that
  opens an app is taken without a model call, so a wrong one costs the supervisor a
  rejection and none leaves the choice to the model.  Printed: how many hints open the
  task's app, another app, none; then every wrong one.  Impossible tasks, tasks that start
  inside their app and apps the phone lacks are left out.

Nothing is asserted; figures go to docs/results/ with the command.

    nice .venv/bin/python bench/bench_unreachable.py --maps-en runs/maps-en.json --maps-de runs/maps-de.json [--hints | --in-app]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent.knowledge.app_map import AppMap
from agent.knowledge.guide import Hint, MapGuide
from agent.types import ActionType
from phone.virtual.phone import VirtualPhone
from phone.virtual.tasks import load_tasks
from vision.config import PipelineConfig
from vision.pipeline import ScreenParser

_GROUPS = (("en", "w0"), ("en", "w1+"), ("de", "w0"), ("de", "w1+"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--maps-en", required=True, help="the English maps (JSON, as bench_app_map.py explore writes)")
    ap.add_argument("--maps-de", default="", help="the German maps; German goals are left out without them")
    ap.add_argument("--hints", action="store_true", help="which app the maps open from the home screen instead")
    ap.add_argument("--in-app", action="store_true",
                    help="the verdict inside each mapped app the goal names (MapGuide.not_offered), not on the start screen")
    args = ap.parse_args()
    parser = ScreenParser(PipelineConfig(mode="tree"))
    tasks = load_tasks()
    tally: Counter[tuple[str, ...]] = Counter()
    wrong: list[str] = []
    for lang, path in (("en", args.maps_en), ("de", args.maps_de)):
        if not path:
            continue
        guide = MapGuide([AppMap.from_data(d) for d in json.loads(Path(path).read_text(encoding="utf-8"))])
        for task in tasks:
            if args.hints and task.impossible:
                continue  # no app is right for them
            for n, goal in enumerate(task.wordings(lang)):
                group = (lang, "w0" if n == 0 else "w1+")
                phone = VirtualPhone(seed=0, lang=lang)
                try:
                    task.setup(phone)
                    if args.hints:
                        app = phone.find_app(task.app)
                        if app is None or phone.foreground()[0] == task.app:
                            break  # an app the phone lacks, or a task that starts inside its app
                        wanted = {app.label.casefold()} | {name.casefold() for name, pkg in phone.installed_apps()
                                                           if pkg == task.app}
                        shot = phone.screenshot(with_hierarchy=True)
                        hint = guide.hint(goal, parser.parse(shot), shot)
                        _tally_hint(tally, wrong, group, wanted, hint, f"{lang} w{n} | {task.id} | {goal}")
                        continue
                    if args.in_app:
                        missing = _in_named_apps(guide, parser, phone, goal)
                    else:
                        missing = guide.unreachable(goal, parser.parse(phone.screenshot(with_hierarchy=True)))
                finally:
                    phone.close()
                kind = "impossible" if task.impossible else "possible"
                tally[(*group, kind, "n")] += 1
                tally[(*group, kind, "said")] += bool(missing)
                if missing and not task.impossible:
                    wrong.append(f"| {lang} w{n} | {task.id} | {goal} | {', '.join(missing)} |")
    if args.hints:
        print("| language · wordings | the task's app | another app | no hint |\n|---|---|---|---|")
        for g in _GROUPS:
            if sum(tally[(*g, v)] for v in ("right", "wrong", "none")):
                print(f"| {g[0]} · {g[1]} | {tally[(*g, 'right')]} | {tally[(*g, 'wrong')]} | {tally[(*g, 'none')]} |")
        print("\n| wording | task | goal | opens | hint |\n|---|---|---|---|---|")
    else:
        print("| language · wordings | impossible tasks caught | possible tasks called impossible |\n|---|---|---|")
        for g in _GROUPS:
            if tally[(*g, "possible", "n")]:
                print(f"| {g[0]} · {g[1]}{' (tuned)' if g == ('en', 'w0') else ''} | "
                      f"{tally[(*g, 'impossible', 'said')]} / {tally[(*g, 'impossible', 'n')]} | "
                      f"{tally[(*g, 'possible', 'said')]} / {tally[(*g, 'possible', 'n')]} |")
        print("\n| wording | task | goal | words no mapped screen shows |\n|---|---|---|---|")
    print("\n".join(wrong))


def _in_named_apps(guide: MapGuide, parser: ScreenParser, phone: VirtualPhone, goal: str) -> list[str]:
    """``not_offered``'s words on the first screen of each mapped app the goal names, as a run
    that opened it would see it; [] when the goal names none, or every one offers it."""
    for package in guide.maps:
        if phone.find_app(package) is None:
            continue
        phone.launch(package)
        shot = phone.screenshot(with_hierarchy=True)
        label = next((name for name, pkg in phone.installed_apps() if pkg == package), "")  # the phone's name
        _app, missing = guide.not_offered(goal, parser.parse(shot), shot.foreground_package or package, label)
        if missing:
            return missing
    return []


def _tally_hint(tally: Counter[tuple[str, ...]], wrong: list[str], group: tuple[str, str], wanted: set[str],
                hint: Hint | None, where: str) -> None:
    follow = hint.follow if hint is not None else None
    opens = follow.app if follow is not None and follow.type is ActionType.OPEN_APP else None
    verdict = "none" if opens is None else "right" if opens.casefold() in wanted else "wrong"
    tally[(*group, verdict)] += 1
    if verdict == "wrong":
        wrong.append(f"| {where} | {opens} | {hint.text if hint is not None else ''} |")


if __name__ == "__main__":
    main()
