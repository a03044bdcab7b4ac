"""Self-healing macro replay across the virtual phone's variants (issue 41).

Each macro of ``bench_macros.MACROS`` is demonstrated on the 1080x2400 light English phone
and recorded; it is then replayed the way the window's *Run on…* replays it
(``agent.macros.replay.Replayer``, autonomy "auto": steps that match run with no model
call) on fresh phones of other sizes, themes, languages and layouts (``shifted``: a
suggestion card at the top of every list moves every row down), with a healer
(``agent.macros.heal.ModelHealer``, one grounding call per heal) on the model given.

The user is the oracle: a *healed* step (put to the user whatever the autonomy) is
approved when its tap lands on the element the demonstration meant (the demonstration's
words, in the phone's language, read off the phone's ground truth), rejected otherwise
(a *wrong heal*); a step that needs the user is demonstrated from the same ground truth.
Per variant it prints the steps healed, heals right and wrong, ambiguous matches, the
user's interventions, model calls per replay, the replay's seconds per step, and whether
the phone ended as the demonstration left it.

    python bench/bench_heal.py --builtin qwen2.5-coder-0.5b [--only a,b] [--variants v,w] [--json out.json]
    python bench/bench_heal.py --no-model   # the cascade alone: what would need the user
    python bench/bench_heal.py --scripted   # a scripted stand-in for the model (wiring only)
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_macros import MACROS, RECORD, Recorded, _Parser, flat, make_parser, record

from agent.cost import HEALED, run_cost
from agent.events import AwaitingDecision, Finished
from agent.macros.heal import HealAnswer, ModelHealer
from agent.macros.recorder import element_under
from agent.macros.replay import Replayer
from agent.macros.types import MacroStep
from agent.types import Action, Decision, DecisionKind
from vision.types import ScreenParse

log = logging.getLogger("bench_heal")

VARIANTS: dict[str, dict[str, str]] = {
    "same (control)": {**RECORD, "layout": "default"},
    "tablet": {"profile": "tablet", "theme": "light", "lang": "en", "layout": "default"},
    "dark": {"profile": "phone", "theme": "dark", "lang": "en", "layout": "default"},
    "german": {"profile": "phone", "theme": "light", "lang": "de", "layout": "default"},
    "shifted layout": {"profile": "phone", "theme": "light", "lang": "en", "layout": "shifted"},
    "german + shifted": {"profile": "phone", "theme": "light", "lang": "de", "layout": "shifted"},
    "tablet+dark+german+shifted": {"profile": "tablet", "theme": "dark", "lang": "de", "layout": "shifted"},
    "reordered layout": {"profile": "phone", "theme": "light", "lang": "en", "layout": "reordered"},
    "german + reordered": {"profile": "phone", "theme": "light", "lang": "de", "layout": "reordered"},
}


@dataclass
class Counting:
    """A healer that keeps what it was asked and answered."""

    inner: Any
    asked: list[tuple[str, str]] = field(default_factory=list)  # (step, why the cascade missed)

    def heal(self, step: MacroStep, parse: ScreenParse, missed: str, cancel: Any = None) -> HealAnswer:
        self.asked.append((step.description, missed))
        return self.inner.heal(step, parse, missed, cancel)


def new_phone(variant: dict[str, str]):  # type: ignore[no-untyped-def]
    from phone.virtual.phone import VirtualPhone

    return VirtualPhone(profile=variant["profile"], theme=variant["theme"], lang=variant["lang"],
                        layout=variant["layout"])


def meant(phone: Any, words: str) -> Any:
    """The ground-truth element a user reading the demonstration's ``words`` (in the phone's
    language) means on the phone's current screen, or None."""
    from phone.virtual.i18n import translate

    said = translate(words, phone.lang)
    truth = phone.ground_truth()
    hits = [e for e in truth.elements if e.text == said] or [e for e in truth.elements if e.label == said]
    return hits[0] if hits else None


def oracle(phone: Any, demo: list[tuple[str, ...]], stats: dict[str, int]) -> Callable[[Any, AwaitingDecision], Decision]:
    """The scripted user: approves what matches the demonstration, shows what is asked."""

    def words_of(index: int | None) -> str:
        if index is None or index >= len(demo) or demo[index][0] != "tap":
            return ""
        return demo[index][1]

    def decide(replay: Any, ev: AwaitingDecision) -> Decision:
        index = replay.step_of(ev)
        question = replay.question(ev)
        if question is not None:  # the step needs the user: shown from the ground truth
            stats["needs_you"] += 1
            el = meant(phone, words_of(question.index))
            if el is None:
                return Decision(DecisionKind.ABORT, feedback="the oracle cannot show this step")
            c = el.rect.center
            return Decision(DecisionKind.DEMONSTRATE, action=Action.tap(c.x, c.y))
        healed = any(e.startswith(HEALED) for e in ev.proposal.evidence)
        if not healed:
            return Decision(DecisionKind.APPROVE)
        stats["heals"] += 1
        stats["ambiguous"] += any("ambiguous" in e for e in ev.proposal.evidence)
        el = meant(phone, words_of(index))
        touch = ev.proposal.action.touch
        parse = replay.planner.eyes.last.parse if replay.planner.eyes.last is not None else None
        right = False
        if el is not None and touch is not None and parse is not None:
            c = el.rect.center
            hit, want = element_under(parse, touch.x, touch.y), element_under(parse, c.x, c.y)
            right = hit is not None and want is not None and (hit.id == want.id or hit.rect.contains_rect(want.rect)
                                                               or want.rect.contains_rect(hit.rect))
        stats["right" if right else "wrong"] += 1
        if right:
            return Decision(DecisionKind.APPROVE)
        return Decision(DecisionKind.REJECT, feedback="not that element")

    return decide


def replay_one(rec: Recorded, demo: list[tuple[str, ...]], variant: dict[str, str], parse: Any,
               healer: Any) -> dict[str, Any]:
    phone = new_phone(variant)
    counting = Counting(healer) if healer is not None else None
    replay = Replayer(device=phone, parser=_Parser(parse), healer=counting).start(rec.macro, rec.params)
    stats = {"heals": 0, "right": 0, "wrong": 0, "ambiguous": 0, "needs_you": 0}
    decide = oracle(phone, demo, stats)
    gen = replay.events
    t0 = time.perf_counter()
    reply: Decision | None = None
    episode = None
    try:
        while True:
            ev = gen.send(reply)
            reply = decide(replay, ev) if isinstance(ev, AwaitingDecision) else None
            if isinstance(ev, Finished):
                episode = ev.episode
    except StopIteration as stop:
        result = stop.value
    seconds = time.perf_counter() - t0
    final = flat(phone.state)
    cost = run_cost(episode) if episode is not None else None
    steps = len(episode.steps) if episode is not None else 0
    ok = result.succeeded and all(final.get(k) == v for k, v in rec.delta.items())
    return {"ok": ok, "status": result.status, "levels": list(result.levels), "healed_saved": result.healed,
            "version": result.macro.version, "model_calls": cost.model_calls if cost else 0,
            "interventions": cost.interventions if cost else 0, "steps": steps, "seconds": round(seconds, 2),
            "per_step_s": round(seconds / steps, 3) if steps else None, "asked": counting.asked if counting else [],
            "healed_steps": [s.healed.chose for s in result.macro.steps if s.healed is not None], **stats}


def summary(per: dict[str, dict[str, Any]]) -> dict[str, Any]:
    n = len(per)
    heals = sum(v["heals"] for v in per.values())
    needed = sum(len(v["asked"]) for v in per.values())
    steps = sum(v["steps"] for v in per.values())
    secs = sum(v["seconds"] for v in per.values())
    return {"macros": n, "success": sum(v["ok"] for v in per.values()), "heal_asks": needed, "heals": heals,
            "right": sum(v["right"] for v in per.values()), "wrong": sum(v["wrong"] for v in per.values()),
            "ambiguous": sum(v["ambiguous"] for v in per.values()),
            "needs_you": sum(v["needs_you"] for v in per.values()),
            "model_calls_per_replay": round(sum(v["model_calls"] for v in per.values()) / n, 2) if n else 0.0,
            "matching_replays": sum(1 for v in per.values() if not v["asked"] and not v["needs_you"]),
            "matching_model_calls": sum(v["model_calls"] for v in per.values() if not v["asked"]),
            "per_step_s": round(secs / steps, 3) if steps else None}


def translating_model(prompt: str) -> str:
    """A scripted stand-in that knows the phone's languages (``--scripted``: it checks the
    bench's wiring, it is no model): it names the element whose words are the step's quoted
    words in any of the phone's languages."""
    import re

    from phone.virtual.i18n import translate

    step = re.search(r"The step: (.*)", prompt)
    said = re.findall(r"'([^']+)'", step.group(1)) if step else []
    listed = json.loads(prompt.split("size [w, h]):\n", 1)[1].split("\n\n")[0])["UI elements"]
    names = {w for s in said for w in (s, translate(s, "de"))}
    hit = next((e["id"] for e in listed if e["text"] in names), None)
    return json.dumps({"element": hit, "reason": "the step's words"})


#: Macros whose demonstration does a yardstick task: the agent runs that task for the speed comparison.
SAME_TASK = {"airplane_on": "settings.airplane_on", "wifi_off": "settings.wifi_off",
             "dark_theme_on": "settings.dark_theme_on", "stopwatch_start": "clock.stopwatch_start"}


def agent_per_step(client: Any, model: str, macros: list[str]) -> dict[str, dict[str, Any]]:
    """The agent (assembled as the window assembles it, autonomy "auto", the task's oracle as
    judge, no memory) on the tasks the macros do: seconds per step."""
    from agent.runner import drive
    from app.compose import RunRequest, build_run, make_parser
    from app.settings import LLMSettings, Settings, VisionSettings
    from phone.virtual.phone import VirtualPhone
    from phone.virtual.tasks import load_tasks

    settings = Settings(llm=LLMSettings(backend="openai", model=model), vision=VisionSettings(use_hierarchy="only"))
    parser = make_parser(settings, mode="tree")
    tasks = {t.id: t for t in load_tasks()}
    out: dict[str, dict[str, Any]] = {}
    for name in macros:
        if name not in SAME_TASK:
            continue
        task = tasks[SAME_TASK[name]]
        phone = VirtualPhone()
        task.setup(phone)
        run = build_run(RunRequest(task.goal, autonomy="auto", learn=False, remember=False,
                                   max_steps=task.step_budget), settings, device=phone, parser=parser, client=client,
                        judge=lambda final, t=task, p=phone: bool(t.is_success(p, final)), max_wait_s=0.2)
        t0 = time.perf_counter()
        events = list(drive(run.events))
        seconds = time.perf_counter() - t0
        done = next((e for e in events if isinstance(e, Finished)), None)
        steps = len(done.episode.steps) if done is not None else 0
        out[name] = {"task": task.id, "status": done.status.value if done else "?", "steps": steps,
                     "seconds": round(seconds, 2), "per_step_s": round(seconds / steps, 3) if steps else None,
                     "model_calls": run_cost(done.episode).model_calls if done else 0}
        print(f"agent on {task.id:28} {out[name]['status']:10} {steps} steps {seconds:.1f} s "
              f"({out[name]['per_step_s']} s/step, {out[name]['model_calls']} model calls)", flush=True)
        phone.close()
    return out


def client_for(args: argparse.Namespace) -> tuple[Any, Callable[[], None]]:
    """The model client (and how to stop its server), or (None, no-op) without a model."""
    from agent.llm import RetryPolicy, make_client

    if args.no_model:
        return None, lambda: None
    if args.scripted:
        from evaluation.scripted_model import ScriptedLLMServer

        server = ScriptedLLMServer(models=("scripted",), responder=translating_model).__enter__()
        return (make_client("ollama", "scripted", server.url, policy=RetryPolicy(timeout_s=30.0)),
                lambda: server.__exit__(None, None, None))
    if args.builtin:
        from app.builtin_model.catalog import by_alias
        from app.builtin_model.server import BuiltinServer, ServerOptions

        bundled = by_alias(args.builtin)
        server = BuiltinServer(bundled, ServerOptions(n_ctx=4096))
        url = server.start()
        return make_client("openai", bundled.alias, url, policy=RetryPolicy(timeout_s=180.0)), server.stop
    return make_client(args.backend, args.model, args.base_url, policy=RetryPolicy(timeout_s=180.0)), lambda: None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--builtin", default="", help="start this built-in model for the heals")
    ap.add_argument("--base-url", default="", help="or an OpenAI-compatible / Ollama server")
    ap.add_argument("--backend", default="openai")
    ap.add_argument("--model", default="")
    ap.add_argument("--no-model", action="store_true", help="no healer: the cascade alone")
    ap.add_argument("--scripted", action="store_true", help="a scripted stand-in that reads the step's words in the "
                                                            "phone's languages (checks the wiring only)")
    ap.add_argument("--only", default="", help="comma-separated macro names")
    ap.add_argument("--variants", default="", help="comma-separated variant names")
    ap.add_argument("--parser", default="tree")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--agent", action="store_true", help="also time the agent (the model given) on the tasks the "
                                                         "macros do, against the replay on the control phone")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    parse = make_parser(args.parser)
    recorded = [(record(name, goal, demo, parse), demo) for name, (goal, demo) in MACROS.items()
                if not args.only or name in args.only.split(",")]
    client, stop = client_for(args)
    healer = ModelHealer(client) if client is not None else None
    report: dict[str, Any] = {"model": getattr(client, "model", "none"), "variants": {}}
    try:
        for vname, variant in VARIANTS.items():
            if args.variants and vname not in args.variants.split(","):
                continue
            per = {rec.name: replay_one(rec, demo, variant, parse, healer) for rec, demo in recorded}
            s = summary(per)
            report["variants"][vname] = {"summary": s, "macros": per}
            print(f"{vname:28} success {s['success']}/{s['macros']}  heal asks {s['heal_asks']}  heals proposed "
                  f"{s['heals']} (right {s['right']}, wrong {s['wrong']}, ambiguous {s['ambiguous']})  needs you "
                  f"{s['needs_you']}  model calls/replay {s['model_calls_per_replay']}  matching replays "
                  f"{s['matching_replays']} with {s['matching_model_calls']} model calls  {s['per_step_s']} s/step",
                  flush=True)
            for name, v in per.items():
                if v["asked"] or not v["ok"]:
                    print(f"    {name}: {'ok' if v['ok'] else 'NOT ok'} asked {v['asked']} healed {v['healed_steps']} "
                          f"right {v['right']} wrong {v['wrong']} needs_you {v['needs_you']} levels {v['levels']}",
                          flush=True)
        if args.agent and client is not None:
            control = report["variants"].get("same (control)", {}).get("macros", {})
            agent = agent_per_step(client, str(getattr(client, "model", "")), [r.name for r, _ in recorded])
            report["agent"] = agent
            for name, a in agent.items():
                rep = control.get(name, {})
                if a["per_step_s"] and rep.get("per_step_s"):
                    print(f"{name:20} agent {a['per_step_s']:.2f} s/step vs replay {rep['per_step_s']:.3f} s/step "
                          f"({rep['model_calls']} model calls): {a['per_step_s'] / rep['per_step_s']:.0f}x faster",
                          flush=True)
    finally:
        stop()
    if args.json:
        args.json.write_text(json.dumps(report, indent=2, default=str), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
