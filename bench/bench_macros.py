"""Macro robustness and learning-from-demonstration benchmark on the virtual phone.

Robustness: each macro is demonstrated (scripted taps on the English labels a user
would read) on the 1080x2400 light English phone and recorded with ``Recorder``; it is
then replayed with no help (``run_unattended``: any request for a demonstration fails
the run) on fresh phones: the same phone (control), the tablet, the dark theme, the
second language (German), and tablet+dark+German.  A replay succeeds when it finishes
and leaves the same change in the phone's app state as the demonstration did.  The
cascade level that matched each step is counted per variant.

Learning: for the sim's task files, a planner that cannot solve a task (the "no
knowledge" baseline) is compared with the same run after one demonstration of the task
was stored under its first goal phrasing and retrieved by a *rephrased* goal; the
retrieved demonstration's steps are then executed with the replay cascade.  Optionally
(``--fake-llm``) a scripted fake LLM checks that retrieved examples reach a planner
prompt: that figure checks wiring only and is labelled so.  ``--real-llm BASE_URL`` runs
the same before/after with a real model on an OpenAI-compatible server (VisionTasker
planner, ``--max-steps`` per episode, one re-plan per step), the demonstration being
put in ``RunSettings.examples`` after retrieval by the rephrased goal.

    python bench/bench_macros.py [--parser tree|vision] [--json out.json] [--only NAME]
    python bench/bench_macros.py --real-llm http://127.0.0.1:8080/v1 [--model smollm2] [--only NAME]
"""

from __future__ import annotations

import argparse
import copy
import json
import logging
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent.macros.editing import fill_parameters, parameterize
from agent.macros.recorder import Observation, Recorder
from agent.macros.replay import Replayer, run_unattended
from agent.macros.types import Macro
from agent.types import Action, Direction
from bench.scripted_llm import ReplyLog, ScriptedLLM
from vision.types import ScreenParse

log = logging.getLogger("bench_macros")

#: name -> (goal, demonstration).  Demonstration steps: ("tap", english text or label),
#: ("type", text), ("scroll", content direction), ("back",).  The first tap on the home
#: screen opens the app.
MACROS: dict[str, tuple[str, list[tuple[str, ...]]]] = {
    "airplane_on": ("turn on airplane mode", [("tap", "Settings"), ("tap", "Network & internet"), ("tap", "Airplane mode")]),
    "data_saver_on": ("turn on data saver", [("tap", "Settings"), ("tap", "Network & internet"), ("tap", "Data Saver")]),
    "roaming_off": ("turn off roaming", [("tap", "Settings"), ("tap", "Network & internet"), ("tap", "SIMs"), ("tap", "Roaming")]),
    "mobile_data_off": ("turn off mobile data", [("tap", "Settings"), ("tap", "Network & internet"), ("tap", "SIMs"), ("tap", "Mobile data")]),
    "wifi_off": ("turn off Wi-Fi", [("tap", "Settings"), ("tap", "Network & internet"), ("tap", "Internet"), ("tap", "Wi‑Fi")]),
    "hotspot_on": ("turn on the hotspot", [("tap", "Settings"), ("tap", "Network & internet"), ("tap", "Hotspot & tethering"), ("tap", "Wi‑Fi hotspot")]),
    "bluetooth_on": ("turn on Bluetooth", [("tap", "Settings"), ("tap", "Connected devices"), ("tap", "Bluetooth")]),
    "dark_theme_on": ("turn on the dark theme", [("tap", "Settings"), ("tap", "Display"), ("tap", "Dark theme")]),
    "vibrate_off": ("stop vibrating for calls", [("tap", "Settings"), ("tap", "Sound & vibration"), ("tap", "Vibrate for calls")]),
    "dnd_on": ("turn on do not disturb", [("tap", "Settings"), ("tap", "Sound & vibration"), ("tap", "Do Not Disturb")]),
    "battery_saver_on": ("turn on battery saver", [("tap", "Settings"), ("tap", "Battery"), ("tap", "Battery Saver")]),
    "notification_dots_off": ("hide notification dots", [("tap", "Settings"), ("tap", "Notifications"), ("tap", "Notification dot on app icon")]),
    "color_inversion_on": ("invert colours", [("tap", "Settings"), ("scroll", "down"), ("tap", "Accessibility"), ("tap", "Color inversion")]),
    "location_off": ("turn off location", [("tap", "Settings"), ("scroll", "down"), ("tap", "Location"), ("tap", "Use location")]),
    "stopwatch_start": ("start the stopwatch", [("tap", "Clock"), ("tap", "Stopwatch"), ("tap", "Start")]),
    "alarm_9am": ("add an alarm at 9 am", [("tap", "Clock"), ("tap", "Add alarm"), ("tap", "9"), ("tap", "OK")]),
    "favorite_ben": ("add Ben Carter to favourites", [("tap", "Contacts"), ("tap", "Ben Carter"), ("tap", "Add to favorites")]),
    "note_title": ("write a note titled Buy milk", [("tap", "Notes"), ("tap", "New text note"), ("type", "Buy milk"),
                                                    ("tap", "Navigate up")]),
}
#: macro -> {step index: parameter name}: typed text that becomes a run-time parameter
PARAMS: dict[str, dict[int, str]] = {"note_title": {2: "title"}}

VARIANTS: dict[str, dict[str, str]] = {
    "same (control)": {"profile": "phone", "theme": "light", "lang": "en"},
    "tablet": {"profile": "tablet", "theme": "light", "lang": "en"},
    "dark": {"profile": "phone", "theme": "dark", "lang": "en"},
    "german": {"profile": "phone", "theme": "light", "lang": "de"},
    "tablet+dark+german": {"profile": "tablet", "theme": "dark", "lang": "de"},
}
RECORD = VARIANTS["same (control)"]
_VOLATILE = ("ui.", "clock_minutes")


# ---- plumbing ---------------------------------------------------------------------------------


def make_parser(kind: str):  # type: ignore[no-untyped-def]
    if kind == "tree":
        from vision.hierarchy import parse_uiautomator

        def parse(screen) -> ScreenParse:  # type: ignore[no-untyped-def]
            tp = parse_uiautomator(screen.hierarchy_xml, screen.size)
            return ScreenParse(screen.size, tp.elements, tp.blocks, warnings=tp.warnings)
        return parse
    from vision.config import PipelineConfig
    from vision.pipeline import ScreenParser

    parser = ScreenParser(PipelineConfig(mode=kind))  # type: ignore[arg-type]
    return parser.parse


def observer(phone, parse):  # type: ignore[no-untyped-def]
    def observe() -> Observation:
        screen = phone.screenshot(with_hierarchy=True)
        return Observation(parse(screen), screen.image, screen.foreground_package)
    return observe


@dataclass
class _Parser:
    """The bench's parse function as the agent loop's parser."""

    parse: Any


def flat(d: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(d, dict):
        out: dict[str, Any] = {}
        for k, v in d.items():
            out.update(flat(v, f"{prefix}{k}."))
        return out
    return {prefix.rstrip("."): d}


def state_delta(before: dict, after: dict) -> dict[str, Any]:
    a, b = flat(before), flat(after)
    return {k: b.get(k) for k in set(a) | set(b)
            if a.get(k) != b.get(k) and not k.startswith(_VOLATILE)}


def new_phone(variant: dict[str, str]):  # type: ignore[no-untyped-def]
    from phone.virtual.phone import VirtualPhone

    return VirtualPhone(profile=variant["profile"], theme=variant["theme"], lang=variant["lang"])


def find_by_words(parse: ScreenParse, words: str):  # type: ignore[no-untyped-def]
    exact = [e for e in parse.elements if e.text == words] or [e for e in parse.elements if e.label == words]
    if not exact:
        raise LookupError(f"demonstration: nothing reads {words!r} on this screen")
    return exact[0]


def where_user_taps(phone, words: str):  # type: ignore[no-untyped-def]
    """The point a user who reads ``words`` on the screen would tap: taken from the
    simulator's ground truth, so the demonstration does not depend on the parser."""
    truth = phone.ground_truth()
    hits = ([e for e in truth.elements if e.text == words] or [e for e in truth.elements if e.label == words])
    if not hits:
        raise LookupError(f"demonstration: nothing reads {words!r} on this screen")
    return hits[0].rect.center


@dataclass
class Recorded:
    name: str
    macro: Macro
    delta: dict[str, Any]
    params: dict[str, str] = field(default_factory=dict)


def record(name: str, goal: str, demo: list[tuple[str, ...]], parse) -> Recorded:  # type: ignore[no-untyped-def]
    phone = new_phone(RECORD)
    observe = observer(phone, parse)
    start = copy.deepcopy(phone.state)
    rec = Recorder()
    for step in demo:
        before = observe()
        kind = step[0]
        if kind == "tap":
            c = where_user_taps(phone, step[1])
            act = Action.tap(c.x, c.y)
            phone.tap(c.x, c.y)
        elif kind == "type":
            act = Action.type_text(step[1])
            phone.input_text(step[1])
        elif kind == "scroll":
            act = Action.scroll(Direction(step[1]), phone.screen_size())
            assert act.touch is not None and act.lift is not None
            phone.swipe(act.touch.x, act.touch.y, act.lift.x, act.lift.y, 300)
        elif kind == "back":
            from agent.device import Key

            act = Action.simple("back")
            phone.key(Key.BACK)
        else:
            raise ValueError(kind)
        rec.record(act, before, observe())
    macro = rec.build(name, description=goal)
    params: dict[str, str] = {}
    for idx, pname in PARAMS.get(name, {}).items():
        params[pname] = macro.steps[idx].action.text or ""
        macro = parameterize(macro, idx, pname)
    return Recorded(name, macro, state_delta(start, phone.state), params)


def replay(rec: Recorded, variant: dict[str, str], parse, skip: tuple = ()) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    phone = new_phone(variant)
    replayer = Replayer(device=phone, parser=_Parser(parse), skip_levels=skip)
    t0 = time.perf_counter()
    result = run_unattended(replayer, rec.macro, rec.params)
    final = flat(phone.state)
    ok = result.succeeded and all(final.get(k) == v for k, v in rec.delta.items())
    return {
        "ok": ok, "status": result.status, "levels": list(result.levels), "message": result.message,
        "effects": [s.effect for s in result.steps], "expected": rec.delta,
        "got": {k: final.get(k) for k in rec.delta}, "seconds": round(time.perf_counter() - t0, 2),
    }


# ---- the robustness run --------------------------------------------------------------------------


def robustness(parser_kind: str, only: str | None = None, skip: str = "", variants: str = "") -> dict[str, Any]:
    from agent.macros.reidentify import MatchLevel

    skip_levels = tuple(MatchLevel(x) for x in skip.split(",") if x)
    parse = make_parser(parser_kind)
    recorded: list[Recorded] = []
    failures: dict[str, str] = {}
    for name, (goal, demo) in MACROS.items():
        if only and name not in only.split(","):
            continue
        try:
            r = record(name, goal, demo, parse)
        except Exception as exc:  # a demonstration the current sim cannot perform
            failures[name] = f"{type(exc).__name__}: {exc}"
            log.warning("could not record %s: %s", name, exc)
            continue
        if not r.delta:
            failures[name] = "the demonstration changed nothing in the app state"
            continue
        recorded.append(r)
    results: dict[str, dict[str, Any]] = {}
    for vname, variant in VARIANTS.items():
        if variants and vname not in variants.split(","):
            continue
        per: dict[str, Any] = {}
        for r in recorded:
            per[r.name] = replay(r, variant, parse, skip_levels)
            log.info("%-20s %-22s %s %s", vname, r.name, "OK " if per[r.name]["ok"] else "BAD", per[r.name]["levels"])
        levels = Counter(lv for v in per.values() for lv in v["levels"])
        results[vname] = {"success": sum(v["ok"] for v in per.values()), "total": len(per),
                          "levels": dict(levels), "macros": per}
    return {"parser": parser_kind, "skipped_levels": [lv.value for lv in skip_levels], "recorded": [r.name for r in recorded],
            "steps": {r.name: [s.description for s in r.macro.steps] for r in recorded},
            "not_recorded": failures, "variants": results}


def render(report: dict[str, Any]) -> str:
    skipped = f"; cascade levels switched off: {', '.join(report['skipped_levels'])}" if report.get("skipped_levels") else ""
    lines = [f"Macro replay without help (parser: {report['parser']}; {len(report['recorded'])} macros "
             f"recorded on phone 1080x2400, light, English{skipped})", "",
             "| variant | success | cascade levels used (steps) |", "|---|---|---|"]
    for vname, v in report["variants"].items():
        lv = ", ".join(f"{k} {n}" for k, n in sorted(v["levels"].items(), key=lambda t: -t[1]))
        lines.append(f"| {vname} | {v['success']}/{v['total']} | {lv} |")
    bad = [(vn, mn, m) for vn, v in report["variants"].items() for mn, m in v["macros"].items() if not m["ok"]]
    if bad:
        lines += ["", "Failures:"]
        lines += [f"- {vn} / {mn}: {m['status']} {m['message']} levels={m['levels']} got={m['got']}" for vn, mn, m in bad]
    if report["not_recorded"]:
        lines += ["", "Not recorded: " + "; ".join(f"{k}: {v}" for k, v in report["not_recorded"].items())]
    return "\n".join(lines)


#: A second way of asking for each macro's task: retrieval must bridge the wording.
REPHRASED: dict[str, str] = {
    "airplane_on": "switch my phone to flight mode",
    "data_saver_on": "save mobile data",
    "roaming_off": "disable data roaming abroad",
    "mobile_data_off": "stop using cellular data",
    "wifi_off": "disconnect from wireless internet, turn wifi off",
    "hotspot_on": "share my internet with a wifi hotspot",
    "bluetooth_on": "enable bluetooth",
    "dark_theme_on": "make the screen dark at night, dark mode",
    "vibrate_off": "no vibration when someone calls",
    "dnd_on": "silence everything with do not disturb",
    "battery_saver_on": "make the battery last longer with the saver",
    "notification_dots_off": "remove the dots on app icons for notifications",
    "color_inversion_on": "invert the screen colours",
    "location_off": "stop apps from knowing my location",
    "stopwatch_start": "time something with the stopwatch",
    "alarm_9am": "wake me at nine in the morning",
    "favorite_ben": "star Ben Carter as a favourite contact",
    "note_title": "jot down a note called Buy milk",
}


def run_planner(goal: str, examples: tuple[str, ...], variant: dict[str, str], parse,
                expected: dict[str, Any], client=None, max_steps: int = 10,
                max_replans: int = 2, max_wait_s: float = 2.0) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """One VisionTasker episode on a fresh phone; ``ok`` when the phone's state shows the
    expected change.  ``client`` defaults to the scripted fake LLM."""
    from agent.events import Autonomy, Executed, Finished, RunSettings
    from agent.planners.visiontasker import VisionTaskerPlanner
    from agent.runner import drive, run_episode

    phone = new_phone(variant)
    llm = ReplyLog(client if client is not None else ScriptedLLM())
    planner = VisionTaskerPlanner(llm, max_replans=max_replans)
    gen = run_episode(goal, phone, _Parser(parse), planner,
                      settings=RunSettings(mode=Autonomy.AUTO, max_steps=max_steps, examples=examples,
                                           max_replans=max_replans, max_wait_s=max_wait_s))
    t0 = time.perf_counter()
    actions: list[str] = []
    status, note = "unfinished", ""
    for ev in drive(gen):
        if isinstance(ev, Executed):
            actions.append(ev.action.describe())
        elif isinstance(ev, Finished):
            status, note = ev.status.value, ev.note
    final = flat(phone.state)
    phone.close()
    return {"ok": all(final.get(k) == v for k, v in expected.items()), "status": status, "note": note[:160],
            "actions": actions, "llm_calls": len(llm.replies), "replies": llm.replies[:6], "seconds": round(time.perf_counter() - t0, 1)}


def record_all(parse) -> list[Recorded]:  # type: ignore[no-untyped-def]
    """Every macro of ``MACROS`` demonstrated and recorded (one that cannot be is logged and left out)."""
    recorded = []
    for name, (goal, demo) in MACROS.items():
        try:
            recorded.append(record(name, goal, demo, parse))
        except Exception as exc:
            log.warning("could not record %s: %s", name, exc)
    return recorded


def learning(parser_kind: str, scorers: tuple[str, ...] = ("lexical",)) -> dict[str, Any]:
    """Retrieval of demonstrations by rephrased goals, and the PBD wiring check."""
    from agent.knowledge.base import Knowledge
    from agent.knowledge.store import MemoryStore

    parse = make_parser(parser_kind)
    recorded = record_all(parse)
    out: dict[str, Any] = {"tasks": len(recorded), "retrieval": {}, "wiring": {}}
    for scorer in scorers:
        k = Knowledge(MemoryStore(), scorer=scorer)
        by_id = {}
        for r in recorded:
            demo = fill_parameters(r.macro, r.params) if r.params else r.macro
            by_id[k.learn_from_demonstration(demo, MACROS[r.name][0]).id] = r.name
        top1, misses = 0, []
        for r in recorded:
            hits = k.tasks.find(REPHRASED[r.name], 1)
            got = by_id.get(hits[0][0].id) if hits else None
            top1 += got == r.name
            if got != r.name:
                misses.append(f"{REPHRASED[r.name]!r} -> {got}")
        out["retrieval"][scorer] = {"top1": top1, "total": len(recorded), "misses": misses}
        if scorer != scorers[0]:
            continue
        before = after = 0
        failed_before = []
        for r in recorded:
            ok0 = run_planner(REPHRASED[r.name], (), RECORD, parse, r.delta)["ok"]
            before += ok0
            if not ok0:
                failed_before.append(r.name)
        for r in recorded:
            if r.name not in failed_before:
                continue
            lines = k.tasks.example_lines(REPHRASED[r.name], 1)
            after += run_planner(REPHRASED[r.name], lines, RECORD, parse, r.delta)["ok"]
        out["wiring"] = {"llm": "scripted fake (wiring check only)", "solved_without_examples": before,
                         "failed_without_examples": len(failed_before),
                         "solved_with_retrieved_demo": after}
    return out


def learning_real(base_url: str, parser_kind: str, only: str | None = None, max_steps: int = 8,
                  max_replans: int = 1, model: str = "smollm2") -> dict[str, Any]:
    """The before/after protocol with a REAL model behind an OpenAI-compatible server.

    For each task: the VisionTasker planner runs on the rephrased goal with no examples;
    for each task it fails, it runs again with the demonstration retrieved (lexically)
    by the rephrased goal among all stored demonstrations in ``RunSettings.examples``.
    """
    from agent.knowledge.base import Knowledge
    from agent.knowledge.store import MemoryStore
    from agent.llm import RetryPolicy, make_client

    client = make_client("openai", model, base_url, policy=RetryPolicy(attempts=2, backoff_s=0.5, timeout_s=120))
    served = client.list_models()
    parse = make_parser(parser_kind)
    recorded = record_all(parse)
    k = Knowledge(MemoryStore(), scorer="lexical")
    by_id = {}
    for r in recorded:  # every demonstration is stored, so retrieval can pick the wrong one
        demo = fill_parameters(r.macro, r.params) if r.params else r.macro
        by_id[k.learn_from_demonstration(demo, MACROS[r.name][0]).id] = r.name
    chosen = [r for r in recorded if not only or r.name in only.split(",")]
    t0 = time.perf_counter()
    tasks: dict[str, Any] = {}
    run = {"client": client, "max_steps": max_steps, "max_replans": max_replans, "max_wait_s": 0.0}
    for r in chosen:
        b = run_planner(REPHRASED[r.name], (), RECORD, parse, r.delta, **run)
        tasks[r.name] = {"goal": REPHRASED[r.name], "before": b}
        log.warning("%-22s before: %s %s %s (%s s)", r.name, "OK " if b["ok"] else "BAD", b["status"], b["actions"],
                    b["seconds"])
    for r in chosen:
        if tasks[r.name]["before"]["ok"]:
            continue
        hits = k.tasks.find(REPHRASED[r.name], 1)
        lines = k.tasks.example_lines(REPHRASED[r.name], 1)
        a = run_planner(REPHRASED[r.name], lines, RECORD, parse, r.delta, **run)
        tasks[r.name].update(after=a, retrieved=by_id.get(hits[0][0].id) if hits else None, example=list(lines))
        log.warning("%-22s after:  %s %s %s (%s s)", r.name, "OK " if a["ok"] else "BAD", a["status"], a["actions"],
                    a["seconds"])
    failed = [n for n, t in tasks.items() if not t["before"]["ok"]]
    return {"llm": f"{model} via {base_url} (served: {served})", "planner": "visiontasker",
            "parser": parser_kind, "max_steps": max_steps, "max_replans": max_replans, "tasks": tasks,
            "solved_without_examples": len(tasks) - len(failed), "failed_without_examples": len(failed),
            "solved_with_retrieved_demo": sum(tasks[n]["after"]["ok"] for n in failed),
            "retrieval_correct_for_failed": sum(tasks[n]["retrieved"] == n for n in failed),
            "seconds": round(time.perf_counter() - t0)}


def render_real(rep: dict[str, Any]) -> str:
    lines = [f"PBD before/after with a REAL model: {rep['llm']}; planner {rep['planner']}, parser {rep['parser']}, "
             f"max {rep['max_steps']} steps, {rep['max_replans']} re-plan(s) per step", "",
             "| task (rephrased goal) | without examples | with retrieved demo (retrieved task) |", "|---|---|---|"]
    for name, t in rep["tasks"].items():
        b = t["before"]
        cell_b = f"{'solved' if b['ok'] else 'failed'} ({b['status']}, {len(b['actions'])} actions)"
        if "after" in t:
            a = t["after"]
            cell_a = f"{'solved' if a['ok'] else 'failed'} ({a['status']}, {len(a['actions'])} actions; {t['retrieved']})"
        else:
            cell_a = "not run (solved without)"
        lines.append(f"| {name}: \"{t['goal']}\" | {cell_b} | {cell_a} |")
    lines += ["", f"Without examples {rep['solved_without_examples']}/{len(rep['tasks'])} solved; of the "
                  f"{rep['failed_without_examples']} failed, {rep['solved_with_retrieved_demo']} solved with the "
                  f"retrieved demonstration (retrieval picked the right task for {rep['retrieval_correct_for_failed']}). "
                  f"Run time {rep['seconds']} s."]
    return "\n".join(lines)


def retrieval_only(scorers: tuple[str, ...]) -> dict[str, Any]:
    """Top-1 retrieval of each task by its rephrased goal among all task goals (no phone
    needed, so it runs where only the embeddings extra is installed)."""
    from agent.knowledge.base import Knowledge
    from agent.knowledge.store import MemoryStore
    from agent.knowledge.types import TaskRecord

    out: dict[str, Any] = {}
    for scorer in scorers:
        k = Knowledge(MemoryStore(), scorer=scorer)
        ids = {k.tasks.add(TaskRecord(goal=g, steps=(g,))).id: n for n, (g, _) in MACROS.items()}
        t0 = time.perf_counter()
        top1, misses = 0, []
        for n, q in REPHRASED.items():
            hits = k.tasks.find(q, 1)
            got = ids.get(hits[0][0].id) if hits else None
            top1 += got == n
            if got != n:
                misses.append(f"{q!r} -> {got}")
        out[scorer] = {"top1": top1, "total": len(REPHRASED), "misses": misses,
                       "seconds": round(time.perf_counter() - t0, 2)}
    return out


def render_learning(rep: dict[str, Any]) -> str:
    lines = [f"Learning from demonstrations ({rep['tasks']} tasks, demonstrations stored under the original goal, "
             "retrieved by a rephrased goal)", "", "| retrieval | top-1 correct |", "|---|---|"]
    for name, r in rep["retrieval"].items():
        lines.append(f"| {name} | {r['top1']}/{r['total']} |")
    w = rep.get("wiring") or {}
    if w:
        lines += ["", f"PBD wiring check with a SCRIPTED FAKE LLM (not a model's ability): of "
                      f"{w['failed_without_examples']} tasks the planner failed without examples, "
                      f"{w['solved_with_retrieved_demo']} succeeded with the retrieved demonstration in the "
                      f"VisionTasker prompt ({w['solved_without_examples']} were solved without examples)."]
    for name, r in rep["retrieval"].items():
        if r["misses"]:
            lines.append(f"{name} misses: " + "; ".join(r["misses"]))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--parser", default="tree", choices=["tree", "vision", "fusion"])
    ap.add_argument("--only", default=None, help="comma-separated macro names")
    ap.add_argument("--json", default=None)
    ap.add_argument("--variants", default="", help="comma-separated variant names (default: all)")
    ap.add_argument("--skip-levels", default="", help="cascade levels to switch off, e.g. exact_id,resource_id")
    ap.add_argument("--learning", action="store_true", help="also run the learning measurement")
    ap.add_argument("--embeddings", action="store_true", help="also rank with MiniLM (needs the extra)")
    ap.add_argument("--no-robustness", action="store_true")
    ap.add_argument("--retrieval-only", action="store_true", help="only rank rephrased goals (no phone needed)")
    ap.add_argument("--real-llm", default=None, metavar="BASE_URL",
                    help="run the learning before/after with a real model on an OpenAI-compatible server "
                         "(e.g. http://127.0.0.1:8080/v1); use --only to pick tasks")
    ap.add_argument("--model", default="smollm2", help="model name on the --real-llm server")
    ap.add_argument("--max-steps", type=int, default=8, help="step budget per episode for --real-llm")
    ap.add_argument("-v", action="store_true")
    a = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO if a.v else logging.WARNING, format="%(message)s")
    t0 = time.perf_counter()
    report: dict[str, Any] = {}
    if a.retrieval_only:
        scorers = ("lexical", "embedding") if a.embeddings else ("lexical",)
        report["retrieval"] = retrieval_only(scorers)
        for name, r in report["retrieval"].items():
            print(f"{name}: top-1 {r['top1']}/{r['total']} ({r['seconds']} s); misses: {r['misses']}")
        return 0
    if a.real_llm:
        from agent.llm.base import LLMError

        try:
            report["learning_real"] = learning_real(a.real_llm, a.parser, a.only, a.max_steps, model=a.model)
        except LLMError as exc:
            print(f"--real-llm: {exc}", file=sys.stderr)
            return 2
        print(render_real(report["learning_real"]))
        print(f"\n({time.perf_counter() - t0:.0f} s)")
        if a.json:
            Path(a.json).write_text(json.dumps(report, indent=1, ensure_ascii=False, default=str))
        return 0
    if not a.no_robustness:
        report["robustness"] = robustness(a.parser, a.only, a.skip_levels, a.variants)
        print(render(report["robustness"]))
    if a.learning:
        scorers = ("lexical", "embedding") if a.embeddings else ("lexical",)
        report["learning"] = learning(a.parser, scorers)
        print()
        print(render_learning(report["learning"]))
    print(f"\n({time.perf_counter() - t0:.0f} s)")
    if a.json:
        Path(a.json).write_text(json.dumps(report, indent=1, ensure_ascii=False, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
