"""Agent overhead and LLM cost per step, for each planner variant, on the virtual phone.

Runs tasks end to end with every planner through the real clients over loopback HTTP.
By default the LLM is the scripted fake server (replies chosen from the current screen),
so the figures isolate the agent's own cost: per step, wall time minus LLM latency minus
device time (screenshot + input) minus screen parsing = agent overhead; the device and
parse shares come from each stored step's timings (``Step.timings_ms``).  With
``--backend openai --base-url URL --model M`` the same runs go to a real server.

    .venv/bin/python bench/bench_agent.py [--tasks settings.wifi_off ...] [--out results.json]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent.events import Aborted, ErrorEvent, Executed, Finished, Observed, Proposed, Rejected
from agent.runner import drive, run_episode
from agent.types import Autonomy
from app import compose
from app.settings import LLMSettings, Settings
from evaluation.scripted_model import Reply, ScriptedLLMServer

# screen phrase (in the *current* screen) -> next command, first match wins
SCRIPTS: dict[str, list[tuple[str, str]]] = {
    "settings.wifi_off": [
        ("switch (Wi‑Fi) off", "done"), ("switch (Wi‑Fi) on", "tap the Wi-Fi switch"),
        ("Internet · ", "tap Internet"), ("Network & internet", "tap Network & internet"), ("", "open Settings")],
    "settings.airplane_on": [
        ("switch (Airplane mode) on", "done"), ("switch (Airplane mode) off", "tap the Airplane mode switch"),
        ("Network & internet", "tap Network & internet"), ("", "open Settings")],
    "settings.bluetooth_on": [
        ("Bluetooth · Visible", "done"), ("switch (Bluetooth) off", "tap the Bluetooth switch"),
        ("Connected devices · ", "tap Connected devices"), ("", "open Settings")],
}


def _current_screen(prompt: str) -> str:
    blocks = re.findall(r"<screen>\n(.*?)\n</screen>", prompt, re.S)
    return blocks[-1] if blocks else ""


def responder_for(task_id: str):
    rules = SCRIPTS[task_id]
    last = {"screen": ""}

    def command(prompt: str) -> str:
        # prompts without a screen (completion) are judged on the last screen seen
        screen = _current_screen(prompt) or last["screen"]
        last["screen"] = screen
        return next(cmd for phrase, cmd in rules if phrase in screen)

    def respond(prompt: str) -> Reply:
        cmd = command(prompt)
        done = cmd == "done"
        if "Estimate the hidden state" in prompt:
            text = json.dumps({"performed_action": "Tapped.", "screen_summary": "A settings page.",
                               "progression": "You have made progress.", "mistakes": "No mistakes.",
                               "completed": done, "completion_reason": "checked", "confidence": 0.8})
        elif "Performed action:" in prompt:
            text = "Tapped the item that was asked for."
        elif "Screen summary:" in prompt:
            text = "A settings page of the Settings app."
        elif 'starts with "You have"' in prompt:
            text = "You have opened Settings and moved towards the option."
        elif 'answer exactly "No mistakes."' in prompt:
            text = "No mistakes."
        elif "Start your answer with Yes or No" in prompt:
            text = "Yes, it is done." if done else "No, not yet."
        elif 'starts with "Answer:"' in prompt:
            text = f"The option is reachable from here. Answer: {cmd}"
        elif "Thought: <what you notice" in prompt:
            text = f"This screen leads towards the goal.\nAction: {cmd}"
        elif "Plan ahead, then act." in prompt:
            text = json.dumps({"plan": ["tap", "complete"], "action": "complete" if done else cmd, "reason": "r"})
        elif "Find the on-screen element" in prompt or "Choose a strategy" in prompt:
            text = '{"element": null, "strategy": "block", "reason": "none"}'
        elif "Check an action before" in prompt:
            text = '{"verdict": "follow", "confident": true, "confidence": 0.9, "reason": "ok"}'
        else:
            text = cmd
        return Reply(text, prompt_tokens=len(prompt) // 4, completion_tokens=max(1, len(text) // 4))

    return respond


def run_one(planner_name: str, task: Any, client: Any, settings: Settings, *, fused: bool, samples: int,
            max_steps: int) -> dict:
    from phone.virtual.phone import VirtualPhone

    phone = VirtualPhone()
    task.setup(phone)
    parser = compose.make_parser(settings, mode="tree")
    bundle = compose.planner_bundle(planner_name, client, autonomy=Autonomy.AUTO, samples=samples, fused=fused,
                                    llm_grounder=False)
    planner = bundle.planner
    gen = run_episode(task.goal, phone, parser, planner, None,
                      settings=compose.run_settings(settings, autonomy=Autonomy.AUTO, max_steps=max_steps,
                                                    allow_sensitive=True, max_wait_s=0),
                      estimator=bundle.estimator, grounder=bundle.grounder, assessor=bundle.assessor)
    t0 = time.perf_counter()
    steps = calls = ptok = ctok = 0
    llm_ms = device_ms = parse_ms = 0.0
    status = "?"
    errors = 0
    for ev in drive(gen):
        record = ev.record if isinstance(ev, Executed | Rejected | Aborted | ErrorEvent) else None
        if record is not None:  # each stored step says where its time went
            device_ms += sum(ms for stage, ms in record.timings_ms if stage in ("frame", "hierarchy", "execute"))
            parse_ms += record.timing("parse") or 0.0
        if isinstance(ev, (Proposed, ErrorEvent)):
            cs = ev.proposal.llm_calls if isinstance(ev, Proposed) else ev.calls
            errors += isinstance(ev, ErrorEvent)
            calls += len(cs)
            llm_ms += sum(c.latency_ms for c in cs)
            ptok += sum(c.prompt_tokens or 0 for c in cs)
            ctok += sum(c.completion_tokens or 0 for c in cs)
        elif isinstance(ev, Observed):
            steps += 1
        elif isinstance(ev, Finished):
            status = ev.status.value
    wall = (time.perf_counter() - t0) * 1000
    steps = max(steps, 1)
    return {
        "planner": planner_name + (" (fused)" if fused and planner.uses_latent else ""), "task": task.id,
        "status": status, "success": bool(task.is_success(phone)), "steps": steps, "step_errors": errors,
        "step_ms": wall / steps, "llm_ms": llm_ms / steps, "device_ms": device_ms / steps,
        "parse_ms": parse_ms / steps, "overhead_ms": (wall - llm_ms - device_ms - parse_ms) / steps,
        "calls_per_step": calls / steps, "prompt_tokens_per_step": ptok / steps,
        "completion_tokens_per_step": ctok / steps,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--planners", nargs="*", default=[p for p in compose.PLANNER_NAMES if p != "adapter"])
    ap.add_argument("--tasks", nargs="*", default=list(SCRIPTS))
    ap.add_argument("--backend", default=None, help="openai|ollama: use a real server instead of the fake")
    ap.add_argument("--base-url", default=None)
    ap.add_argument("--model", default="fake-model")
    ap.add_argument("--samples", type=int, default=8)
    ap.add_argument("--max-steps", type=int, default=8)
    ap.add_argument("--fused", action="store_true", help="also run the '+' planners with the fused estimator")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)

    from rich.console import Console
    from rich.table import Table

    from phone.virtual.tasks import load_tasks

    tasks = {t.id: t for t in load_tasks()}
    rows = []
    fake = None
    for task_id in args.tasks:
        if args.backend:
            settings = Settings(llm=LLMSettings(model=args.model, retries=1, timeout_s=120))
            client = compose.make_client(settings, backend=args.backend, base_url=args.base_url)
        else:
            fake = ScriptedLLMServer(models=(args.model,), responder=responder_for(task_id)).start()
            settings = Settings(llm=LLMSettings(backend="ollama", ollama_host=fake.url, model=args.model, retries=1))
            client = compose.make_client(settings)
        for name in args.planners:
            variants = [False, True] if (args.fused and name.endswith("+")) else [False]
            for fused in variants:
                rows.append(run_one(name, tasks[task_id], client, settings, fused=fused, samples=args.samples,
                                    max_steps=args.max_steps))
        if fake is not None:
            fake.stop()

    # aggregate per planner
    table = Table(title=f"agent cost per step ({'fake LLM' if not args.backend else args.model})")
    for col in ("planner", "runs ok", "steps", "step errors", "overhead ms", "parse ms", "device ms", "LLM ms", "calls/step",
                "prompt tok/step", "reply tok/step"):
        table.add_column(col, justify="right" if col != "planner" else "left")
    by: dict[str, list[dict]] = {}
    for r in rows:
        by.setdefault(r["planner"], []).append(r)
    summary = {}
    for name, rs in by.items():
        def mean(key: str, rs: list[dict] = rs) -> float:
            return statistics.fmean(r[key] for r in rs)
        summary[name] = {k: round(mean(k), 2) for k in ("overhead_ms", "parse_ms", "device_ms", "llm_ms",
                                                         "calls_per_step", "prompt_tokens_per_step",
                                                         "completion_tokens_per_step", "steps")}
        summary[name]["succeeded"] = sum(r["success"] for r in rs)
        summary[name]["step_errors"] = sum(r["step_errors"] for r in rs)
        summary[name]["runs"] = len(rs)
        s = summary[name]
        table.add_row(name, f"{s['succeeded']}/{s['runs']}", f"{s['steps']:.1f}", str(s["step_errors"]), f"{s['overhead_ms']:.1f}",
                      f"{s['parse_ms']:.1f}", f"{s['device_ms']:.0f}", f"{s['llm_ms']:.0f}",
                      f"{s['calls_per_step']:.1f}", f"{s['prompt_tokens_per_step']:.0f}",
                      f"{s['completion_tokens_per_step']:.0f}")
    Console(width=160).print(table)
    if args.out:
        args.out.write_text(json.dumps({"runs": rows, "summary": summary}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
