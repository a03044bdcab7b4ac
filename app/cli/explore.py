"""``tapwise explore APP``: explore an app once and store its map (``agent.knowledge.explore``).

On the virtual phone (``--device sim``, the default) it runs freely; on a real phone it
first shows what exploring may do and asks for consent (``--yes`` answers for you).
The map is stored in the project database, per app, app version and the UI language the
phone shows; an earlier unfinished exploration is resumed unless ``--fresh``.  ``--export FILE`` writes the map
as JSON; ``tapwise explore --show APP`` prints the stored map's coverage.
Heavy imports stay inside the command.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from app.cli.user_store import open_user_store

EXIT_ERROR = 2


def _console() -> Console:
    return Console()


def explore(
    app_name: str = typer.Argument(..., metavar="APP", help="The app's name (as on the launcher) or package."),
    device: str = typer.Option("sim", "--device", "-d", help="'sim' (the virtual phone) or an adb serial."),
    steps: int = typer.Option(400, "--steps", help="Most device actions (taps, Back, app restarts)."),
    seconds: float = typer.Option(900.0, "--seconds", help="Most seconds."),
    screens: int = typer.Option(80, "--screens", help="Most screens to keep."),
    settle: float = typer.Option(0.0, "--settle", help="Seconds to wait after each action (real phones animate)."),
    fresh: bool = typer.Option(False, "--fresh", help="Forget the stored map and start again."),
    yes: bool = typer.Option(False, "--yes", help="Agree to exploring a real phone without being asked."),
    export: Path | None = typer.Option(None, "--export", help="Also write the map to this JSON file."),
    show: bool = typer.Option(False, "--show", help="Only print the stored map's coverage."),
) -> None:
    """Explore APP once and store its map: screens, what each element leads to, what was not tried and why."""
    from agent.knowledge.explore import ExploreBudget, ExploreProgress, Explorer, ExploreRefused
    from agent.knowledge.guide import AppMaps
    from app.compose import make_parser
    from app.knowledge_store import SqliteKnowledgeStore

    console = _console()
    settings, store = open_user_store(console)
    maps = AppMaps(SqliteKnowledgeStore(store))
    if show:
        found = [m for m in maps.all() if app_name.casefold() in (m.package.casefold(), m.label.casefold())]
        if not found:
            console.print(f"no map of {escape(repr(app_name))}; explore it with `tapwise explore {escape(app_name)}`")
            raise typer.Exit(1)
        _print_map(console, found[0])
        return
    try:
        budget = ExploreBudget(max_steps=steps, max_seconds=seconds, max_screens=screens, settle_s=settle)
    except ValueError as exc:
        console.print(f"[red]{escape(str(exc))}[/red]")
        raise typer.Exit(EXIT_ERROR) from exc
    phone = _device(console, device)
    try:
        from agent.knowledge.map_language import LanguageMaps, phone_language

        maps = AppMaps(LanguageMaps(SqliteKnowledgeStore(store), phone_language(phone)))  # the phone's language's
        package = _package(phone, app_name)
        earlier = None if fresh or not package else maps.load(package)
        if earlier is not None:
            console.print(f"resuming the map of {escape(earlier.label or package)} "
                          f"({len(earlier.screens)} screens so far)")

        def consent(risks: str) -> bool:
            console.print(f"[bold]Exploring {escape(app_name)} on a real phone.[/bold]\n{escape(risks)}")
            return yes or typer.confirm("Go ahead?", default=False)

        def progress(p: ExploreProgress) -> None:
            console.print(f"[dim]{p.steps:4d}/{p.max_steps} steps  {p.screens:3d} screens  "
                          f"{p.transitions:3d} transitions  {p.untried:3d} untried[/dim]  {escape(p.message)}",
                          highlight=False)

        parser = make_parser(settings, mode="tree")
        try:
            m = Explorer(phone, parser, app_name, app_map=earlier, budget=budget, progress=progress,
                         consent=consent, save=maps.save).run()
        except ExploreRefused as exc:
            console.print(f"[yellow]{escape(str(exc))}[/yellow]")
            raise typer.Exit(1) from exc
        maps.save(m)
        _print_map(console, m)
        if export is not None:
            export.write_text(json.dumps(m.to_data(), ensure_ascii=False, indent=1), encoding="utf-8")
            console.print(f"map written to {escape(str(export))}")
    finally:
        phone.close()


def _device(console: Console, device: str):  # type: ignore[no-untyped-def]
    if device == "sim":
        from phone.virtual.phone import VirtualPhone

        return VirtualPhone()
    from agent.device import DeviceError
    from phone.adb.adb_device import AdbDevice

    try:
        return AdbDevice(device)
    except DeviceError as exc:
        console.print(f"[red]{escape(str(exc))}[/red]")
        raise typer.Exit(EXIT_ERROR) from None


def _package(phone: object, app_name: str) -> str:
    """The package of ``app_name`` when the phone lists its apps ("" when it cannot say)."""
    from agent.device import KnowsApps

    if isinstance(phone, KnowsApps):
        for name, pkg in phone.installed_apps():
            if app_name.casefold() in (name.casefold(), pkg.casefold()):
                return pkg
    return app_name if "." in app_name else ""


def _print_map(console: Console, m) -> None:  # type: ignore[no-untyped-def]
    cov = m.coverage()
    state = "finished" if m.complete else "budget spent — run again to continue"
    console.print(f"[bold]{escape(m.label or m.package)}[/bold] ({escape(m.package)}"
                  f"{', version ' + escape(m.app_version) if m.app_version else ''}): {cov['screens']} screens, "
                  f"{cov['transitions']} transitions, {cov['tried']} elements tried, {cov['untried']} untried, "
                  f"{cov['not_tried']} not tried, {cov['unreachable']} screens unreachable; "
                  f"{m.steps_used} steps in {m.seconds_used:.1f} s ({state})")
    reasons = m.not_tried()
    if reasons:
        console.print("not tried: " + ", ".join(f"{escape(r)} ×{n}" for r, n in sorted(reasons.items())))
    table = Table(title="screens")
    for col in ("screen", "title", "elements", "leads to"):
        table.add_column(col)
    for s in m.screens.values():
        outs = sorted({m.screens[e.dst].label() for e in m.edges.values()
                       if e.src == s.key and e.dst in m.screens and e.dst != s.key})
        table.add_row(s.key[:8], escape(s.label()), str(len(s.elements)), escape(", ".join(outs[:6])))
    console.print(table)
