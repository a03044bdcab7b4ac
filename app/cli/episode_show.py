"""``tapwise episodes show ID``: one stored run, step by step, with what flashed on the screen.

Prints the run's goal, how it ended and why, its video (path, length, where each step
starts in it) when it was recorded, and a table of its steps: what was done, the
outcome, and the transient texts seen after the step's action (toasts, snackbars, short
dialogs) with how long each was on the screen.  A missing run or an unusable database is
a clean message and exit status 2.  Attached to the ``episodes`` group by
``app.cli.episodes``; heavy imports stay inside the command.
"""

from __future__ import annotations

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from app.cli.safe_text import as_text
from app.cli.user_store import open_user_store


def show(episode_id: str = typer.Argument(..., help="The run's id (`tapwise episodes` lists them).")) -> None:
    """Show a stored run's steps, the texts that flashed after each, and its video."""
    from app.episode_html import acted_action
    from app.episode_video_html import clock
    from app.run_record import video_of

    console = Console()
    _settings, store = open_user_store(console)
    try:
        episode = store.load_episode(episode_id)
        video = video_of(store, episode)
    except KeyError:
        console.print(f"[red]No stored run {escape(episode_id)}: `tapwise episodes` lists the ids.[/red]")
        raise typer.Exit(2) from None
    finally:
        store.close()
    console.print(as_text(episode.goal, style="bold"))
    console.print(as_text(f"{episode.status.value}" + (f": {episode.note}" if episode.note else "")))
    if video is not None:
        size = video.path.stat().st_size / 1e6
        length = f"{clock(video.duration_s)}, " if video.duration_s is not None else ""
        console.print(as_text(f"video: {video.path} ({length}{size:.1f} MB)"))
        if video.stopped:
            console.print(as_text(f"the recording stopped early: {video.stopped}", style="yellow"))
    else:
        console.print("[dim]no video was recorded for this run[/dim]")
    table = Table()
    for col in ("step", "action", "outcome", "flashed on the screen", *(("in the video",) if video else ())):
        table.add_column(col, overflow="fold")
    for step in episode.steps:
        action = acted_action(step)
        flashed = "\n".join(f"“{t.text}” ({t.seconds:.1f} s)" for t in step.transients)
        row: list[str | Text] = [str(step.index + 1), as_text(action.describe() if action is not None else ""),
                                 as_text(step.outcome.value), as_text(flashed)]
        if video is not None:
            row.append(clock(video.at(step)))
        table.add_row(*row)
    console.print(table)
