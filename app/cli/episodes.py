"""``tapwise episodes``: list recorded runs (newest first), how each ended and why.

A typer group whose callback lists when no subcommand is given, so more subcommands
(``export``, ``show``) attach with ``@episodes_app.command()``.  User text (goals, notes) is
printed as text (``app.cli.safe_text``).  An unusable database is a clean message and
exit status 2.  Heavy imports stay inside the commands.
"""

from __future__ import annotations

import typer
from rich.console import Console
from rich.table import Table

from app.cli.safe_text import as_text
from app.cli.user_store import open_user_store

episodes_app = typer.Typer(help="Recorded runs: list them (no subcommand).", invoke_without_command=True)

#: Colours of the statuses in the listing.
STATUS_STYLES = {"succeeded": "green", "failed": "red", "error": "dark_orange", "aborted": "grey50",
                 "impossible": "magenta", "running": "blue", "interrupted": "yellow"}


@episodes_app.callback()
def episodes(ctx: typer.Context, limit: int = typer.Option(20, min=1, help="How many to list.")) -> None:
    """List recorded episodes (newest first); interrupted runs say when they stopped."""
    if ctx.invoked_subcommand is not None:
        return
    import datetime as dt


    console = Console()
    settings, store = open_user_store(console)
    try:
        rows = store.list_episodes(limit)
    finally:
        store.close()
    table = Table(title=as_text(settings.database_path))
    for col in ("id", "started", "status", "steps", "planner", "goal", "note"):
        table.add_column(col, overflow="fold")
    for row in rows:
        started = dt.datetime.fromtimestamp(row["started_at"]).strftime("%Y-%m-%d %H:%M") if row["started_at"] else ""
        status = str(row["status"])
        table.add_row(as_text(row["id"]), started, as_text(status, style=STATUS_STYLES.get(status, "")),
                      str(row["steps"]), as_text(row["planner"] or ""), as_text(row["goal"]),
                      as_text(row.get("note") or ""))
    console.print(table)


# `tapwise episodes export ID [--html]`: its own module (app/cli/episode_export.py)
from app.cli.episode_export import export as _export  # noqa: E402

episodes_app.command("export")(_export)

# `tapwise episodes show ID`: a run's steps with what flashed after each (app/cli/episode_show.py)
from app.cli.episode_show import show as _show  # noqa: E402

episodes_app.command("show")(_show)
