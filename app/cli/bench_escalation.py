"""``tapwise bench escalation``: what a bigger model behind the run's model buys, measured
with the scripted supervisor (``evaluation.supervised``).

Three arms on the same tasks, each run assembled as the window assembles it
(``app.compose.build_run``, every step waiting for approval): the small model alone, the
bigger model alone, and the small model with escalation to the bigger one (a step goes
to it when the small one is unsure, its reply is unusable, or two proposals were rejected
on a screen; consent is given for the measurement).  Per arm: tasks completed,
interventions per task (rejections + edits + demonstrations), the share of model steps
the bigger model proposed, and each model's seconds.  ``--wording N`` runs each task's
N-th goal wording (tasks with fewer wordings are left out and counted).  Models come
from built-in servers (``--small-builtin``/``--big-builtin``) or servers already running
(``--small-url``/``--big-url`` with ``--small-model``/``--big-model``).  Results are written
per task to ``--out`` as they finish; ``--resume`` skips tasks already there.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import typer
from rich.console import Console

from app.cli.bench import bench_app, fail

ARMS = ("small", "big", "escalate")


def _server(alias: str, url: str, model: str, console: Console, started: list[Any]) -> tuple[str, str]:
    """(base URL, model name) of a built-in model it starts, or of a running server."""
    if not alias:
        if not url or not model:
            raise fail(console, "give a built-in model (--*-builtin) or a server URL and model name")
        return url, model
    from app.cli.model import start_builtin

    own, bundled, base = start_builtin(console, alias)
    started.append(own)
    return base, bundled.alias


@bench_app.command("escalation")
def escalation(
    tasks: str = typer.Option("yardstick", "--tasks", help="A task set (yardstick), 'all', or comma-separated ids."),
    wording: int = typer.Option(0, "--wording", min=0, help="Which goal wording of each task (0: the first)."),
    arms: str = typer.Option(",".join(ARMS), help="Comma-separated arms: small, big, escalate."),
    small_builtin: str = typer.Option("", help="Built-in model for the small model (e.g. smollm2-135m)."),
    big_builtin: str = typer.Option("", help="Built-in model for the bigger model (e.g. qwen2.5-coder-0.5b)."),
    small_url: str = typer.Option("", help="OpenAI-compatible server of the small model."),
    small_model: str = typer.Option("", help="The small model's name on its server."),
    big_url: str = typer.Option("", help="OpenAI-compatible server of the bigger model."),
    big_model: str = typer.Option("", help="The bigger model's name on its server."),
    planner: str = typer.Option("", help="Planner for both models (default: as the settings say)."),
    budget: float = typer.Option(2.0, help="Step budget as a multiple of the task's own budget."),
    timeout_s: float = typer.Option(300.0, help="Timeout per LLM request, seconds."),
    out: Path | None = typer.Option(None, help="JSON lines, one per task and arm, written as they finish."),
    resume: bool = typer.Option(False, help="Skip (task, arm, wording) rows already in --out."),
    report: Path | None = typer.Option(None, help="Run nothing: print the figures of these JSON lines (a --out file)."),
) -> None:
    """Escalation one step at a time, against each model alone, under the scripted supervisor."""
    if report is not None:
        print_report(report, Console(highlight=False))
        return
    from app.compose import make_parser
    from app.settings import load_settings
    from evaluation.online_bench import select_tasks
    from phone.virtual.tasks import load_tasks, tasks_by_id

    console = Console(highlight=False)
    chosen = [a.strip() for a in arms.split(",") if a.strip()]
    bad = [a for a in chosen if a not in ARMS]
    if bad:
        raise fail(console, f"unknown arm(s) {bad}; use {', '.join(ARMS)}")
    settings, _ = load_settings()
    try:
        ids, _ = select_tasks(tasks)
    except ValueError as exc:
        raise fail(console, str(exc)) from None
    by_id = tasks_by_id(load_tasks())
    skipped = [t for t in ids if len(by_id[t].goals) <= wording]
    ids = [t for t in ids if len(by_id[t].goals) > wording]
    if skipped:
        console.print(f"{len(skipped)} task(s) have no wording {wording}: {', '.join(skipped)}")
    done: set[tuple[str, str, int]] = set()
    if resume and out is not None and out.exists():
        for line in out.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            done.add((row["task_id"], row["arm"], row["wording"]))
    started: list[Any] = []
    try:
        small = _server(small_builtin, small_url, small_model, console, started) if {"small", "escalate"} & set(chosen) else None
        big = _server(big_builtin, big_url, big_model, console, started) if {"big", "escalate"} & set(chosen) else None
        settings = settings.model_copy(update={"llm": settings.llm.model_copy(update={"backend": "openai"})})
        parser = make_parser(settings, mode="tree")
        for arm in chosen:
            rows = [_run_task(by_id[tid], arm, wording, small, big, settings, parser, budget, timeout_s, planner,
                              console, done, out)
                    for tid in ids]
            _summary(console, arm, [r for r in rows if r is not None])
    finally:
        for own in started:
            own.stop()


def _run_task(task: Any, arm: str, wording: int, small: tuple[str, str] | None, big: tuple[str, str] | None,
              settings: Any, parser: Any, budget: float, timeout_s: float, planner: str, console: Console,
              done: set[tuple[str, str, int]], out: Path | None) -> dict[str, Any] | None:
    from agent.events import Aborted, ErrorEvent, Executed, Rejected
    from agent.privacy import AllowAll, Consent
    from agent.secrets import MappingSource
    from app.compose import RunRequest, build_run, close_client, make_client
    from evaluation.supervised import supervise
    from phone.virtual.phone import VirtualPhone

    if (task.id, arm, wording) in done:
        return None
    first = small if arm in ("small", "escalate") else big
    assert first is not None
    goal = task.goals[wording]
    counts = {"model_steps": 0, "escalated": 0}
    seconds: dict[str, float] = {}

    def count(event: Any) -> None:
        if not isinstance(event, (Executed, Rejected, ErrorEvent, Aborted)) or event.record is None:
            return
        p = event.record.proposal
        if p is None or not p.llm_calls:
            return
        counts["model_steps"] += 1
        counts["escalated"] += bool(p.escalated)
        for c in p.llm_calls:
            seconds[c.model] = seconds.get(c.model, 0.0) + c.latency_ms / 1000.0

    phone = VirtualPhone(seed=0)
    task.setup(phone)
    clients: list[Any] = []

    def make_run(run_goal: str, device: Any, judge: Any) -> Any:
        client = make_client(settings, model=first[1], backend="openai", base_url=first[0], timeout_s=timeout_s)
        bigger = (make_client(settings, model=big[1], backend="openai", base_url=big[0], timeout_s=timeout_s)
                  if arm == "escalate" and big is not None else None)
        clients.extend(c for c in (client, bigger) if c is not None)
        return build_run(RunRequest(goal=run_goal, planner=planner or None, autonomy="approve", learn=False,
                                    model=first[1], max_steps=max(1, round(task.step_budget * budget))),
                         settings, device=device, parser=parser, judge=judge, client=client, bigger=bigger,
                         consent=Consent(AllowAll()), secrets=MappingSource(task.secrets), ask_on_error=True,
                         confirm_done=True, max_wait_s=0.2).events

    t0 = time.perf_counter()
    try:
        r = supervise(task, phone, phone, make_run, wording=wording, on_event=count)
    finally:
        phone.close()
        for c in clients:
            close_client(c)
    row = {"task_id": task.id, "arm": arm, **asdict(r), "wording": wording, "goal": goal,
           "interventions": r.interventions, **counts, "model_seconds": {k: round(v, 1) for k, v in seconds.items()},
           "wall_s": round(time.perf_counter() - t0, 1)}
    console.print(f"{arm:9} {task.id:30} {'done' if r.completed else 'NOT done':8} interventions {r.interventions} "
                  f"(rej {r.rejections}, dem {r.demonstrations}) escalated {counts['escalated']}/{counts['model_steps']}"
                  f"  wall {row['wall_s']:.0f} s", soft_wrap=True)
    if out is not None:
        with out.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(row) + "\n")
    return row


def _summary(console: Console, arm: str, rows: list[dict[str, Any]]) -> None:
    if not rows:
        return
    steps = sum(r["model_steps"] for r in rows)
    esc = sum(r["escalated"] for r in rows)
    mean = sum(r["interventions"] for r in rows) / len(rows)
    console.print(f"[bold]{arm}:[/bold] {sum(r['completed'] for r in rows)}/{len(rows)} completed, "
                  f"interventions per task {mean:.2f}, escalated steps {esc}/{steps}"
                  f"{f' ({esc / steps:.0%})' if steps else ''}", soft_wrap=True)


def print_report(path: Path, console: Console) -> None:
    """Per wording and arm: tasks, completed, interventions per task, the share of model steps
    the bigger model proposed, each model's seconds; then all wordings together (Markdown)."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault((str(r["wording"]), r["arm"]), []).append(r)
        groups.setdefault(("all", r["arm"]), []).append(r)
    console.print("| wording | arm | tasks | completed | interventions / task | steps by the bigger model | model seconds |",
                  soft_wrap=True)
    console.print("|---|---|---|---|---|---|---|")
    for (wording, arm), rs in sorted(groups.items(), key=lambda kv: (kv[0][0] == "all", kv[0][0],
                                                                      ARMS.index(kv[0][1]))):
        steps = sum(r["model_steps"] for r in rs)
        esc = sum(r["escalated"] for r in rs)
        secs: dict[str, float] = {}
        for r in rs:
            for m, v in r["model_seconds"].items():
                secs[m] = secs.get(m, 0.0) + v
        share = f"{esc}/{steps} ({esc / steps:.0%})" if steps else "—"
        console.print(f"| {wording} | {arm} | {len(rs)} | {sum(r['completed'] for r in rs)} | "
                      f"{sum(r['interventions'] for r in rs) / len(rs):.2f} | {share} | "
                      + ", ".join(f"{m} {v:.0f}" for m, v in sorted(secs.items())) + " |", soft_wrap=True)
