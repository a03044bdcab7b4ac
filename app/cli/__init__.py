"""The ``tapwise`` command line: with no subcommand it opens the workbench.

Subcommands live in their own modules (``app/cli/*.py``, or a module in another area such
as ``app/builtin_model/cli.py``) and are attached by ``SUBCOMMANDS`` below: to add one, write a typer
sub-app or command function in a module of your own and add one line there.  Each module
keeps its heavy imports inside its command functions so ``tapwise --version`` stays fast.
"""

from __future__ import annotations

import logging
import sys
from importlib.metadata import PackageNotFoundError, version

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

app = typer.Typer(
    name="tapwise",
    help="Tapwise: supervised phone automation workbench. Run without a command to open the window.",
    no_args_is_help=False,
    add_completion=False,
    pretty_exceptions_show_locals=False,
)


def _console() -> Console:
    """A console sized for the terminal at call time (not at import)."""
    return Console()


def _version() -> str:
    try:
        return version("tapwise")
    except PackageNotFoundError:
        return "0+unknown"


def _version_callback(value: bool) -> None:
    if value:
        _console().print(f"tapwise {_version()}")
        raise typer.Exit()


@app.callback(invoke_without_command=True)
def main_callback(
    ctx: typer.Context,
    version_: bool = typer.Option(
        False, "--version", callback=_version_callback, is_eager=True, help="Print the version and exit."
    ),
    device: str = typer.Option("", "--device", help="Device for the workbench: 'sim', a serial, or empty for auto."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Log more."),
    self_test: bool = typer.Option(
        False,
        "--self-test",
        help="Check this install works (offscreen window, virtual phone, screen parse, one agent step "
        "against a scripted local LLM) and exit.",
    ),
) -> None:
    logging.basicConfig(level=logging.DEBUG if verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    from agent.redact import RedactingFilter

    for handler in logging.getLogger().handlers:  # no API key in a URL reaches the terminal
        handler.addFilter(RedactingFilter())
    if self_test:
        from app.selftest import run_self_test

        raise typer.Exit(run_self_test())
    if ctx.invoked_subcommand is not None:
        return
    console = _console()
    try:
        from app.gui.main import launch
    except ImportError as exc:
        console.print(f"[red]The workbench window is not available: {exc}[/red]")
        console.print("Install the GUI dependencies (`make run`), or use a subcommand: `tapwise --help`.")
        raise typer.Exit(2) from exc
    raise typer.Exit(launch(device_hint=device or None))


@app.command()
def doctor(strict: bool = typer.Option(False, help="Exit non-zero when something fails.")) -> None:
    """Check what works on this machine (adb, devices, Ollama, models, display, extras)."""
    from app.doctor import Status, run_checks

    console = _console()

    rows = run_checks()
    table = Table(title=f"tapwise {_version()} — doctor", show_lines=False)
    table.add_column("component")
    table.add_column("status")
    table.add_column("detail", overflow="fold")
    table.add_column("what to do", overflow="fold")
    colours = {Status.OK: "green", Status.WARN: "yellow", Status.FAIL: "red", Status.INFO: "cyan"}
    for r in rows:
        table.add_row(escape(r.component), f"[{colours[r.status]}]{r.status.value}[/]", escape(r.detail), escape(r.fix))
    console.print(table)
    if strict and any(r.status is Status.FAIL for r in rows):
        raise typer.Exit(1)


# (module, attribute, name, is_group): one line per subcommand or group of subcommands.
# A module that does not exist (an optional part not installed) is skipped.
SUBCOMMANDS: list[tuple[str, str, str, bool]] = [
    ("app.cli.sim", "sim_app", "sim", True),
    ("app.cli.devices", "devices_app", "devices", True),
    ("app.cli.parse", "parse_cmd", "parse", False),
    ("app.cli.run", "run", "run", False),
    ("app.cli.episodes", "episodes_app", "episodes", True),
    ("app.cli.bench", "bench_app", "bench", True),
    ("app.cli.macro", "macro_app", "macro", True),
    ("app.cli.farm", "farm_app", "farm", True),
    ("app.builtin_model.cli", "llm_app", "llm", True),
    ("app.cli.model", "model_app", "model", True),
    ("app.cli.mcp", "mcp", "mcp", False),
    ("app.cli.explore", "explore", "explore", False),
    ("app.cli.secrets", "secrets_app", "secrets", True),
]


def _attach_subcommands() -> None:
    """Attach the subcommand groups and commands listed in ``SUBCOMMANDS``."""
    import importlib

    for module_name, attr, name, is_group in SUBCOMMANDS:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name == module_name:
                continue
            raise
        obj = getattr(module, attr)
        if is_group:
            app.add_typer(obj, name=name)
        else:
            app.command(name=name)(obj)


_attach_subcommands()


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)

