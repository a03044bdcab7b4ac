"""Command line for the virtual phone: ``gallery`` (PNGs of every app's main screens)
and ``tasks`` (list or validate task folders).  ``sim_app`` is a typer sub-app that the
main ``tapwise`` CLI mounts.  Heavy imports stay inside the commands.

The device engineer adds the serving command (``--serve``) here: see ``serve`` below.
"""

from __future__ import annotations

from pathlib import Path

import typer

sim_app = typer.Typer(help="The virtual phone: gallery, tasks (and serving it as a device).", no_args_is_help=True)


@sim_app.command()
def gallery(
    outdir: Path = typer.Argument(..., help="Folder to write PNGs into (created if missing)."),
    profiles: str = typer.Option("phone,small,tablet", help="Comma-separated device profiles."),
    themes: str = typer.Option("light,dark", help="Comma-separated themes."),
    langs: str = typer.Option("en,de", help="Comma-separated UI languages."),
    only: str = typer.Option("", help="Only screens whose name contains this."),
) -> None:
    """Write PNGs of every app's main screens in each profile, theme and language."""
    from app.sim.gallery import write_gallery

    paths = write_gallery(outdir, profiles=profiles.split(","), themes=themes.split(","), langs=langs.split(","),
                          only=only)
    typer.echo(f"wrote {len(paths)} screenshots to {outdir}")


@sim_app.command()
def tasks(
    folders: list[Path] = typer.Argument(None, help="Extra task folders to load (and validate)."),
    validate: bool = typer.Option(False, "--validate", help="Replay every reference solution and check success."),
    only_extra: bool = typer.Option(False, "--only-extra", help="Skip the built-in tasks."),
) -> None:
    """List the tasks (built-in plus FOLDERS); with --validate, replay each solution."""
    from app.sim.phone import VirtualPhone
    from app.sim.tasks import StepError, TaskError, load_tasks, replay

    try:
        loaded = load_tasks(folders or (), builtin=not only_extra)
    except TaskError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    failures = 0
    for t in loaded:
        line = f"{t.id:40s} {len(t.solution):3d} steps  {t.app:36s} {t.goal}"
        if validate:
            phone = VirtualPhone()
            try:
                acts = replay(t, phone)
                ok = t.is_success(phone, acts[-1] if acts else None)
            except StepError as exc:
                ok = False
                line += f"\n    {exc}"
            failures += not ok
            line = ("ok   " if ok else "FAIL ") + line
        typer.echo(line)
    typer.echo(f"{len(loaded)} tasks" + (f", {failures} failed" if validate else ""))
    if failures:
        raise typer.Exit(1)


# The device engineer's serving command goes here (e.g. ``serve`` / ``--serve``),
# exposing a VirtualPhone over the wire protocol in ``app/sim/wire``.


if __name__ == "__main__":
    sim_app()
