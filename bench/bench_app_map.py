"""App maps (issue 29): explore every virtual-phone app, then run tasks with and without the maps.

``explore``: each app of the virtual phone is explored once (``agent.knowledge.explore``)
on a fresh phone with the given budget; printed per app: the app's own pages
(``App.all_pages``) and how many the exploration reached (the phone's ``visited``
marks), the map's screens and transitions, elements tried / not tried and why, the
sensitive actions performed (every executed tap is judged again by the safety guard on
the screen it was made on; and the phone's data is compared before and after: notes,
contacts, messages sent, orders, files, events that disappeared or appeared), steps
and seconds.  The maps are written to ``--maps FILE`` (JSON) for the paired runs.

    nice .venv/bin/python bench/bench_app_map.py explore --steps 400 --maps /tmp/maps.json

``paired``: each task runs twice in the online benchmark's own cell
(``evaluation.online_bench.run_cell``: fresh phone, every proposal approved, the phone's
oracle), same planner, model, seed and step budget — without the map and with the
planner wrapped in ``agent.knowledge.guided.GuidedPlanner`` over the maps.  The arm
without the map is, by default, the window's runner on a phone with no explored app
(``GuidedPlanner`` over no map: the screen's own evidence only), so the map is the only
difference between the arms; ``--without plain`` runs the bare planner instead.  Printed per task: success, checkpoints,
steps, seconds both ways and the first hint given; then success / partial / steps per
solved task / seconds per task, the paired counts and an exact sign test.  ``--out FILE``
keeps each task's result as it finishes (JSON lines), and a run started again with the same
file goes on where the last one stopped.  ``--oracle``
uses a scripted model that replays the task's reference solution (a model that already
knows the way: the map must not add steps), free-text replies.

    flock /tmp/tapwise-llm.lock timeout 3000 nice .venv/bin/python bench/bench_app_map.py paired \\
        --maps /tmp/maps.json --tasks yardstick --model qwen2.5-coder-0.5b --constrained
    nice .venv/bin/python bench/bench_app_map.py paired --maps /tmp/maps.json --tasks yardstick --oracle

``--language de`` explores (or runs) the phone in German; ``paired --wording 0,1,2`` (or
``all``) runs each task once per wording of its goal (German goals with ``--language de``;
a task without them is skipped with a message), each cell named ``task [de w1]``.

Nothing is asserted; figures go to docs/results/ with the command that made them.
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent.device import Device
from agent.knowledge.app_map import AppMap
from agent.knowledge.explore import ExploreBudget, Explorer
from agent.knowledge.guide import MapGuide
from agent.knowledge.guided import GuidedPlanner
from agent.safety import assess
from agent.types import Action, ActionType, Target
from phone.virtual.localise import local_target, local_words
from vision.config import PipelineConfig
from vision.geometry import Point
from vision.pipeline import ScreenParser

PARSER = ScreenParser(PipelineConfig(mode="tree", ocr="none", detector="none", icons="none"))


# ---- explore ------------------------------------------------------------------------------


class AuditedPhone:
    """The phone, with every tap judged again by the safety guard on the screen it lands on."""

    def __init__(self, phone: Any) -> None:
        self.phone = phone
        self.sensitive: list[str] = []
        self.taps = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.phone, name)

    def tap(self, x: int, y: int) -> None:
        shot = self.phone.screenshot(with_hierarchy=True)
        parse = PARSER.parse(shot)
        hit = [e for e in parse.elements if e.rect.contains(Point(x, y)) and (e.clickable or e.checkable)]
        hit.sort(key=lambda e: e.rect.width * e.rect.height)
        if hit:
            verdict = assess(Action(ActionType.TAP, target=Target(element_id=hit[0].id)), parse,
                             shot.foreground_package)
            if verdict.sensitive:
                self.sensitive.append(verdict.reason)
        self.taps += 1
        self.phone.tap(x, y)


def data_changes(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """Lists in the apps' data that lost or gained items (deleting, sending, paying leave such marks)."""
    out = []
    for app, slice_ in before.items():
        if app == "ui" or not isinstance(slice_, dict):
            continue
        for key, value in slice_.items():
            new = after.get(app, {}).get(key)
            if isinstance(value, list) and isinstance(new, list) and len(new) != len(value):
                out.append(f"{app}.{key}: {len(value)} -> {len(new)}")
    return out


def explore_all(args: argparse.Namespace) -> None:
    from phone.virtual.apps import APP_CLASSES
    from phone.virtual.phone import VirtualPhone

    maps = []
    rows = []
    t_all = time.perf_counter()
    for cls in APP_CLASSES:
        phone = VirtualPhone(seed=0, lang=args.language)
        audited = AuditedPhone(phone)
        before = copy.deepcopy(phone.state)
        t0 = time.perf_counter()
        m = Explorer(audited, PARSER, cls.label, budget=ExploreBudget(max_steps=args.steps, max_seconds=args.seconds)).run()
        secs = time.perf_counter() - t0
        pages = set(cls.all_pages())
        reached = {v.split("/", 1)[1] for v in phone.state["ui"]["visited"] if v.startswith(cls.package + "/")}
        cov = m.coverage()
        changes = data_changes(before, phone.state)
        rows.append((cls.label, len(pages), len(reached & pages), sorted(pages - reached), cov, m.not_tried(),
                     len(audited.sensitive), changes, m.steps_used, secs, m.complete))
        maps.append(m.to_data())
        phone.close()
    total = time.perf_counter() - t_all
    print(f"budget per app: {args.steps} steps, {args.seconds:.0f} s; parser: accessibility tree; phone in "
          f"{args.language!r}\n")
    print("| app | pages reached / pages | screens | transitions | tried | not tried (why) | untried | "
          "sensitive taps | data lost/added | steps | s | finished | pages not reached |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    sums = [0, 0, 0, 0, 0, 0]
    for label, n_pages, n_reached, missing, cov, why, sens, changes, steps, secs, done in rows:
        why_s = ", ".join(f"{k} {v}" for k, v in sorted(why.items())) or "–"
        print(f"| {label} | {n_reached}/{n_pages} | {cov['screens']} | {cov['transitions']} | {cov['tried']} | {why_s} | "
              f"{cov['untried']} | {sens} | {'; '.join(changes) or 'none'} | {steps} | {secs:.1f} | "
              f"{'yes' if done else 'no'} | {', '.join(missing) or '–'} |")
        for i, v in enumerate((n_reached, n_pages, cov["screens"], cov["transitions"], sens, steps)):
            sums[i] += v
    print(f"\nall {len(rows)} apps: {sums[0]}/{sums[1]} pages reached ({100 * sums[0] / max(1, sums[1]):.0f} %), "
          f"{sums[2]} screens, {sums[3]} transitions, {sums[4]} sensitive taps, {sums[5]} steps, {total:.0f} s")
    if args.maps:
        Path(args.maps).write_text(json.dumps(maps), encoding="utf-8")
        print(f"maps written to {args.maps}")


# ---- paired runs -------------------------------------------------------------------------------


def sign_test(only_with: int, only_without: int) -> float:
    """Two-sided exact sign test p-value on the discordant pairs."""
    n = only_with + only_without
    if n == 0:
        return 1.0
    k = min(only_with, only_without)
    return min(1.0, 2 * sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n)


BACK = -1  # what the oracle gave when it went back (no reference step)


class _Cell:
    """What the patched cell needs to know: the device of the cell now running, the guide
    (None: the arm without the map), the hints given, and what the oracle needs to follow
    the run: the steps taken so far and which reference step it asked for at each."""

    device: Device | None = None
    phone: Any = None
    task: Any = None
    guide: MapGuide | None = None
    planner: GuidedPlanner | None = None
    small_model: bool = False  # the model is a built-in one: the evidence and the map may act alone
    history: tuple[Any, ...] = ()
    emitted: dict[int, int] = {}  # steps taken when the oracle replied -> the reference step it gave
    passed: set[int] = set()  # reference steps a shortcut of the guide's made needless


def _patch_cells(bench_online: Any) -> None:
    """Wrap the benchmark's own cell: remember the device; wrap the planner when the arm has a map."""
    import agent.planners.registry as registry

    make_phone = bench_online._cell_phone
    make_bundle = registry.planner_bundle

    def cell_phone(job: Any, task: Any, arena: Any) -> tuple[Any, Any]:
        phone, device = make_phone(job, task, arena)
        _Cell.phone, _Cell.device, _Cell.task, _Cell.history, _Cell.emitted, _Cell.passed = \
            phone, device, task, (), {}, set()
        return phone, device

    def bundle(*a: Any, **kw: Any) -> Any:
        b = make_bundle(*a, **kw)
        b = replace(b, planner=_StepsTaken(b.planner))
        if _Cell.guide is None:  # the old runner: no map, no screen evidence
            _Cell.planner = None
            return b
        _Cell.planner = GuidedPlanner(b.planner, _Cell.guide, _Cell.device, small_model=_Cell.small_model)
        return replace(b, planner=_Cell.planner)

    bench_online._cell_phone = cell_phone
    registry.planner_bundle = bundle


class _StepsTaken:
    """The model-backed planner, showing the scripted oracle the steps the run has taken
    (the guide takes some without asking the model)."""

    def __init__(self, planner: Any) -> None:
        self.inner = planner

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def propose(self, ctx: Any) -> Any:
        _Cell.history = tuple(ctx.history)
        return self.inner.propose(ctx)


def _label(step: Any) -> str:
    t = local_target(step.target or {}, getattr(_Cell.phone, "lang", "en"))
    return str(t.get("text") or t.get("desc") or t.get("contains") or "").casefold()


def _does(action: Any, step: Any) -> bool:
    """Whether a step the guide took is the reference step ``step``, by what it names."""
    kind = action.type.name.lower()
    said = ((action.target.description if action.target is not None else "") or "").split(" [")[0].casefold()
    if step.kind == "open_app":
        names = {(step.app or "").casefold(), local_words(step.app or "", getattr(_Cell.phone, "lang", "en")).casefold()}
        return (kind == "open_app" and (action.app or "").casefold() in names) or (kind == "tap" and said in names)
    if step.kind == "type":
        return kind == "type" and (action.text or "").casefold() == (step.text or "").casefold()
    if step.kind in ("tap", "long_press"):
        return kind == step.kind and bool(said) and said == _label(step)
    return False


def _progress(steps: Any) -> tuple[set[int], bool]:
    """The reference steps the run has done (the oracle's own, and the guide's by name) and
    whether the last step taken was one of them (the run is on the reference's way)."""
    done: set[int] = set(_Cell.passed)
    on_way = True
    for n, turn in enumerate(_Cell.history):
        i = _Cell.emitted.get(n)
        if i == BACK:  # the oracle's own way back to the reference's way
            on_way = True
            continue
        if i is None:  # a step of the guide's: a reference step it names, in an app the run has opened
            i = next((j for j in range(len(steps)) if j not in done and _does(turn.action, steps[j])
                      and all(k in done or steps[k].kind != "open_app" for k in range(j))), None)
            if i is not None and steps[i].kind == "type" and i > 0 and steps[i - 1].kind == "tap":
                done.add(i - 1)  # the guide taps the field and types in one step
        if i is not None:
            done.add(i)
        on_way = i is not None
    return done, on_way


def _typed_already(steps: Any, i: int, phone: Any) -> bool:
    """The reference step ``i`` is typing (or the tap on the field just before it) and the
    phone's screen already shows that text."""
    j = i + 1 if steps[i].kind == "tap" and i + 1 < len(steps) and steps[i + 1].kind == "type" else i
    if steps[j].kind != "type" or not steps[j].text:
        return False
    shown = " ".join(e.text or "" for e in phone.ground_truth().elements).casefold()
    return steps[j].text.casefold() in shown


def _on_screen(step: Any, truth: Any) -> bool:
    """Whether a reference step's element is on the phone's screen now."""
    try:
        step.resolve(truth, getattr(_Cell.phone, "lang", "en"))
    except Exception:  # the reference's element is not here
        return False
    return True


def _oracle_reply(prompt: str) -> Any:
    """The first reference step the run has not done, in words (free text).  When the guide
    went its own way, the oracle follows: it skips reference taps whose element is not
    shown when a later one is and the last step was one of the reference's (a shortcut);
    after a step off the reference's way it goes back, as a person who knows the way would."""
    from evaluation.scripted_model import Reply

    task, phone = _Cell.task, _Cell.phone
    steps = task.solution
    done, on_way = _progress(steps)
    pending = [i for i in range(len(steps)) if i not in done]
    while len(pending) > 1 and _typed_already(steps, pending[0], phone):
        pending.pop(0)  # the guide typed it
    if not pending:
        return Reply("done")
    i = pending[0]
    truth = phone.ground_truth()
    if steps[i].kind in ("tap", "long_press") and not _on_screen(steps[i], truth):
        ahead = next((j for j in pending[1:] if steps[j].kind in ("tap", "long_press") and _on_screen(steps[j], truth)),
                     None)
        if ahead is None or not on_way:
            _Cell.emitted[len(_Cell.history)] = BACK
            return Reply("go back")
        _Cell.passed.update(j for j in pending if j < ahead)
        i = ahead
    _Cell.emitted[len(_Cell.history)] = i
    step = steps[i]
    k = step.kind
    if k in ("tap", "long_press"):
        c = step.resolve(truth, phone.lang).rect.center
        text = f"{'long press' if k == 'long_press' else 'tap'} ({c.x}, {c.y})"
    elif k == "open_app":
        text = f"open {step.app}"
    elif k == "type":
        text = f"type '{step.text}'"
    elif k in ("scroll", "swipe"):
        text = f"scroll {step.direction if k == 'scroll' else {'up': 'down', 'down': 'up'}.get(step.direction, step.direction)}"
    else:
        text = {"back": "go back", "home": "go home", "enter": "press enter", "wait": "wait", "complete": "done",
                "impossible": "impossible"}.get(k, k)
    return Reply(text)


@dataclass(frozen=True)
class _Arm:
    """What the summary needs of one arm's result, as written to and read back from ``--out``."""

    success: bool
    checkpoints_reached: int
    checkpoints_total: int
    steps: int
    wall_s: float

    @classmethod
    def of(cls, r: Any) -> _Arm:
        return cls(bool(r.success), int(r.checkpoints_reached), int(r.checkpoints_total), int(r.steps), float(r.wall_s))


def paired(args: argparse.Namespace) -> None:
    from evaluation import online_bench as bench_online
    from evaluation.online import Job

    maps = [AppMap.from_data(d) for d in json.loads(Path(args.maps).read_text(encoding="utf-8"))]
    guide = MapGuide(maps)
    _patch_cells(bench_online)
    ids, problems = bench_online.select_tasks(args.tasks)
    if args.single_app:
        ids = [i for i in ids if bench_online.find_task(args.tasks, i).app and
               not i.startswith(("launcher.", "impossible.")) and not bench_online.find_task(args.tasks, i).impossible]
    if args.only:
        wanted = set(args.only.split(","))
        ids = [i for i in ids if i in wanted]
    if args.limit:
        ids = ids[: args.limit]
    from evaluation.wordings import parse_languages, parse_wordings, plan_cells

    cells, skipped = plan_cells([bench_online.find_task(args.tasks, i) for i in ids], parse_wordings(args.wording),
                                parse_languages(args.language))
    for msg in skipped:
        print(msg)
    server = fake = None
    from app.model_prefs import is_builtin

    _Cell.small_model = not args.oracle and is_builtin(args.model)
    if args.oracle:
        from evaluation.scripted_model import ScriptedLLMServer

        fake = ScriptedLLMServer(models=("oracle",), responder=_oracle_reply).start()
        llm = {"backend": "openai", "model": "oracle", "base_url": fake.url + "/v1"}
    else:
        url = args.base_url
        if not url:
            from app.builtin_model.catalog import by_alias
            from app.builtin_model.server import BuiltinServer, ServerOptions

            server = BuiltinServer(by_alias(args.model), ServerOptions(n_ctx=4096))
            url = server.start()
        llm = {"backend": "openai", "model": args.model, "base_url": url}
    settings = {**llm, "max_steps": args.max_steps, "timeout_s": 300.0, "parse_mode": "tree", "estimator": "chained",
                "constrained": args.constrained and not args.oracle, "tasks_source": args.tasks, "aitw": False}
    rows: list[tuple[str, Any, Any, list[tuple[int, str]]]] = []
    name = {(c.task_id, c.language, c.wording): _cell_name(c.task_id, c.language, c.wording) for c in cells}
    out = Path(args.out) if args.out else None
    if out is not None and out.exists():  # resume: the cells already run are read back, not run again
        for line in out.read_text(encoding="utf-8").splitlines():
            if line.strip():
                d = json.loads(line)
                key = (d["task"], d.get("language", "en"), d.get("wording", 0))  # earlier files: wording 0, English
                if key in name:
                    rows.append((name[key], _Arm(**d["without"]), _Arm(**d["with"]), [tuple(h) for h in d["hints"]]))
        print(f"resuming: {len(rows)} cells read back from {out}", flush=True)
    done_ids = {r[0] for r in rows}
    t0 = time.perf_counter()
    try:
        for cell in cells:
            tid = name[(cell.task_id, cell.language, cell.wording)]
            if tid in done_ids:
                continue
            job = Job(args.planner, cell.task_id, args.seed, "none", settings, cell.wording, cell.language)
            _Cell.guide = None if args.without == "plain" else MapGuide([])
            without = bench_online.run_cell(job)
            _Cell.guide = guide
            with_map = bench_online.run_cell(job)
            hints = _Cell.planner.hints if _Cell.planner is not None else []
            rows.append((tid, without, with_map, hints))
            if out is not None:
                with out.open("a", encoding="utf-8") as fh:
                    fh.write(json.dumps({"task": cell.task_id, "language": cell.language, "wording": cell.wording,
                                         "without": _Arm.of(without).__dict__,
                                         "with": _Arm.of(with_map).__dict__, "hints": hints}) + "\n")
            first = hints[0][1] if hints else "(no hint)"
            print(f"{tid}: without {'OK' if without.success else 'fail'} ({without.checkpoints_reached}/"
                  f"{without.checkpoints_total} cp, {without.steps} steps, {without.wall_s:.0f} s); with "
                  f"{'OK' if with_map.success else 'fail'} ({with_map.checkpoints_reached}/{with_map.checkpoints_total} cp, "
                  f"{with_map.steps} steps, {with_map.wall_s:.0f} s); {len(hints)} hints; first: {first[:110]}",
                  flush=True)
    finally:
        if server is not None:
            server.stop()
        if fake is not None:
            fake.stop()
    n = len(rows)
    if not n:
        print("no tasks ran")
        return

    def arm(i: int) -> tuple[int, int, float, float]:
        results: list[Any] = [r[1] if i == 1 else r[2] for r in rows]
        ok = [r for r in results if r.success]
        partial = sum(r.checkpoints_total > 0 and r.checkpoints_reached > 0 and not r.success for r in results)
        steps = sum(r.steps for r in ok) / len(ok) if ok else float("nan")
        return len(ok), partial, steps, sum(r.wall_s for r in results) / n

    (s0, p0, st0, w0), (s1, p1, st1, w1) = arm(1), arm(2)
    both = sum(r[1].success and r[2].success for r in rows)
    only_with = sum(r[2].success and not r[1].success for r in rows)
    only_without = sum(r[1].success and not r[2].success for r in rows)
    who = "scripted oracle (free text)" if args.oracle else \
        f"{args.model} ({'structured' if args.constrained else 'free text'})"
    print(f"\n{who}, planner {args.planner}, seed {args.seed}, at most {args.max_steps} steps, {n} cells "
          f"({args.tasks}{', single-app' if args.single_app else ''}; wording {args.wording}, language {args.language}), "
          f"{time.perf_counter() - t0:.0f} s")
    print("| arm | success | partial | steps / solved task | s / task |\n|---|---|---|---|---|")
    print(f"| without map | {s0}/{n} ({100 * s0 / n:.0f} %) | {p0} | {st0:.2f} | {w0:.1f} |")
    print(f"| with map | {s1}/{n} ({100 * s1 / n:.0f} %) | {p1} | {st1:.2f} | {w1:.1f} |")
    print(f"pairs: both {both}, only with map {only_with}, only without {only_without}, neither "
          f"{n - both - only_with - only_without}; sign test p = {sign_test(only_with, only_without):.2f}")
    axis = {v: (lang, w) for (_, lang, w), v in name.items()}
    if len({axis[r[0]] for r in rows if r[0] in axis}) > 1:
        print("| language · wording | cells | without map | with map |\n|---|---|---|---|")
        for lang, w in sorted({axis[r[0]] for r in rows if r[0] in axis}, key=lambda k: (k[0] != "en", k)):
            mine = [r for r in rows if axis.get(r[0]) == (lang, w)]
            print(f"| {lang} · w{w}{' (tuned)' if (lang, w) == ('en', 0) else ''} | {len(mine)} | "
                  f"{sum(r[1].success for r in mine)} | {sum(r[2].success for r in mine)} |")
    both_ok = [r for r in rows if r[1].success and r[2].success]
    if both_ok:
        print(f"steps on the {len(both_ok)} tasks solved both ways: without "
              f"{sum(r[1].steps for r in both_ok) / len(both_ok):.2f}, with {sum(r[2].steps for r in both_ok) / len(both_ok):.2f}")


def _cell_name(task_id: str, language: str, wording: int) -> str:
    """How a cell is named in the output: the task id, with the language and wording unless English wording 0."""
    return task_id if (language, wording) == ("en", 0) else f"{task_id} [{language} w{wording}]"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="what", required=True)
    ex = sub.add_parser("explore")
    ex.add_argument("--steps", type=int, default=400)
    ex.add_argument("--seconds", type=float, default=300.0)
    ex.add_argument("--maps", default="")
    pa = sub.add_parser("paired")
    pa.add_argument("--maps", required=True)
    pa.add_argument("--tasks", default="yardstick")
    pa.add_argument("--single-app", action="store_true", help="only tasks inside one app (no launcher, no impossible)")
    pa.add_argument("--limit", type=int, default=0)
    pa.add_argument("--only", default="", help="comma-separated task ids: run just these")
    pa.add_argument("--out", default="", help="JSON lines, one per task (appended as each finishes); an existing "
                                              "file resumes the run: its tasks are read back, not run again")
    pa.add_argument("--model", default="qwen2.5-coder-0.5b")
    pa.add_argument("--base-url", default="")
    pa.add_argument("--planner", default="visiontasker")
    pa.add_argument("--seed", type=int, default=0)
    pa.add_argument("--max-steps", type=int, default=6)
    pa.add_argument("--constrained", action="store_true", help="structured replies (the product's default)")
    pa.add_argument("--oracle", action="store_true", help="a scripted model replaying the reference solution")
    pa.add_argument("--without", choices=["screen", "plain"], default="screen",
                    help="the arm without the map: the window's runner with no map (the screen's own evidence, "
                         "agent.knowledge.focus) or the bare planner (no evidence at all)")
    ex.add_argument("--language", default="en", help="the phone's UI language while exploring (en, de)")
    pa.add_argument("--wording", default="0", help="which wording of each goal: 0 (the tuned one), 0,1,2 or all")
    pa.add_argument("--language", default="en", help="the phone's language and the goals' (en, de or en,de); tasks "
                                                     "without goals in it are skipped with a message")
    args = ap.parse_args()
    explore_all(args) if args.what == "explore" else paired(args)


if __name__ == "__main__":
    main()
