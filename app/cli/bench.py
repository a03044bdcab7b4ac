"""``tapwise bench``: offline AITW action matching, the online benchmark on the virtual
phone, latent-state accuracy, and reports.

Thin command layer: argument parsing, progress and tables.  The measures live in
``evaluation``; the virtual-phone glue in ``evaluation.online_bench``.  Heavy imports stay
inside the command functions.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from app.cli.bench_tables import pct, print_online_summary

if TYPE_CHECKING:
    from evaluation.results import ResultsDB

log = logging.getLogger(__name__)

bench_app = typer.Typer(
    name="bench",
    help="Benchmarks: AITW action matching, online runs on the virtual phone, latent-state accuracy, reports.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
)

DEFAULT_DB = Path("runs/bench.sqlite")


def new_console() -> Console:
    return Console()


def fail(console: Console, message: str, code: int = 2) -> typer.Exit:
    console.print(f"[red]{escape(message)}[/red]", soft_wrap=True)
    return typer.Exit(code)


def interrupted(console: Console, store: ResultsDB, run: str, saved: Callable[[int], str]) -> typer.Exit:
    """After Ctrl-C: close the results store, say what it holds of ``run`` (``saved(n)``) and
    that the same command continues; the exit (status 130) to raise."""
    n = len(store.results(run))
    store.close()
    console.print(f"[yellow]interrupted: {saved(n)}; run the same command again to continue[/yellow]")
    return typer.Exit(130)


def say_skipped(console: Console, problems) -> None:
    """One yellow line per input that was left out, and why."""
    for src, msg in problems:
        console.print(f"[yellow]skipped {escape(src)}: {escape(msg)}[/yellow]", soft_wrap=True)


def checked_llm(console: Console, *, model: str, base_url: str, backend: str) -> dict:
    """The LLM server the options (or the settings) name, checked before a long run: a bad
    option ends the command with its message; a server that looks wrong is warned about."""
    from app.settings import resolve_llm
    from evaluation import online_bench as bench_online

    try:
        llm = resolve_llm(model=model, base_url=base_url, backend=backend)
        warning = bench_online.preflight(llm)
    except ValueError as exc:
        raise fail(console, str(exc)) from exc
    if warning:
        console.print(f"[yellow]{escape(warning)}[/yellow]")
    return llm


# ---- aitw ---------------------------------------------------------------------------


def _trajectories(source: str, size):
    """A file or folder, or ``episode:ID`` / ``macro:NAME`` from the user's Tapwise database."""
    from evaluation.loaders import (
        LoadError,
        load_trajectories,
        trajectory_from_episode,
        trajectory_from_macro,
    )

    kind, _, ref = source.partition(":")
    if kind in ("episode", "macro") and ref and not Path(source).exists():
        from app.settings import load_settings
        from app.storage import Store, StoreError

        settings, _problem = load_settings()
        try:
            with Store(settings.database_path) as store:
                if kind == "episode":
                    return [trajectory_from_episode(store.load_episode(ref), size)]
                return [trajectory_from_macro(store.find_macro(ref), size)]
        except (StoreError, KeyError, LookupError) as exc:
            raise LoadError(f"{source}: {exc}") from exc
    return load_trajectories(source, size)


@bench_app.command("aitw")
def aitw(
    gold: str = typer.Argument(..., help="Gold trajectories: AITW/AITZ JSON(L), an export, a Tapwise episode or macro "
                                           "file, a folder, or episode:ID / macro:NAME from the Tapwise database."),
    pred: str = typer.Argument(..., help="Predicted trajectories, in any of the same forms."),
    screen: str = typer.Option("", help="Screen size WxH for Tapwise macros/episodes without screenshots, e.g. 1080x2400."),
    clamp: str = typer.Option("edges", help="Box clamping: 'edges' (geometric) or 'reference' (AITW reference code)."),
    require_text: bool = typer.Option(False, help="A type action also needs matching text to count as a match."),
    json_out: Path | None = typer.Option(None, "--json", help="Also write all scores (and every step's verdict) here."),
    steps: bool = typer.Option(False, help="Print every step's verdict."),
) -> None:
    """Score predicted actions against gold ones with the Android-in-the-Wild matching rule."""
    from evaluation.aitw import score
    from evaluation.loaders import LoadError, parse_size

    console = new_console()
    if clamp not in ("edges", "reference"):
        raise fail(console, "--clamp must be 'edges' or 'reference'")
    try:
        size = parse_size(screen)
        g = _trajectories(gold, size)
        p = _trajectories(pred, size)
    except (LoadError, ValueError) as exc:
        raise fail(console, str(exc)) from exc
    s = score(g, p, clamp=clamp, require_text=require_text)
    summary = s.summary()
    table = Table(title=f"AITW action matching — {len(s.steps)} gold steps in {s.episodes} episodes")
    table.add_column("measure")
    table.add_column("value", justify="right")
    for label, key in (
        ("action matching (all steps)", "action_matching"),
        ("screen-wise score (mean per episode)", "episode_mean"),
        ("episodes fully correct", "episodes_all_correct"),
        ("click region", "click_region"),
        ("scroll direction", "scroll_direction"),
        ("action type", "action_type"),
        ("typed text", "typed_text"),
    ):
        table.add_row(label, pct(summary[key]))
    console.print(table)
    cats = Table(title="per gold action type")
    for c in ("type", "matched", "steps", "accuracy"):
        cats.add_column(c, justify="right" if c != "type" else "left")
    for name, (ok, n) in summary["per_category"].items():
        cats.add_row(name, str(ok), str(n), pct(ok / n if n else None))
    console.print(cats)
    if s.unmatched_gold:
        console.print(f"[yellow]{len(s.unmatched_gold)} gold episode(s) had no prediction (scored 0): "
                      f"{', '.join(s.unmatched_gold[:10])}[/yellow]")
    if s.unmatched_pred:
        console.print(f"[yellow]{len(s.unmatched_pred)} predicted episode(s) had no gold: {', '.join(s.unmatched_pred[:10])}[/yellow]")
    if s.extra_pred_steps:
        console.print(f"[yellow]{s.extra_pred_steps} predicted step(s) beyond the gold length were ignored[/yellow]")
    if steps:
        st = Table(title="steps")
        for c in ("episode", "#", "gold", "pred", "match", "rule"):
            st.add_column(c)
        for x in s.steps:
            st.add_row(x.episode_id, str(x.index), x.gold.value, x.pred.value if x.pred else "–",
                       "yes" if x.matched else "no", escape(x.rule))
        console.print(st)
    if json_out is not None:
        summary["steps_detail"] = [
            {"episode_id": x.episode_id, "index": x.index, "gold": x.gold.value,
             "pred": x.pred.value if x.pred else None, "matched": x.matched, "rule": x.rule,
             "type_correct": x.type_correct, "text_correct": x.text_correct}
            for x in s.steps
        ]
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(json.dumps(summary, indent=1))
        console.print(f"scores written to {json_out}")


# ---- report / latent ----------------------------------------------------------------


def _open_db(console: Console, db: Path, run: str):
    from evaluation.results import ResultsDB, ResultsError

    if not db.exists():
        raise fail(console, f"{db}: no results database (run `tapwise bench online --db {db}` first)")
    try:
        store = ResultsDB(db)
        store.run_settings(run)
    except ResultsError as exc:
        raise fail(console, str(exc)) from exc
    return store


def open_run(console: Console, db: Path, run: str, settings: dict, problems) -> tuple:
    """The results database at ``db`` with ``run`` begun (or continued: then True) under
    ``settings``, and the inputs left out recorded with it; a bad database ends the command."""
    from evaluation.results import ResultsDB, ResultsError

    try:
        store = ResultsDB(db)
        resumed = store.open_run(run, settings)
    except ResultsError as exc:
        raise fail(console, str(exc)) from exc
    store.add_problems(run, problems)
    return store, resumed


def write_run_report(db_path: Path, run: str, out: Path, *, title: str | None = None, latent: bool = True) -> Path:
    """Write the Markdown + HTML report of ``run`` into ``out``; returns the HTML path."""
    from evaluation.latent import markdown_section, score_records
    from evaluation.report import ReportInput, write_report
    from evaluation.results import ResultsDB
    from evaluation.wordings import report_sections

    with ResultsDB(db_path) as store:
        settings = store.run_settings(run)
        results = store.results(run)
        problems = store.problems(run)
    extra = report_sections(results)
    if latent:
        recs = [rec for r in results for rec in r.step_records if rec.get("estimate") is not None]
        if recs:
            planners = sorted({r.planner for r in results if any(x.get("estimate") for x in r.step_records)})
            episodes = sum(1 for r in results if any(x.get("estimate") for x in r.step_records))
            extra.append(("Latent-state accuracy (Table 2, automated)", markdown_section(score_records(recs), episodes, planners)))
    inp = ReportInput(title or f"Tapwise benchmark — run {run}", results, settings, problems, extra)
    _, html_path = write_report(out, inp)
    return html_path


@bench_app.command("report")
def report(
    out: Path = typer.Argument(..., help="Folder to write report.md, report.html and the figures into."),
    db: Path = typer.Option(DEFAULT_DB, help="Results database."),
    run: str = typer.Option("default", help="Run name."),
    title: str = typer.Option("", help="Report title."),
) -> None:
    """Write the Markdown and self-contained HTML report of a benchmark run."""
    console = new_console()
    _open_db(console, db, run).close()
    html_path = write_run_report(db, run, out, title=title or None)
    console.print(f"report: {html_path}  (and {html_path.with_suffix('.md')})", soft_wrap=True)


@bench_app.command("latent")
def latent(
    db: Path = typer.Option(DEFAULT_DB, help="Results database of a `bench online` run with latent-state planners."),
    run: str = typer.Option("default", help="Run name."),
    json_out: Path | None = typer.Option(None, "--json", help="Also write the scores here."),
) -> None:
    """Score the latent-state estimates of a run against the virtual phone's truth (LLM-free rubric)."""
    from evaluation.latent import ASPECTS, NOT_JUDGED, score_records

    console = new_console()
    store = _open_db(console, db, run)
    results = store.results(run)
    store.close()
    recs = [rec for r in results for rec in r.step_records if rec.get("estimate") is not None]
    if not recs:
        raise fail(
            console,
            f"run {run!r} holds no latent-state estimates: run `tapwise bench online` with a planner that "
            "estimates latent state (e.g. zeroshot+)",
        )
    scores = score_records(recs)
    table = Table(title=f"latent-state accuracy — {len(recs)} steps")
    for c in ("aspect", "judged", "accuracy", "naïve baseline", "hard cases", "accuracy (hard)", "not judged"):
        table.add_column(c, justify="left" if c == "aspect" else "right")
    for a in ASPECTS:
        s = scores[a]
        table.add_row(a, str(s.judged), pct(s.accuracy), pct(s.baseline), str(s.hard_judged),
                      pct(s.hard_accuracy), str(s.not_judged))
    console.print(table)
    console.print("not judged by the rubric: " + "; ".join(NOT_JUDGED))
    if json_out is not None:
        json_out.write_text(json.dumps({a: vars(s) for a, s in scores.items()}, indent=1))


# ---- online ---------------------------------------------------------------------------


@bench_app.command("online")
def online(
    planners: str = typer.Option("zeroshot+,zeroshot-", help="Comma-separated planner names."),
    tasks: str = typer.Option("all", help="Comma-separated task ids, 'all', or a path to a task file/folder."),
    seeds: int = typer.Option(1, help="Seeds per task (each seed varies the phone's noise and sampling)."),
    model: str = typer.Option("", help="Model name as the server knows it (default: the configured model)."),
    base_url: str = typer.Option("", help="LLM server URL (Ollama or OpenAI-compatible); default: the configured one."),
    backend: str = typer.Option("", help="'ollama' or 'openai' (OpenAI-compatible, e.g. llama.cpp); default: guess from the URL."),
    noise: str = typer.Option("none", help="Comma-separated noise profiles: none, grounding, popups, labels, all."),
    max_steps: int = typer.Option(0, help="Step budget per episode (0: each task's own budget)."),
    temperature: float = typer.Option(0.5, help="Sampling temperature of CoT-SC's samples (other calls use 0)."),
    samples: int = typer.Option(8, help="CoT-SC samples per step."),
    processes: int = typer.Option(1, help="Run cells in this many parallel processes (or, with --ray and no address, local virtual phones)."),
    ray: bool = typer.Option(False, "--ray", help="Run the cells on a Ray cluster's phones (a local Ray instance unless --ray-address is given). Needs the farm extra."),
    ray_address: str = typer.Option("", "--ray-address", help="With --ray: 'auto', HOST:PORT or ray://… of a cluster whose hosts run `tapwise farm serve`."),
    db: Path = typer.Option(DEFAULT_DB, help="Results database (created if missing)."),
    run: str = typer.Option("default", help="Run name: the same name continues an interrupted run."),
    out: Path | None = typer.Option(None, help="Write the report into this folder when done."),
    retry_errors: bool = typer.Option(False, help="Run again the cells that ended in an error."),
    timeout_s: float = typer.Option(120.0, help="Timeout per LLM request, seconds."),
    estimator: str = typer.Option("chained", help="Latent-state estimator for '+' planners: 'chained' (five calls, as in the paper) or 'fused' (one JSON call)."),
    constrained: bool = typer.Option(True, "--constrained/--free", help="Structured replies whose JSON schema is built per screen (the server enforces it; the product default), or free-text replies."),
    parse: str = typer.Option("tree", help="Screen parsing: 'tree' (accessibility tree only, as in the paper) or 'fusion' (tree + OCR + detector)."),
    wording: str = typer.Option("0", "--wording", help="Which wording of each goal: 0 (the tuned one), a list such as 0,1,2, or 'all'; a task without it is skipped with a message."),
    language: str = typer.Option("en", "--language", help="The phone's language and the goals': en, de or en,de; a task without goals in it is skipped with a message."),
) -> None:
    """Run virtual-phone tasks headless with each planner and record Table 3's measures."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from evaluation import online_bench as bench_online
    from evaluation.online import plan_jobs, run_jobs
    from evaluation.wordings import asked_cells

    console = new_console()
    if estimator not in ("chained", "fused"):
        raise fail(console, "--estimator must be 'chained' or 'fused'")
    if parse not in ("tree", "fusion"):
        raise fail(console, "--parse must be 'tree' or 'fusion'")
    planner_list = [p.strip() for p in planners.split(",") if p.strip()]
    noise_list = [n.strip() for n in noise.split(",") if n.strip()]
    try:
        bench_online.check_planners(planner_list)
        bench_online.check_noises(noise_list)
        task_ids, problems = bench_online.select_tasks(tasks)
        asked, skipped = asked_cells(tasks, task_ids, wording, language)
    except ValueError as exc:
        raise fail(console, str(exc)) from exc
    llm = checked_llm(console, model=model, base_url=base_url, backend=backend)
    say_skipped(console, [*problems, *(("task", m) for m in skipped)])
    task_ids = list(asked)
    if not task_ids:
        raise fail(console, "no runnable tasks")
    settings = {
        **llm,
        "max_steps": max_steps,
        "sample_temperature": temperature,
        "samples": samples,
        "timeout_s": timeout_s,
        "parse_mode": parse,
        "estimator": estimator,
        "constrained": constrained,
        "tasks_source": tasks,
        "planners": planner_list,
        "noises": noise_list,
        "seeds": seeds,
    }
    jobs = plan_jobs(planner_list, task_ids, seeds, noise_list, settings, asked=asked)
    store, resumed = open_run(console, db, run, settings, problems)
    console.print(
        f"{'continuing' if resumed else 'starting'} run [bold]{escape(run)}[/bold] in {db}: {len(planner_list)} planners × "
        f"{len(task_ids)} tasks × {seeds} seeds × {len(noise_list)} noise = {len(jobs)} episodes; model "
        f"{escape(str(llm['model']))} at {escape(str(llm['base_url']))}"
    )
    progress = Progress(
        TextColumn("[progress.description]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=console,
    )
    with progress:
        bar = progress.add_task("episodes", total=len(jobs))

        def on_skip(n: int) -> None:
            if n:
                progress.console.print(f"{n} episodes already done; skipping them")
            progress.update(bar, completed=n)

        def on_result(r, done: int, total: int) -> None:
            verdict = "[red]error[/red]" if r.error else ("[green]success[/green]" if r.success else "fail")
            asked = "" if (r.wording, r.language) == (0, "en") else f" · {r.language} w{r.wording}"
            progress.console.print(f"{escape(r.planner)} · {escape(r.task_id)}{asked} · seed {r.seed} · {r.noise}: {verdict}"
                                   f" in {r.steps} steps ({r.wall_s:.1f}s)" + (f" — {escape(r.error)}" if r.error else ""))
            progress.update(bar, completed=done)

        try:
            if ray or ray_address:
                outcome = _run_on_ray(console, progress, store, run, jobs, ray_address, processes, retry_errors,
                                      on_result, on_skip)
            else:
                outcome = run_jobs(store, run, jobs, bench_online.run_cell, processes=processes,
                                   retry_errors=retry_errors, on_result=on_result, on_skip=on_skip)
        except KeyboardInterrupt:
            raise interrupted(console, store, run, lambda n: f"{n} of {len(jobs)} episodes saved") from None
    results = store.results(run)
    store.close()
    console.print(f"ran {outcome.ran} episodes ({outcome.errors} errors), skipped {outcome.skipped} already done")
    print_online_summary(console, results)
    if out is not None:
        html_path = write_run_report(db, run, out)
        console.print(f"report: {html_path}", soft_wrap=True)


def _run_on_ray(console: Console, progress, store, run: str, jobs, address: str, processes: int,
                retry_errors: bool, on_result, on_skip):
    """The cells on a Ray cluster (``evaluation.farm.driver``); results still go through ``store``."""
    from evaluation.farm.driver import FarmError, FarmOptions, run_on_ray

    def on_phones(slots) -> None:
        progress.console.print(f"{len(slots)} phone(s) in the farm: " + ", ".join(escape(s.label()) for s in slots))

    opts = FarmOptions(address=address or None, local_phones=max(processes, 2))
    try:
        return run_on_ray(store, run, jobs, opts, retry_errors=retry_errors, on_result=on_result, on_skip=on_skip,
                          on_phones=on_phones)
    except FarmError as exc:
        store.close()
        raise fail(console, str(exc)) from exc


@bench_app.command("export-gold")
def export_gold(
    out: Path = typer.Argument(..., help="JSON file to write the gold trajectories to (AITW nested form)."),
    tasks: str = typer.Option("all", help="Comma-separated task ids, 'all', or a task file/folder."),
) -> None:
    """Export the virtual phone's tasks' reference solutions as AITW gold trajectories."""
    from evaluation import online_bench as bench_online
    from evaluation.loaders import dump_trajectories

    console = new_console()
    try:
        task_ids, problems = bench_online.select_tasks(tasks)
        trajectories, failures = bench_online.gold_trajectories(tasks, task_ids)
    except ValueError as exc:
        raise fail(console, str(exc)) from exc
    say_skipped(console, [*problems, *failures])
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(dump_trajectories(trajectories))
    console.print(f"{len(trajectories)} gold trajectories written to {out}")


# the commands in their own modules register themselves on ``bench_app``
from app.cli import bench_escalation as _bench_escalation  # noqa: E402,F401
from app.cli import bench_grounding as _bench_grounding  # noqa: E402,F401
from app.cli import bench_offline as _bench_offline  # noqa: E402,F401
from app.cli import bench_supervised as _bench_supervised  # noqa: E402,F401
