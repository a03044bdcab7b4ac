"""Open the user's database for a command: the settings file read (its problem, if any,
printed as a warning) and the ``Store`` opened, or a clean one-line error and exit code 2
(damaged, newer, unreadable).  The one place the commands do this; prints, never raises
anything but ``typer.Exit``."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer
from rich.console import Console
from rich.markup import escape

if TYPE_CHECKING:
    from app.settings import Settings
    from app.storage import Store


def open_user_store(console: Console) -> tuple[Settings, Store]:
    """The user's settings and their database, opened."""
    from app.settings import load_settings
    from app.storage import Store, StoreError

    settings, problem = load_settings()
    if problem:
        console.print(f"[yellow]{escape(problem)}[/yellow]")
    try:
        return settings, Store(settings.database_path)
    except StoreError as exc:
        console.print(f"[red]{escape(str(exc))}[/red]")
        raise typer.Exit(2) from None
