"""Where the goal names no element of an app's screen, which element does each ordering put
first: the step ranker's, the built-in model's likelihood ratio with the screen's names
listed, or the two combined? (issue 40; the agent does not use the ratio in apps: better
first choices here, more interventions in supervised runs — docs/results/generalization.md).

Every virtual-phone task's reference steps are replayed on a fresh phone, for every wording
of its goal in each language asked.  At each tap inside an app (not the home screen) where
no tappable element shares a word with the goal (the ranker's ``own`` feature is 0 for
all), the three orderings are compared with the reference step's element (the parsed
element under the reference target's centre).  Wording 0 is where the ordering was chosen;
the others are held out.  Resumable: rows already in ``--out`` (JSON lines) are skipped.

    flock /tmp/tapwise-llm.lock .venv/bin/python bench/bench_element_odds.py --languages en,de --out .cache/element-odds.jsonl

Nothing is asserted; figures go to docs/results/generalization.md with the command.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rich.console import Console

from agent.knowledge.app_choice import TURNS, AppOdds, _names_scored
from agent.knowledge.lexicon import Words
from agent.knowledge.ranker import StepRanker
from agent.knowledge.step_features import Move, step_view
from agent.llm.openai_client import OpenAIClient
from agent.screen_text import is_home
from app.cli.model import start_builtin
from phone.virtual.phone import VirtualPhone
from phone.virtual.tasks import StepError, load_tasks
from vision.config import PipelineConfig
from vision.pipeline import ScreenParser

ORDERS = ("ranker", "model", "both")
_SHOWN = "On my Android phone, the {app} app shows: {shown}.\nTo do this: {goal}. Which one do I tap?"
_NEUTRAL = "do something"


class ListedOdds:
    """Each listed name's log-probability as the first word of the answer to "which one do I
    tap?", above the same after a neutral task with the same list (its prior)."""

    def __init__(self, client: OpenAIClient, turns: str) -> None:
        self.client, self.turns = client, turns
        self.prior: dict[str, dict[str, float]] = {}

    def rank(self, goal: str, app: str, names: list[str]) -> AppOdds:
        shown = ", ".join(names)

        def ask(task: str) -> dict[str, float]:
            prompt = TURNS[self.turns].format(user=_SHOWN.format(app=app, shown=shown, goal=task), answer="Tap")
            return self.client.next_words(prompt, 100)[0]

        if shown not in self.prior:
            self.prior[shown] = ask(_NEUTRAL)
        words, prior = ask(goal.strip().rstrip(".!?")), self.prior[shown]
        said, before = _names_scored(words, names), _names_scored(prior, names)
        floor = min(prior.values(), default=0.0)
        return AppOdds(tuple(sorted(((n, said[n] - before.get(n, floor)) for n in names if n in said),
                                    key=lambda x: -x[1])))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--languages", default="en", help="comma-separated phone languages (en, de)")
    ap.add_argument("--model", default="qwen2.5-coder-0.5b", help="the built-in model")
    ap.add_argument("--out", type=Path, required=True, help="JSON lines, one per blind step (resumable)")
    args = ap.parse_args()
    done = {(r["lang"], r["task"], r["w"], r["k"]) for r in _rows(args.out)}
    server, bundled, url = start_builtin(Console(stderr=True), args.model)
    client = OpenAIClient(model=bundled.alias, base_url=url)
    chooser = ListedOdds(client, bundled.turns)
    parser, words = ScreenParser(PipelineConfig(mode="tree")), Words.load()
    ranker = StepRanker.shipped()
    if ranker is None:
        raise SystemExit("the shipped step ranker is missing (agent/knowledge/data/step_ranker.json)")
    try:
        with args.out.open("a", encoding="utf-8") as out:
            for lang in args.languages.split(","):
                for task in load_tasks():
                    if task.impossible:
                        continue
                    for n, goal in enumerate(task.wordings(lang)):
                        phone = VirtualPhone(seed=0, lang=lang)
                        try:
                            task.setup(phone)
                            for k, step in enumerate(task.reference_actions()):
                                if step.kind == "tap" and (lang, task.id, n, k) not in done:
                                    row = _blind_step(phone, step, goal, lang, chooser, parser, ranker, words)
                                    if row is not None:
                                        out.write(json.dumps({"lang": lang, "task": task.id, "w": n, "k": k, **row}) + "\n")
                                        out.flush()
                                step.execute(phone)
                        except StepError:
                            pass  # a reference step this phone cannot take: the rest of the task is left out
                        finally:
                            phone.close()
    finally:
        client.close()
        server.stop()
    _report(list(_rows(args.out)))


def _blind_step(phone: VirtualPhone, step, goal: str, lang: str, chooser: ListedOdds, parser: ScreenParser,
                ranker: StepRanker, words: Words) -> dict | None:
    package = phone.foreground()[0]
    if is_home(package):
        return None
    parse = parser.parse(phone.screenshot(with_hierarchy=True))
    centre = step.resolve(phone.ground_truth(), lang).rect.center
    ranked = ranker.rank(step_view(goal, parse, (), words=words, app_label=""))
    taps = [(c, p) for c, p in zip(ranked.candidates, ranked.probs, strict=True)
            if c.move is Move.TAP and c.element is not None and c.name]
    names = list(dict.fromkeys(c.name for c, _ in taps))
    right = {c.name for c, _ in taps if c.element.rect.contains(centre)}  # type: ignore[union-attr]
    if len(names) < 2 or not right or any(c.features.get("own", 0.0) > 0 for c, _ in taps):
        return None
    app = next((name for name, pkg in phone.installed_apps() if pkg == package), package)
    odds = dict(chooser.rank(goal, app, names).ranked)
    prob = {c.name: p for c, p in taps}
    least = min(odds.values(), default=0.0)
    firsts = {"ranker": names[0],
              "model": max(names, key=lambda nm: (nm in odds, odds.get(nm, 0.0), -names.index(nm))),
              "both": max(names, key=lambda nm: math.log(max(prob[nm], 1e-9)) + odds.get(nm, least))}
    return {"right": sorted(right), "names": len(names), **{o: firsts[o] in right for o in ORDERS}}


def _rows(path: Path):
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                yield json.loads(line)


def _report(rows: list[dict]) -> None:
    tally: Counter[tuple[str, ...]] = Counter()
    for r in rows:
        group = (r["lang"], "w0 (chosen here)" if r["w"] == 0 else "w1+ (held out)")
        tally[(*group, "n")] += 1
        for o in ORDERS:
            tally[(*group, o)] += bool(r[o])
    print("| language · wordings | blind steps | ranker first right | model's ratio first right | combined first right |")
    print("|---|---|---|---|---|")
    for group in sorted({(k[0], k[1]) for k in tally}):
        n = tally[(*group, "n")]
        print(f"| {group[0]} · {group[1]} | {n} | " + " | ".join(f"{tally[(*group, o)]}" for o in ORDERS) + " |")


if __name__ == "__main__":
    main()
