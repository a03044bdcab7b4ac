"""``tapwise bench offline``: recorded real-app trajectories (DroidTask, LlamaTouch,
AITW/AITZ) replayed step by step: each planner proposes the next action on the recorded
screen with the gold history so far, nothing is executed, and the proposal is scored
against the recorded action.  Results go to a resumable results database; a summary
table is printed and a report optionally written.

Thin command layer (registered on ``app.cli.bench.bench_app``); the measures live in
``evaluation.offline``.  Heavy imports stay inside the command function.
"""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape
from rich.table import Table

from app.cli.bench import (
    DEFAULT_DB,
    bench_app,
    checked_llm,
    fail,
    interrupted,
    new_console,
    open_run,
    pct,
    say_skipped,
)


@bench_app.command("offline")
def offline(
    dataset: str = typer.Argument(..., help="Recorded trajectories: DroidTask folders (<app>/task*.yaml), LlamaTouch "
                                             "trace folders (N.png, N.xml, eventStructs.txt) or AITW/AITZ JSON(L) with "
                                             "screenshots."),
    planners: str = typer.Option("visiontasker,zeroshot-", help="Comma-separated planner names."),
    model: str = typer.Option("", help="Model name as the server knows it (default: the configured model)."),
    base_url: str = typer.Option("", help="LLM server URL (Ollama or OpenAI-compatible); default: the configured one."),
    backend: str = typer.Option("", help="'ollama' or 'openai' (OpenAI-compatible, e.g. llama.cpp)."),
    constrained: bool = typer.Option(True, "--constrained/--free", help="Structured replies with a per-screen JSON "
                                     "schema (the element enum built from the recorded screen), or free-text replies."),
    both: bool = typer.Option(False, "--both-replies", help="Run every planner with structured and with free replies "
                              "(paired on the same tasks)."),
    oracle: bool = typer.Option(False, "--oracle", help="A scripted model that answers every step with the recorded "
                                "one (the sanity ceiling); no LLM server needed."),
    limit: int = typer.Option(0, help="Only the first N tasks (0: all)."),
    only: str = typer.Option("", "--tasks", help="Comma-separated task ids or app names to keep (e.g. dialer,camera/task3)."),
    fmt: str = typer.Option("auto", "--format", help="auto, droidtask, aitw or llamatouch."),
    parse: str = typer.Option("tree", help="Screenshots with a view tree: 'tree' (tree only) or 'fusion' (tree + OCR + "
                              "detector); screenshots without one are always parsed from pixels."),
    samples: int = typer.Option(8, help="CoT-SC samples per step."),
    temperature: float = typer.Option(0.5, help="Sampling temperature of CoT-SC's samples (other calls use 0)."),
    timeout_s: float = typer.Option(120.0, help="Timeout per LLM request, seconds."),
    db: Path = typer.Option(DEFAULT_DB, help="Results database (created if missing)."),
    run: str = typer.Option("offline", help="Run name: the same name continues an interrupted run."),
    out: Path | None = typer.Option(None, help="Write the report (offline.md, offline.html) into this folder."),
    retry_errors: bool = typer.Option(False, help="Replay again the tasks whose recording could not be read."),
    vs_run: str = typer.Option("", "--vs-run", help="Another run in the same database (e.g. another model's) to "
                               "compare with, paired on the same tasks; labels then start with the run's name."),
    evidence: bool = typer.Option(True, "--evidence/--no-evidence", help="Plan as the window does: with the "
                                  "screen's own evidence for the goal (the learned step ranker), or the bare planner "
                                  "(always bare with --oracle, the ceiling of the model's path)."),
    keep_small: int = typer.Option(-1, "--keep-small", help="How many of the ranked elements a built-in model is "
                                   "offered (default: the shipped policy's choice; 0: no limit beyond its mass)."),
    folds: str = typer.Option("none", "--folds", help="'app': also replay each app's tasks with the evidence fitted "
                              "on the other apps only (leave one app out), reported beside the plain run."),
) -> None:
    """Replay recorded real-app trajectories step by step: each planner proposes the next
    action on the recorded screen (gold history so far), nothing is executed, and the
    proposal is scored against the recorded action."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from agent.llm import RetryPolicy, make_client
    from agent.planners.registry import check_planner, planner_bundle
    from agent.types import Autonomy
    from evaluation.offline import summary
    from evaluation.offline.bench import Cell, run_offline
    from evaluation.offline.datasets import load_dataset
    from evaluation.offline.oracle import MODEL as ORACLE_MODEL
    from evaluation.offline.oracle import GoldOracle
    from evaluation.offline.replay import RecordingParser, StepReplayer
    from evaluation.offline.types import DatasetError

    console = new_console()
    try:
        planner_list = [check_planner(p) for p in planners.split(",") if p.strip()]
        parser = RecordingParser(parse)
        kind, tasks, problems = load_dataset(dataset, fmt)
    except (ValueError, DatasetError) as exc:
        raise fail(console, str(exc)) from exc
    if not planner_list:
        raise fail(console, "name at least one planner (--planners)")
    every_task = list(tasks)  # a fold's evidence is fitted on all the other apps' tasks, not only those replayed
    keep = {k.strip() for k in only.split(",") if k.strip()}
    if keep:
        tasks = [t for t in tasks if t.task_id in keep or t.app in keep]
    if limit > 0:
        tasks = tasks[:limit]
    say_skipped(console, problems)
    if not tasks:
        raise fail(console, "no tasks to replay (check the path, --tasks and --limit)")
    if oracle:
        llm = {"model": ORACLE_MODEL, "base_url": "scripted-oracle", "backend": "openai"}
    else:
        llm = checked_llm(console, model=model, base_url=base_url, backend=backend)
    if folds not in ("none", "app"):
        raise fail(console, "--folds must be 'none' or 'app'")
    if folds == "app" and (oracle or not evidence):
        raise fail(console, "--folds app judges the learned evidence: it needs --evidence and a model, not --oracle")
    replies = (True, False) if both else (constrained,)
    cells = [Cell(p, c, f) for p in planner_list for c in replies for f in ((False, True) if folds == "app" else (False,))]
    settings = {**llm, "max_steps": 0, "sample_temperature": temperature, "samples": samples, "parse_mode": parse,
                "estimator": "chained", "timeout_s": timeout_s, "dataset": str(dataset), "format": kind.value,
                "benchmark": "offline", "planners": [c.label for c in cells], "tasks": len(tasks),
                "evidence": evidence and not oracle, "folds": folds, "keep_small": keep_small}
    oracles: dict[bool, GoldOracle] = {}

    def oracle_for(cell: Cell) -> GoldOracle | None:
        if not oracle:
            return None
        if cell.constrained not in oracles:
            oracles[cell.constrained] = GoldOracle(structured=cell.constrained).__enter__()
        return oracles[cell.constrained]

    from evaluation.offline.folds import FoldRankers

    fold_rankers = FoldRankers(every_task, db.parent / f"{db.stem}.folds" / run,
                               on_fit=lambda a: console.print(f"fitting the evidence without {escape(a)} …"))

    from agent.llm.base import ReplyCache

    # a fold cell often asks exactly what the plain cell asked (the same ranking): one reply for both
    reply_cache = ReplyCache()

    def replayer_for(cell: Cell, app: str) -> StepReplayer:
        gold = oracle_for(cell)
        url = gold.url if gold is not None else llm["base_url"]
        client = make_client(llm["backend"], llm["model"], url, policy=RetryPolicy(attempts=2, timeout_s=timeout_s))
        if folds == "app" and hasattr(client, "replies"):
            client.replies = reply_cache
        bundle = planner_bundle(cell.planner, client, autonomy=Autonomy.AUTO, samples=samples, temperature=temperature,
                                llm_grounder=False, constrained=cell.constrained)
        if evidence and gold is None:  # the scripted gold oracle is the ceiling of the model's path alone
            from dataclasses import replace as with_field

            from agent.knowledge.guided import with_maps
            from agent.knowledge.ranker import StepRanker
            from app.model_prefs import is_builtin

            ranker = fold_rankers.for_app(app) if cell.folds else StepRanker.shipped()
            if ranker is not None and keep_small >= 0:
                ranker = ranker.with_policy(with_field(ranker.policy, keep_small=keep_small))
            bundle = with_field(bundle, planner=with_maps(bundle.planner, None, ranker=ranker,
                                                          small_model=is_builtin(str(llm["model"]))))
        return StepReplayer(bundle, parser)

    store, resumed = open_run(console, db, run, settings, problems)
    total_steps = sum(len(t.steps) for t in tasks) * len(cells)
    console.print(f"{'continuing' if resumed else 'starting'} run [bold]{escape(run)}[/bold] in {db}: {len(tasks)} "
                  f"{kind.value} tasks ({total_steps // len(cells)} steps) × {len(cells)} planner/reply cells; model "
                  f"{escape(str(llm['model']))}")
    progress = Progress(TextColumn("[progress.description]{task.description}"), BarColumn(), MofNCompleteColumn(),
                        TimeElapsedColumn(), console=console)
    steps_of = {t.task_id: len(t.steps) for t in tasks}
    try:
        with progress:
            bar = progress.add_task("steps", total=total_steps)

            def on_skip(n: int) -> None:
                if n:
                    progress.console.print(f"{n} task cells already done; skipping them")
                    labels = {c.label for c in cells}
                    done = sum(steps_of.get(r.task_id, 0) for r in store.results(run) if r.planner in labels)
                    progress.update(bar, completed=min(done, total_steps))

            def on_step(task, index: int, rec: dict) -> None:
                progress.update(bar, advance=1, description=f"{task.task_id} step {index + 1}")

            def on_result(r, done: int, total: int) -> None:
                right = r.checkpoints_reached
                verdict = "[red]error[/red]" if r.error else ("[green]all right[/green]" if r.success else "")
                progress.console.print(f"{escape(r.planner)} · {escape(r.task_id)}: {right}/{r.checkpoints_total} "
                                       f"steps right {verdict} ({r.wall_s:.1f}s)"
                                       + (f" — {escape(r.error)}" if r.error else ""), soft_wrap=True)

            outcome = run_offline(store, run, tasks, cells, replayer_for, model=str(llm["model"]),
                                  oracle_for=oracle_for if oracle else None, retry_errors=retry_errors,
                                  on_skip=on_skip, on_step=on_step, on_result=on_result)
    except KeyboardInterrupt:
        raise interrupted(console, store, run, lambda n: f"{n} task cells saved") from None
    finally:
        for o in oracles.values():
            o.__exit__(None, None, None)
    wanted = {c.label for c in cells}
    ids = {t.task_id for t in tasks}
    results = [r for r in store.results(run) if r.planner in wanted and r.task_id in ids]
    if vs_run:
        from dataclasses import replace

        other = [r for r in store.results(vs_run) if r.task_id in ids] if vs_run in store.runs() else []
        if not other:
            console.print(f"[yellow]--vs-run {escape(vs_run)}: no results on these tasks in {db}[/yellow]")
        results = [replace(r, planner=f"{run}/{r.planner}") for r in results] + \
            [replace(r, planner=f"{vs_run}/{r.planner}") for r in other]
    store.close()
    console.print(f"ran {outcome.ran} task cells ({outcome.errors} unreadable), skipped {outcome.skipped} already done")
    table = Table(title=f"offline step evaluation — {kind.value}")
    for c in ("planner:replies", "tasks", "steps", "action accuracy", "element steps", "completion", "s/step"):
        table.add_column(c, justify="left" if c == "planner:replies" else "right", no_wrap=c == "planner:replies")
    for f in summary.by_label(results).values():
        table.add_row(f.label, str(f.tasks), str(f.steps), pct(f.accuracy.estimate if f.accuracy else None),
                      pct(f.element_accuracy), pct(f.completion.estimate if f.completion else None),
                      f"{f.s_per_step:.1f}")
    console.print(table)
    if folds == "app":
        per_app = Table(title="per app (fold): action accuracy / completion")
        for c in ("planner:replies", "app", "tasks", "action accuracy", "completion"):
            per_app.add_column(c, justify="left" if c in ("planner:replies", "app") else "right")
        for (lab, app_name), f in summary.by_app(results).items():
            per_app.add_row(lab, app_name, str(f.tasks), pct(f.accuracy.estimate if f.accuracy else None),
                            pct(f.completion.estimate if f.completion else None))
        console.print(per_app)
    if out is not None:
        from evaluation.offline import report as offline_report

        md_path, html_path = offline_report.write(out, results, settings, problems,
                                                  f"Tapwise offline benchmark — run {run}")
        console.print(f"report: {md_path} and {html_path}", soft_wrap=True)
