"""``tapwise bench grounding DATASET``: "tap X" instructions on real screenshots
(ScreenSpot format), each carried out as a one-step goal the way the window carries out a
step — pixel parse, the planner with the screen's own evidence, the model's structured
reply, the grounder — and scored by whether the tap lands in the target box.

The built-in model is started by default; ``--model`` names an Ollama model (or, with
``--base-url``/``--backend``, any OpenAI-compatible server's).  ``--chooser oracle``
replaces the model by a script that always names the element under the target: the
ceiling the parse allows, no model needed.  Results go to a JSON-lines file as they are
known; the same command continues an interrupted run.  Prints a line per instruction and
the figures (overall, text, icon; for the whole set and each half of its screens).
"""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from app.cli.bench import bench_app, fail

DEFAULT_BUILTIN = "qwen2.5-coder-0.5b"


@bench_app.command("grounding")
def grounding(
    dataset: Path = typer.Argument(..., help="A ScreenSpot-format folder (*.json records + images/) or JSON file."),
    model: str = typer.Option("", help="An Ollama model (or a model of --base-url's server); default: the built-in model."),
    builtin: str = typer.Option(DEFAULT_BUILTIN, help="The built-in model started when --model is not given."),
    base_url: str = typer.Option("", help="LLM server URL (default: the configured one)."),
    backend: str = typer.Option("", help="'ollama' or 'openai' (OpenAI-compatible, e.g. llama.cpp)."),
    chooser: str = typer.Option("model", help="'model' (the window's step) or 'oracle' (the element under the "
                                "target: the parse's ceiling, no model)."),
    planner: str = typer.Option("zeroshot-", help="Planner of the step."),
    constrained: bool = typer.Option(True, "--constrained/--free", help="Structured replies (a per-screen JSON "
                                     "schema) or free text."),
    evidence: bool = typer.Option(True, "--evidence/--no-evidence", help="The screen's own evidence for the goal."),
    second_look: bool = typer.Option(True, "--second-look/--no-second-look", help="When no element's words match "
                                     "the instruction, read the screen again closer (agent.look_again)."),
    half: str = typer.Option("all", help="Only the screens of half A or B (every other screen by file name), or all."),
    limit: int = typer.Option(0, help="Only the first N instructions (0: all)."),
    out: Path = typer.Option(Path("grounding-results.jsonl"), help="Results file (JSON lines); the same file "
                             "continues an interrupted run."),
    timeout_s: float = typer.Option(120.0, help="Timeout per LLM request, seconds."),
) -> None:
    """Strict tap accuracy and the parse's coverage of the targets on real screens."""
    from evaluation.grounding import bench, summary
    from evaluation.grounding.records import RecordsError, load_records
    from vision.config import PipelineConfig
    from vision.pipeline import ScreenParser

    console = Console(highlight=False)
    if chooser not in ("model", "oracle"):
        raise fail(console, "--chooser must be 'model' or 'oracle'")
    try:
        records, problems = load_records(dataset)
    except RecordsError as exc:
        raise fail(console, str(exc)) from None
    for key, why in problems:
        console.print(f"[yellow]skipped {escape(key)}: {escape(why)}[/yellow]", soft_wrap=True)
    if half.upper() in ("A", "B"):
        records = [r for r in records if r.half == half.upper()]
    if limit > 0:
        records = records[:limit]
    if not records:
        raise fail(console, "no instructions to run (check the path, --half and --limit)")
    settings: dict[str, object] = {"dataset": str(dataset), "chooser": chooser, "planner": planner,
                                   "constrained": constrained, "evidence": evidence, "second_look": second_look,
                                   "model": model or f"builtin:{builtin}" if chooser == "model" else "",
                                   "parse": "vision"}
    try:
        results = bench.ResultsFile(out, settings)
    except ValueError as exc:
        raise fail(console, str(exc)) from None
    parser = ScreenParser(PipelineConfig(mode="vision", remember_previous=False))
    looker = _second_look(parser) if second_look else None
    server = None
    try:
        if chooser == "oracle":
            picker: bench.Chooser = bench.OracleChooser()
        else:
            picker, server = _model_chooser(console, model, builtin, base_url, backend, planner, constrained,
                                            evidence, timeout_s, pending=len(records) - len(results.done))
        progress = bench.Progress(
            on_screen=lambda name, s: console.print(f"[dim]{escape(name)}: parsed in {s:.2f} s[/dim]"),
            on_verdict=lambda v, i, n: console.print(
                f"{i}/{n} {'[green]in[/green] ' if v.inside else '[red]out[/red]'} {v.kind:4} "
                f"{escape(v.instruction)!s:40.40} -> {escape(v.reply or v.error or '')}"
                f"{'' if v.covered else ' [yellow](target not in the parse)[/yellow]'}"
                f"{' [cyan](looked again)[/cyan]' if v.looked_again else ''}", soft_wrap=True))
        try:
            verdicts = bench.run(records, parser.parse, picker, results, second_look=looker, progress=progress)
        except KeyboardInterrupt:
            console.print(f"[yellow]interrupted: {len(results.done)} instructions saved in {out}; run the same "
                          "command again to continue[/yellow]")
            raise typer.Exit(130) from None
    finally:
        if server is not None:
            server.stop()
    if progress.skipped:
        console.print(f"{progress.skipped} instructions already in {out}, not run again")
    table = Table(title=f"grounding — {escape(str(dataset))} ({chooser})")
    for c in ("instructions", "n", "strict accuracy", "coverage", "s/instruction"):
        table.add_column(c, justify="left" if c == "instructions" else "right")
    for f in summary.table(verdicts):
        table.add_row(f.label, str(f.n), summary.pct(f.accuracy), summary.pct(f.coverage), f"{f.seconds:.1f}")
    console.print(table)
    if chooser == "model":
        console.print("decided by: " + "; ".join(f"{who} {n} ({ok} inside)" for who, n, ok in summary.deciders(verdicts)))
    targets, offered = summary.naming_counts(verdicts)
    for what, counts in (("elements under the targets", targets), ("elements offered", offered)):
        total = sum(counts.values())
        if total:
            console.print(f"{what}: " + ", ".join(f"{k} {n} ({100 * n / total:.1f} %)" for k, n in counts.items())
                          + f" of {total}")
    looked = [v for v in verdicts if v.looked_again]
    console.print(f"second look on {len(looked)} instructions ({sum(v.inside for v in looked)} taps inside)")
    console.print(f"results: {out}")


def _second_look(parser: object):  # type: ignore[no-untyped-def]
    from agent.look_again import SecondLook

    return SecondLook(parser.ocr_backend())  # type: ignore[attr-defined]


def _model_chooser(console: Console, model: str, builtin: str, base_url: str, backend: str, planner: str,
                   constrained: bool, evidence: bool, timeout_s: float, *, pending: int):  # type: ignore[no-untyped-def]
    """The window's step as a chooser, and the built-in server it started (or None)."""
    from dataclasses import replace

    from agent.knowledge.guided import with_maps
    from agent.llm import RetryPolicy, make_client
    from agent.planners.registry import check_planner, planner_bundle
    from agent.types import Autonomy
    from evaluation.grounding.bench import ModelChooser
    from evaluation.offline.replay import StepReplayer

    server = None
    if pending and not model:
        from app.builtin_model.catalog import ModelFileError, by_alias
        from app.builtin_model.server import BuiltinServer, ServerError, ServerOptions

        try:
            bundled = by_alias(builtin)
            server = BuiltinServer(bundled, ServerOptions(n_ctx=4096))
            console.print(f"starting the built-in model {bundled.alias} …")
            url = server.start()
        except (ModelFileError, ServerError, ValueError) as exc:
            raise fail(console, str(exc)) from exc
        llm = {"backend": "openai", "base_url": url, "model": bundled.alias}
    else:
        from app.settings import resolve_llm

        llm = resolve_llm(model=model, base_url=base_url, backend=backend)
    try:
        name = check_planner(planner)
    except ValueError as exc:
        raise fail(console, str(exc)) from None
    client = make_client(llm["backend"], llm["model"], llm["base_url"], policy=RetryPolicy(attempts=2, timeout_s=timeout_s))
    bundle = planner_bundle(name, client, autonomy=Autonomy.AUTO, llm_grounder=False, constrained=constrained)
    if evidence:  # as the window wraps it: a built-in model is a small one (agent.knowledge.guided)
        from app.model_prefs import is_builtin

        bundle = replace(bundle, planner=with_maps(bundle.planner, None, small_model=is_builtin(str(llm["model"]))))
    console.print(f"model {escape(llm['model'])}, planner {escape(name)}, "
                  f"{'structured' if constrained else 'free'} replies, evidence {'on' if evidence else 'off'}")
    return ModelChooser(StepReplayer(bundle, None), name=f"{name}:{llm['model']}"), server
