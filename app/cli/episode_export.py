"""``tapwise episodes export ID``: write a stored run as a file to share.

``--html`` writes one self-contained page (``app.episode_html``: every step with its
frame, the acted element marked, proposal, decision, latent state and timings) that
opens offline in any browser; without it the run is written as Tapwise JSON.  A missing
episode or an unusable database is a clean message and exit status 2.  Attached to the
``episodes`` group by ``app.cli.episodes``; heavy imports stay inside the command.
"""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape

from app.cli.user_store import open_user_store


def export(episode_id: str = typer.Argument(..., help="The run's id (`tapwise episodes` lists them)."),
           html: bool = typer.Option(False, "--html", help="One self-contained HTML page (else Tapwise JSON)."),
           out: Path | None = typer.Option(None, "--out", "-o", help="Where to write (default: episode-ID.html/.json)."),
           ) -> None:
    """Export a stored run: an HTML page to look at and share, or JSON for programs."""

    console = Console()
    settings, store = open_user_store(console)
    path = out or Path(f"episode-{episode_id}.{'html' if html else 'json'}")
    try:
        if html:
            from app.episode_html import export_html

            export_html(store, episode_id, path)
        else:
            from agent.codec import dumps

            path.write_text(dumps(store.load_episode(episode_id)), encoding="utf-8")
    except KeyError:
        console.print(f"[red]No stored run {escape(episode_id)}: `tapwise episodes` lists the ids.[/red]")
        raise typer.Exit(2) from None
    finally:
        store.close()
    console.print(f"Wrote {escape(str(path))}")
