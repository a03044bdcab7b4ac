"""``tapwise macro``: list, show, export, import, replay, diff and complete recorded macros.

Macros live in the project database (``app.storage.Store``).  ``replay`` runs on the
virtual phone (any profile, theme, language); when a step cannot be found it shows the
screen's elements and lets the user demonstrate the step by picking one (or stop), and
a repaired macro is saved as the next version.  ``complete`` appends the steps the app
maps know from where the recording stops to its goal (``agent.macros.complete``) as the
next version (``--dry-run`` only shows them).  Names, ids, apps and descriptions are
user text and printed as text (``app.cli.safe_text``).  Heavy imports stay inside commands.
"""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from app.cli.safe_text import as_text, clean, quoted
from app.cli.user_store import open_user_store

macro_app = typer.Typer(help="Recorded macros: list, show, export, import, replay, diff, complete.",
                        no_args_is_help=True)


def _console() -> Console:
    return Console()


def _open_store():  # type: ignore[no-untyped-def]
    return open_user_store(_console())[1]


def _find(store, name: str, version: int | None = None):  # type: ignore[no-untyped-def]
    try:
        macro = store.find_macro(name)
        return macro if version is None else store.load_macro(macro.id, version)
    except KeyError as exc:
        _console().print(f"[red]{quoted(exc.args[0])}[/red] — see `tapwise macro list`")
        raise typer.Exit(1) from exc


@macro_app.command("list")
def list_cmd() -> None:
    """List stored macros (latest version of each)."""
    store = _open_store()
    table = Table(title="macros")
    for col in ("id", "name", "app", "version"):
        table.add_column(col)
    for r in store.list_macros():
        table.add_row(as_text(r["id"]), as_text(r["name"]), as_text(r["app"] or ""), str(r["version"]))
    _console().print(table)
    store.close()


@macro_app.command()
def show(name: str = typer.Argument(..., help="Macro name or id."),
         version: int | None = typer.Option(None, help="A given version (default: latest).")) -> None:
    """Show a macro's steps in words, with what re-finds each element."""
    store = _open_store()
    m = _find(store, name, version)
    c = _console()
    c.print(f"[bold]{quoted(m.name)}[/bold] v{m.version}  app={quoted(m.app)}  "
            f"parameters={quoted(list(m.parameters))}")
    if m.description:
        c.print(quoted(m.description, newlines=True))
    for i, s in enumerate(m.steps, 1):
        fp = s.target.fingerprint if s.target else None
        extra = ""
        if fp is not None:
            bits = [f"id={fp.resource_id.rsplit('/', 1)[-1]}" if fp.resource_id else "",
                    f"text={fp.text!r}" if fp.text else "", f"label={fp.label!r}" if fp.label else "",
                    f"block={fp.block_role}" if fp.block_role else ""]
            extra = "  [dim](" + quoted(", ".join(b for b in bits if b)) + ")[/dim]"
        c.print(f"{i:>2}. {quoted(s.description or s.action.describe())}{extra}")
    store.close()


@macro_app.command()
def export(name: str = typer.Argument(..., help="Macro name or id."),
           output: Path | None = typer.Option(None, "-o", "--output", help="File (default: print)."),
           fmt: str = typer.Option("json", "--format", help="json (Tapwise) or aitw (trajectory)."),
           size: str = typer.Option("1080x2400", help="Screen size for AITW normalisation, WxH."),
           version: int | None = typer.Option(None)) -> None:
    """Export a macro as Tapwise JSON or as an AITW-style trajectory."""
    import json

    from agent.macros.io import export_json, to_aitw
    from vision.geometry import Size

    store = _open_store()
    m = _find(store, name, version)
    if fmt == "json":
        text = export_json(m)
    elif fmt == "aitw":
        try:
            w, h = (int(v) for v in size.lower().split("x"))
        except ValueError as exc:
            _console().print(f"[red]bad --size {size!r}: use WIDTHxHEIGHT, e.g. 1080x2400[/red]")
            raise typer.Exit(2) from exc
        text = json.dumps(to_aitw(m, Size(w, h)), indent=1, ensure_ascii=False)
    else:
        _console().print(f"[red]unknown --format {fmt!r}: use json or aitw[/red]")
        raise typer.Exit(2)
    if output is None:
        typer.echo(text)
    else:
        output.write_text(text, encoding="utf-8")
        _console().print(f"wrote {output}")
    store.close()


@macro_app.command("import")
def import_cmd(path: Path = typer.Argument(..., help="A macro exported with `tapwise macro export`.")) -> None:
    """Import a macro from JSON (stored as a new version if its id exists)."""
    from agent.macros.io import MAX_IMPORT_CHARS, MacroImportError, import_json

    try:
        if path.stat().st_size > MAX_IMPORT_CHARS * 4:  # refused without reading it all
            raise MacroImportError(f"cannot import {path}: it is {path.stat().st_size / 1e6:.0f} MB; a macro "
                                   f"export is at most {MAX_IMPORT_CHARS / 1e6:.0f} MB")
        data = path.read_bytes()
        m = import_json(data, source=str(path))
    except OSError as exc:
        _console().print(f"[red]cannot read {quoted(path)}: {quoted(exc.strerror)}[/red]")
        raise typer.Exit(2) from None
    except MacroImportError as exc:
        _console().print(f"[red]{quoted(exc)}[/red]")
        raise typer.Exit(2) from None
    store = _open_store()
    saved = store.save_macro(m)
    _console().print(f"imported {quoted(saved.name)} ({quoted(saved.id)}) as version {saved.version}")
    store.close()


@macro_app.command()
def diff(name: str = typer.Argument(..., help="Macro name or id."),
         old: int | None = typer.Option(None, "--from", help="Older version (default: the one before --to)."),
         new: int | None = typer.Option(None, "--to", help="Newer version (default: latest)."),
         all_steps: bool = typer.Option(False, "--all", help="Also list unchanged steps.")) -> None:
    """Compare two versions of a macro step by step."""
    from agent.macros.diff import render_diff

    store = _open_store()
    latest = _find(store, name)
    versions = store.macro_versions(latest.id)
    to_v = new or versions[-1]
    from_v = old or max([v for v in versions if v < to_v], default=to_v)
    a, b = _find(store, latest.id, from_v), _find(store, latest.id, to_v)
    typer.echo(clean(render_diff(a, b, show_same=all_steps), newlines=True))
    store.close()


def _parse_params(items: list[str]) -> dict[str, str]:
    out = {}
    for it in items:
        if "=" not in it:
            raise typer.BadParameter(f"{it!r}: use NAME=VALUE")
        k, v = it.split("=", 1)
        out[k.strip()] = v
    return out


@macro_app.command()
def replay(name: str = typer.Argument(..., help="Macro name or id."),
           profile: str = typer.Option("phone", help="Virtual phone profile: phone, small, tablet."),
           theme: str = typer.Option("light", help="light or dark."),
           lang: str = typer.Option("en", help="en or de."),
           layout: str = typer.Option("default", help="default, shifted (rows lower) or reordered (rows swapped)."),
           heal: bool = typer.Option(True, help="Heal a step the recording cannot find again with one call to the "
                                                "configured model (the healed step is always asked)."),
           param: list[str] = typer.Option([], "--param", "-p", help="NAME=VALUE for a {NAME} parameter."),
           approve: bool = typer.Option(False, help="Ask before each step."),
           interactive: bool = typer.Option(True, help="Ask for a demonstration when a step cannot be found."),
           save: bool = typer.Option(True, help="Save a repaired macro as its next version."),
           parser: str = typer.Option("tree", help="Screen parsing: tree (accessibility), vision or fusion.")) -> None:
    """Replay a macro on the virtual phone, robust to size, theme and language changes."""
    from agent.events import AwaitingDecision
    from agent.macros.editing import MissingParameter
    from agent.macros.replay import Replayer, as_decision
    from agent.types import Action, Decision, DecisionKind
    from phone.virtual.phone import VirtualPhone

    c = _console()
    store = _open_store()
    m = _find(store, name)
    try:
        phone = VirtualPhone(profile=profile, theme=theme, lang=lang, layout=layout)
    except ValueError as exc:
        c.print(f"[red]{escape(str(exc))}[/red]")
        raise typer.Exit(2) from exc
    from app.compose import agent_device, macro_healer, make_parser
    from app.settings import load_settings

    settings = load_settings()[0]
    screen_parser = make_parser(settings, mode=parser)
    healer = macro_healer(settings) if heal else None
    try:  # a replay is a run of the agent loop: its steps are stored as an episode
        replay = Replayer(device=agent_device(phone), parser=screen_parser, approve_each=approve, healer=healer).start(
            m, _parse_params(param), store=store)
    except MissingParameter as exc:
        c.print(f"[red]{escape(str(exc))}[/red]")
        raise typer.Exit(2) from exc
    reply: Decision | None = None
    shown = 0
    try:
        while True:
            ev = replay.events.send(reply)
            reply = None
            for r in replay.planner.reports[shown:]:
                c.print(f"{r.index + 1:>2}. {quoted(r.description)}  [dim]{quoted(r.words)}[/dim]")
            shown = len(replay.planner.reports)
            if not isinstance(ev, AwaitingDecision):
                continue
            question = replay.question(ev)
            if question is None:
                ok = typer.confirm(f"{clean(ev.proposal.rationale)}?", default=True)
                reply = Decision(DecisionKind.APPROVE) if ok else Decision(DecisionKind.REJECT, feedback="skipped")
                continue
            c.print(f"[yellow]step {question.index + 1}: {quoted(question.reason)}[/yellow]")
            el = None
            if interactive and question.observation is not None:
                parse = question.observation.parse
                for e in (e for e in parse.elements if e.clickable):
                    c.print(f"  {quoted(f'[{e.id}]')} {quoted(e.display_name or e.kind.value)}")
                pick = typer.prompt("demonstrate: the element id to tap (empty to stop)", default="",
                                    show_default=False).strip()
                el = parse.element(pick) if pick else None
            answer = Action.tap(el.rect.center.x, el.rect.center.y) if el is not None else None
            reply = as_decision(answer, question.reason)
    except StopIteration as stop:
        result = stop.value
    colour = "green" if result.succeeded else "red"
    c.print(f"[{colour}]{result.status}[/{colour}] {quoted(result.message)}")
    if result.episode is not None:
        from agent.cost import run_cost

        c.print(f"cost: {quoted(run_cost(result.episode).describe())}"
                + (f"; {result.healed} step(s) healed" if result.healed else ""))
    if result.repaired and save:
        saved = store.save_macro(result.macro)
        c.print(f"saved the repaired macro as version {saved.version} (see `tapwise macro diff {quoted(m.name)}`)")
    store.close()
    raise typer.Exit(0 if result.succeeded else 1)


@macro_app.command()
def complete(name: str = typer.Argument(..., help="Macro name or id."),
             goal: str | None = typer.Option(None, "--goal", help="What the macro is for (default: its description, "
                                                                "else its name)."),
             dry_run: bool = typer.Option(False, "--dry-run", help="Only show the steps; save nothing."),
             replay_first: bool = typer.Option(False, "--replay", help="Replay the macro on the virtual phone to see "
                                                                      "where it ends (when the map cannot tell)."),
             param: list[str] = typer.Option([], "--param", "-p", help="NAME=VALUE for --replay.")) -> None:
    """Complete a macro from the app maps: the known steps from where it stops to its goal, saved as
    its next version (the old version is kept)."""
    from agent.knowledge.guide import AppMaps
    from agent.macros.complete import CompletionError, is_from_map
    from agent.macros.complete import complete as complete_macro
    from app.knowledge_store import SqliteKnowledgeStore

    c = _console()
    store = _open_store()
    m = _find(store, name)
    maps = AppMaps(SqliteKnowledgeStore(store)).all()
    end = _replayed_end(m, maps, _parse_params(param)) if replay_first else None
    try:
        done = complete_macro(m, maps, goal, end=end)
    except CompletionError as exc:
        c.print(f"[red]{quoted(exc)}[/red]")
        store.close()
        raise typer.Exit(1) from None
    c.print(quoted(done.summary()))
    kept = len(done.macro.steps) - len(done.added)
    for i, s in enumerate(done.macro.steps, 1):
        words = quoted(s.description or s.action.describe())
        if i <= kept or not is_from_map(s):
            c.print(f"   {i:>2}. [dim]{words}[/dim]")
        else:
            colour = "yellow" if done.added[i - kept - 1].sensitive else "green"
            c.print(f" [{colour}]+ {i:>2}. {words}[/{colour}]")
    if dry_run:
        c.print(f"dry run: nothing saved ({quoted(m.name)} stays at version {m.version})")
        store.close()
        return
    saved = store.save_macro(done.macro)
    shown = f'"{m.name}"' if " " in m.name else m.name
    c.print(f"saved as version {saved.version}; version {m.version} is kept "
            f"(see `tapwise macro diff {quoted(shown)}`)")
    store.close()


def _replayed_end(m, maps, params: dict[str, str]):  # type: ignore[no-untyped-def]
    """Where the macro ends when replayed on a fresh virtual phone."""
    from agent.macros.complete import ending_by_replay
    from agent.macros.editing import MissingParameter
    from agent.macros.replay import Replayer
    from app.compose import make_parser
    from app.settings import load_settings
    from phone.virtual.phone import VirtualPhone

    phone = VirtualPhone()
    try:
        return ending_by_replay(Replayer(phone, make_parser(load_settings()[0], mode="tree")), m, maps, params)
    except MissingParameter as exc:
        _console().print(f"[red]{escape(str(exc))}[/red]")
        raise typer.Exit(2) from exc
    finally:
        phone.close()
