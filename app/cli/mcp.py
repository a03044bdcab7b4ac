"""``tapwise mcp``: serve the phone to MCP clients (desktop assistants, coding agents) with
Tapwise's supervision.

Over stdio by default (the client launches this command) or, with ``--http``, over
streamable HTTP on 127.0.0.1 behind a bearer token.  Acting calls are asked on the
terminal (``/dev/tty``, since stdin/stdout carry the protocol), or decided by a stated
policy: ``--auto`` (sensitive actions still asked) or ``--read-only``.  Calls are stored
as episodes in the project database unless ``--no-store``.  Messages go to stderr.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import typer
from rich.console import Console
from rich.markup import escape

if TYPE_CHECKING:
    from agent.types import Decision
    from app.mcp.supervisor import Review

log = logging.getLogger(__name__)


class TerminalSupervisor:
    """Asks the person at the terminal: questions go to ``out``, answers come from ``tty``
    (text streams opened on ``/dev/tty``; a terminal cannot be one read-write text stream)."""

    def __init__(self, tty: TextIO, out: TextIO, size: Any) -> None:
        self.console = Console(file=out, force_terminal=True)
        self.tty = tty
        self.size = size

    def _ask(self, prompt: str, choices: str = "") -> str:
        while True:
            self.console.print(prompt, end="")
            answer = self.tty.readline()
            if answer == "":  # the terminal went away: nobody can approve
                return ""
            answer = answer.strip()
            if not choices or (answer[:1].lower() in choices and answer):
                return answer
            if answer == "" and choices:
                return choices[0]

    def review(self, review: Review) -> Decision:
        from agent.commands import CommandError, parse_command
        from agent.types import Decision, DecisionKind

        p = review.proposal
        self.console.rule(f"MCP client {escape(review.client)} · {escape(review.tool)}")
        self.console.print(f"[bold]proposes:[/] {escape(p.action.describe())}")
        if p.sensitive:
            self.console.print(f"[red]sensitive:[/] {escape(review.reason)}")
        for e in p.evidence:
            self.console.print(f"[dim]· {escape(e)}[/]")
        while True:
            choice = self._ask(escape("[a]pprove, [e]dit, [r]eject, [d]emonstrate, [q] stop this call? "), "aerdq")
            if choice == "":
                return Decision(DecisionKind.REJECT, feedback="the terminal closed before anyone decided",
                                decided_by="policy")
            c = choice[0].lower()
            if c == "a":
                return Decision(DecisionKind.APPROVE)
            if c == "q":
                return Decision(DecisionKind.ABORT, feedback="stopped from the terminal")
            if c == "r":
                why = self._ask("What is wrong with it? ") or "not this"
                return Decision(DecisionKind.REJECT, feedback=why)
            text = self._ask("Action (e.g. 'tap Display', 'scroll down', 'type \"hi\" in Message'): ")
            try:
                action = parse_command(text, self.size)
            except CommandError as exc:
                self.console.print(f"[red]{escape(str(exc))}[/]")
                continue
            return Decision(DecisionKind.EDIT if c == "e" else DecisionKind.DEMONSTRATE, action=action)


def _open_tty() -> tuple[TextIO, TextIO] | None:
    """``/dev/tty`` for reading and for writing, or None without a controlling terminal."""
    try:
        reader = open("/dev/tty", encoding="utf-8", errors="replace")
    except OSError:
        return None
    try:
        return reader, open("/dev/tty", "w", encoding="utf-8", errors="replace")
    except OSError:
        reader.close()
        return None


def _phone(device: str, task: str | None, *, streamed: bool = False) -> Any:
    from app.cli.phones import PhoneProblem, open_phone

    try:
        return open_phone(device, task, streamed=streamed)
    except PhoneProblem as exc:
        raise typer.BadParameter(str(exc), param_hint="--task" if "task" in str(exc) else "--device") from None


def mcp(
    device: str = typer.Option("sim", help="'sim' for the virtual phone, or an adb serial."),
    http: bool = typer.Option(False, "--http", help="Serve streamable HTTP on 127.0.0.1 instead of stdio."),
    host: str = typer.Option("127.0.0.1", help="HTTP: the loopback address to listen on (nothing else is allowed)."),
    port: int = typer.Option(8765, min=0, max=65535, help="HTTP: the port (0 picks a free one)."),
    token: str = typer.Option("", envvar="TAPWISE_MCP_TOKEN", help="HTTP: the bearer token clients must send "
                              "(default: a new random one, printed at start)."),
    auto: bool = typer.Option(False, "--auto", help="Carry out acting calls at once (sensitive ones still ask)."),
    read_only: bool = typer.Option(False, "--read-only", help="Allow observing only; refuse every acting call."),
    no_terminal: bool = typer.Option(False, "--no-terminal", help="Never ask on this terminal: calls that need "
                                     "approval are refused (for a server nobody watches)."),
    task: str | None = typer.Option(None, help="Virtual phone only: set the phone up for this task id first."),
    parse_mode: str = typer.Option("", "--parse", help="Screen parsing: auto | tree | vision | fusion "
                                                       "(default from the vision settings)."),
    store: bool = typer.Option(True, help="Store every call as a step of an episode named after the client."),
    db: Path | None = typer.Option(None, help="Database file (default: the project database)."),
    record: bool = typer.Option(False, "--record", help="Record each client's session: a video beside the "
                                "database and what flashes on the screen after each call (read_episode returns "
                                "both). Needs a phone streamed over scrcpy (with sim: served in its own process)."),
) -> None:
    """Serve the phone to MCP clients; every acting call waits for approval (or --auto / --read-only)."""
    import anyio

    from app import compose
    from app.mcp.clients import NotLoopback, check_loopback, new_token
    from app.mcp.episodes import EpisodeBook
    from app.mcp.service import PhoneService
    from app.mcp.supervisor import POLICY_WORDS, Policy, PolicySupervisor
    from app.mcp.tasks import task_runner
    from app.settings import load_settings

    err = Console(stderr=True)
    if auto and read_only:
        raise typer.BadParameter("choose one of --auto and --read-only")
    try:
        from app.mcp.server import HttpServer, build_server
    except ModuleNotFoundError as exc:
        err.print(f"[red]{escape(str(exc))}[/]")
        raise typer.Exit(2) from None
    if http:
        try:
            check_loopback(host)
        except NotLoopback as exc:
            err.print(f"[red]{escape(str(exc))}[/]")
            raise typer.Exit(2) from None
    policy = Policy.AUTO if auto else Policy.READ_ONLY if read_only else Policy.ASK
    settings, problem = load_settings()
    if problem:
        err.print(f"[yellow]settings: {escape(problem)}[/]")
    opened = _phone(device, task, streamed=record)
    phone = opened.phone
    if opened.note or opened.mirror_problem:
        err.print(f"[dim]{escape(opened.note or opened.mirror_problem)}[/]")
    sink = None
    if store:
        from app.storage import Store, StoreError

        try:
            sink = Store(db or settings.database_path)
        except StoreError as exc:
            err.print(f"[red]{escape(str(exc))}[/]")
            phone.close()
            raise typer.Exit(2) from None
    tty = _open_tty() if policy is not Policy.READ_ONLY and not no_terminal else None
    asker = TerminalSupervisor(tty[0], tty[1], phone.screen_size()) if tty is not None else None
    if asker is None and policy is not Policy.READ_ONLY:
        err.print("[yellow]no terminal to ask on: calls that need approval will be refused[/]")
    parser = compose.make_parser(settings, mode=parse_mode or None)
    records = None
    if record and sink is not None:
        from app.mcp.recording import SessionRecords
        from phone.record.capture import reader_beside

        read = reader_beside(parser)  # one OCR for every client's record (the parser's models), loaded now
        records = SessionRecords(sink, lambda: compose.recording(settings, phone, sink, video=True, read=read))
    book = EpisodeBook(sink, device=device, on_begin=records.begin if records is not None else None)
    service = PhoneService(phone, parser.parse, PolicySupervisor(policy, asker), book, store=sink,
                           task_runner=task_runner(settings, phone, parser, sink, policy),
                           wait_ms=0 if device == "sim" and not record else 300, records=records)
    server = build_server(service)
    err.print(f"[bold]Tapwise MCP server[/] on {escape(device)}: {escape(POLICY_WORDS[policy])}")
    try:
        if http:
            secret = token or new_token()
            web = HttpServer(server, secret, host=host, port=port)
            web.start()
            err.print(f"listening on {web.url}\nbearer token: {secret}\n(Ctrl+C stops)")
            try:
                anyio.run(anyio.sleep_forever)
            finally:
                web.stop()
        else:
            anyio.run(server.run_stdio_async)
    except KeyboardInterrupt:
        pass
    finally:
        service.close()
        if sink is not None:
            sink.close()
        phone.close()
        for stream in tty or ():
            stream.close()
