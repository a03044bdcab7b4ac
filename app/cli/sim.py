"""Command line for the virtual phone: ``gallery`` (PNGs of every app's main screens),
``tasks`` (list or validate task folders) and ``serve`` / ``--serve`` (the phone served
over the ADB protocol on loopback, driven by the real adb like a phone).

``sim_app`` is a typer sub-app that ``app.cli`` mounts.  Heavy imports stay inside the
commands; failures print what to do and exit non-zero.
"""

from __future__ import annotations

import signal
import threading
from pathlib import Path

import typer

sim_app = typer.Typer(help="The virtual phone: gallery, tasks, and serving it as a device.")


@sim_app.command()
def gallery(
    outdir: Path = typer.Argument(..., help="Folder to write PNGs into (created if missing)."),
    profiles: str = typer.Option("phone,small,tablet", help="Comma-separated device profiles."),
    themes: str = typer.Option("light,dark", help="Comma-separated themes."),
    langs: str = typer.Option("en,de", help="Comma-separated UI languages."),
    only: str = typer.Option("", help="Only screens whose name contains this."),
) -> None:
    """Write PNGs of every app's main screens in each profile, theme and language."""
    from phone.virtual.gallery import write_gallery

    paths = write_gallery(outdir, profiles=profiles.split(","), themes=themes.split(","), langs=langs.split(","),
                          only=only)
    typer.echo(f"wrote {len(paths)} screenshots to {outdir}")


@sim_app.command()
def tasks(
    folders: list[Path] = typer.Argument(None, help="Extra task folders to load (and validate)."),
    validate: bool = typer.Option(False, "--validate", help="Replay every reference solution and check success."),
    only_extra: bool = typer.Option(False, "--only-extra", help="Skip the built-in tasks."),
    language: str = typer.Option("en", "--language", help="The phone's UI language for --validate (en, de): the "
                                 "English targets of the solutions are put in that language; the listing shows "
                                 "the goals written in it."),
) -> None:
    """List the tasks (built-in plus FOLDERS); with --validate, replay each solution."""
    from phone.virtual.i18n import LANGUAGES
    from phone.virtual.phone import VirtualPhone
    from phone.virtual.tasks import StepError, TaskError, load_tasks, replay

    if language not in LANGUAGES:
        typer.echo(f"error: --language {language!r}: the virtual phone speaks {', '.join(LANGUAGES)}", err=True)
        raise typer.Exit(2)
    try:
        loaded = load_tasks(folders or (), builtin=not only_extra)
    except TaskError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    failures = 0
    for t in loaded:
        said = t.wordings(language)
        goal = f"{said[0]}  (+{len(said) - 1} more)" if said else f"(no {language} goals) {t.goal}"
        line = f"{t.id:40s} {len(t.solution):3d} steps  {t.app:36s} {goal}"
        if validate:
            phone = VirtualPhone(lang=language)
            try:
                acts = replay(t, phone)
                ok = t.is_success(phone, acts[-1] if acts else None)
            except StepError as exc:
                ok = False
                line += f"\n    {exc}"
            failures += not ok
            line = ("ok   " if ok else "FAIL ") + line
        typer.echo(line)
    worded = sum(bool(t.wordings(language)) for t in loaded)
    typer.echo(f"{len(loaded)} tasks ({worded} with goals in {language!r}, "
               f"{sum(len(t.wordings(language)) for t in loaded)} wordings)"
               + (f", {failures} failed on the phone in {language!r}" if validate else ""))
    if failures:
        raise typer.Exit(1)


@sim_app.command("serve")
def serve(
    port: int = typer.Option(5555, "--port", help="Loopback port to listen on (0 picks a free one)."),
    profile: str = typer.Option("phone", help="Virtual phone profile (phone, small, tablet)."),
    theme: str = typer.Option("light", help="light or dark."),
    lang: str = typer.Option("en", help="UI language."),
    seed: int = typer.Option(0, help="Random seed for the phone's noise."),
    require_auth: bool = typer.Option(False, "--auth", help="Ask the host for an AUTH signature like a phone."),
    connect_adb: bool = typer.Option(False, "--connect", help="Also run `adb connect` to it."),
) -> None:
    """Serve the virtual phone on 127.0.0.1:PORT over the ADB protocol (and scrcpy).

    Then `adb connect 127.0.0.1:PORT` and use it like a phone.  Ctrl+C stops it.
    """
    from phone.virtual.phone import VirtualPhone
    from phone.virtual.wire import serve_phone

    try:
        phone = VirtualPhone(profile=profile, theme=theme, lang=lang, seed=seed)
        server = serve_phone(phone, port=port, require_auth=require_auth)
    except (ValueError, OSError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    typer.echo(f"virtual phone serving on {server.serial} — run: adb connect {server.serial}  (Ctrl+C stops)")
    if connect_adb:
        from agent.device import DeviceError
        from phone.adb.discovery import connect as do_connect

        try:
            do_connect(server.serial)
            typer.echo(f"connected adb to {server.serial}")
        except DeviceError as exc:
            typer.echo(f"warning: {exc}", err=True)
    done = threading.Event()
    previous = signal.signal(signal.SIGTERM, lambda *_: done.set())
    try:
        while not done.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        server.stop()
        typer.echo("virtual phone stopped")


@sim_app.callback(invoke_without_command=True)
def sim_main(
    ctx: typer.Context,
    serve_flag: bool = typer.Option(False, "--serve", help="Serve the virtual phone over adb on loopback."),
    port: int = typer.Option(5555, "--port", help="Loopback port for --serve (0 picks a free one)."),
    profile: str = typer.Option("phone", help="With --serve: phone, small or tablet."),
    theme: str = typer.Option("light", help="With --serve: light or dark."),
    lang: str = typer.Option("en", help="With --serve: UI language."),
    connect_adb: bool = typer.Option(False, "--connect", help="With --serve: also run `adb connect`."),
) -> None:
    """``tapwise sim --serve [--port N]`` is ``tapwise sim serve``; with nothing, the help."""
    if serve_flag:
        ctx.invoke(serve, port=port, profile=profile, theme=theme, lang=lang, seed=0,
                   require_auth=False, connect_adb=connect_adb)
        raise typer.Exit()
    if ctx.invoked_subcommand is None:
        typer.echo(ctx.get_help())
