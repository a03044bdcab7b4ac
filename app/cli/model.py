"""``tapwise model``: list the models Tapwise can use and calibrate one (``model check``).

Argument handling and printing only; the calibration is ``app.model_check``, the listing
``app.model_prefs``.
"""

from __future__ import annotations

from typing import Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

model_app = typer.Typer(help="Models: list them, and check whether one is usable (grounding calibration).",
                        no_args_is_help=True)


def start_builtin(console: Console, alias: str | None) -> tuple[Any, Any, str]:
    """Start the built-in model ``alias`` (the default one when None): its server, its
    catalogue entry and its URL.  A missing model file or a server that does not come up is
    said in red and ends the command (exit 2), the server stopped."""
    from app.builtin_model.catalog import ModelFileError, by_alias, default_model
    from app.builtin_model.server import BuiltinServer, ServerError, ServerOptions

    server = None
    try:
        bundled = by_alias(alias) if alias else default_model()
        server = BuiltinServer(bundled, ServerOptions(n_ctx=4096))
        console.print(f"starting the built-in model {bundled.alias} …")
        url = server.start()
    except (ModelFileError, ServerError) as exc:
        if server is not None:
            server.stop()
        console.print(f"[red]{escape(str(exc))}[/red]", soft_wrap=True)
        raise typer.Exit(2) from exc
    return server, bundled, url


@model_app.command("check")
def check(
    model: str = typer.Argument("", help="Model name on the server; empty: the built-in model, started for the check."),
    base_url: str = typer.Option("", help="Server URL (default: the configured one)."),
    backend: str = typer.Option("", help="'ollama' or 'openai' (default: guessed from the URL)."),
    planner: str = typer.Option("", help="Planner to calibrate (default: the model's adapter if it has one, else zeroshot-)."),
    adapter: str = typer.Option("", help="Force a GUI-model adapter (e.g. ui-tars, autoglm); add ':text' for a text-only model."),
    builtin: str = typer.Option("", help="Built-in model to start when MODEL is empty (default: the default one)."),
    n: int = typer.Option(30, min=1, max=60, help="How many 'tap the X' prompts."),
    screenshot: bool = typer.Option(False, help="Send the screenshot (vision-language models)."),
    timeout_s: float = typer.Option(120.0, help="Timeout per LLM request, seconds."),
    constrained: bool = typer.Option(True, "--constrained/--free", help="Structured replies whose JSON schema is "
                                     "built per screen (the product default; adapters always use their own format), "
                                     "or free text."),
) -> None:
    """Ask the model to tap N named elements on virtual-phone screens; print grounding accuracy,
    the share of readable replies and seconds per call."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from agent.llm import RetryPolicy, make_client
    from agent.llm.adapters import adapter_for
    from app.model_check import grounding_prompts, run_check
    from app.settings import resolve_llm

    console = Console()
    server = None
    try:
        if not model:
            server, bundled, url = start_builtin(console, builtin or None)
            llm = {"model": bundled.alias, "base_url": url, "backend": "openai"}
        else:
            try:
                llm = resolve_llm(model=model, base_url=base_url, backend=backend)
            except ValueError as exc:
                console.print(f"[red]{escape(str(exc))}[/red]")
                raise typer.Exit(2) from exc
        chosen = planner or (f"adapter:{adapter}" if adapter else ("adapter" if adapter_for(llm["model"]) else "zeroshot-"))
        client = make_client(llm["backend"], llm["model"], llm["base_url"],
                             policy=RetryPolicy(attempts=1, timeout_s=timeout_s))
        prompts = grounding_prompts(n)
        console.print(f"checking [bold]{escape(llm['model'])}[/bold] at {escape(llm['base_url'])} with planner "
                      f"[bold]{escape(chosen)}[/bold] on {len(prompts)} prompts"
                      f"{'' if chosen.startswith('adapter') else (' (constrained replies)' if constrained else ' (free text)')}",
                      soft_wrap=True)
        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), console=console) as bar:
            task = bar.add_task("prompts", total=len(prompts))

            def on_result(done: int, total: int, r) -> None:  # type: ignore[no-untyped-def]
                mark = "[green]hit[/green]" if r.hit else ("miss" if r.readable else "[red]unreadable[/red]")
                where = r.prompt.app or "home"
                bar.console.print(f"{where}: tap {escape(r.prompt.name)} → {escape(r.proposed or r.error[:80])} {mark}")
                bar.update(task, completed=done)

            try:
                report = run_check(client, chosen, prompts, send_screenshot=screenshot, progress=on_result,
                                   constrained=constrained)
            except ValueError as exc:
                console.print(f"[red]{escape(str(exc))}[/red]")
                raise typer.Exit(2) from exc
            finally:
                close = getattr(client, "close", None)
                if close is not None:
                    close()
    finally:
        if server is not None:
            server.stop()
    table = Table(title=f"model check: {report.model} ({report.planner})")
    for c in ("prompts", "grounding accuracy", "parseable replies", "LLM calls", "s / call", "wall s"):
        table.add_column(c, justify="right")
    table.add_row(str(report.n), f"{report.accuracy:.0%}", f"{report.parseable:.0%}", str(report.calls),
                  f"{report.seconds_per_call:.1f}", f"{report.wall_s:.0f}")
    console.print(table)
    if report.calls:  # kept per model: the "auto" planner chooses by it
        from app.model_prefs import PrefsStore

        PrefsStore.default().record_speed(report.model, report.seconds_per_call)
    verdict = ("usable" if report.accuracy >= 0.7 else "weak: expect many wrong taps" if report.accuracy >= 0.3
               else "not usable for grounding with this planner")
    console.print(f"verdict: {verdict}")


@model_app.command("list")
def list_models(
    ollama_host: str = typer.Option("", help="Ollama address (default: the configured one)."),
) -> None:
    """The models Ollama offers and the built-in ones, with the adapter each would use."""
    from app.model_prefs import ModelManager

    console = Console()
    manager = ModelManager.from_settings(ollama_host=ollama_host or None)
    listing = manager.list_models()
    table = Table(title="models")
    for c in ("name", "source", "adapter", "note"):
        table.add_column(c)
    for m in listing.models:
        table.add_row(escape(m.name), m.source, m.adapter or "-", escape(m.note))
    console.print(table)
    for problem in listing.problems:
        console.print(f"[yellow]{escape(problem)}[/yellow]", soft_wrap=True)
