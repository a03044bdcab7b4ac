"""``tapwise run "GOAL"``: run the agent headless on the virtual phone or an adb phone.

The run is assembled by ``app.compose`` from the user's settings, the options overriding
them.  Prints every step (observation, latent state, proposal, decision, result, where
the step's time went) with rich.  ``--mode auto`` never asks (sensitive actions still ask
unless ``--allow-sensitive``); ``approve`` asks at every step and ``confident`` only when
the assessment is unsure; questions are answered on the terminal (a/e/r/d/q).  Steps are
stored in the project database unless ``--no-store``; a step that cannot be stored
stops the run.  ``--record`` records the run (``app.run_record``): what flashes on the
screen after each action goes into the steps and a video is written beside the database
(its path is printed at the end); it needs a phone streamed over scrcpy, so with
``--device sim`` the virtual phone is served in its own process and reached through adb.
The exit status says how the run ended (``EXIT_CODES``, documented in the README).  Heavy
imports stay inside the command.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.panel import Panel

from agent.redact import redact_url
from app.cli.safe_text import quoted

if TYPE_CHECKING:
    from agent.events import Event
    from agent.types import Proposal, Step

run_app = typer.Typer(help="Run the agent on a goal.", no_args_is_help=True)

#: How ``tapwise run`` exits: by the episode's status, or by what stopped it.
EXIT_SUCCEEDED = 0
EXIT_FAILED = 1  # failed, impossible, or the task check says the goal was not reached
EXIT_ERROR = 2  # the run ended in an error, or could not start (bad options, database, phone)
EXIT_NOT_STORED = 3  # a step could not be stored: the run was stopped there
EXIT_INTERRUPTED = 130  # Ctrl-C, the terminal's input ended, or the user stopped it ([q]uit)
EXIT_CODES = {"succeeded": EXIT_SUCCEEDED, "failed": EXIT_FAILED, "impossible": EXIT_FAILED,
              "error": EXIT_ERROR, "aborted": EXIT_INTERRUPTED, "interrupted": EXIT_INTERRUPTED}


def shown(text: str) -> str:
    """Model or screen text for a panel: control characters made visible, lines kept."""
    return quoted(text, newlines=True)


def _ask(console: Console, event: Any, size: Any) -> Any:
    from rich.prompt import Prompt

    from agent.commands import CommandError, parse_command
    from agent.types import Decision, DecisionKind

    console.print(f"[yellow]Waiting for you:[/] {quoted(event.reason)}")
    while True:
        choice = Prompt.ask(escape("[a]pprove, [e]dit, [r]eject, [d]emonstrate, [q]uit"), choices=list("aerdq"),
                            default="a")
        if choice == "a":
            return Decision(DecisionKind.APPROVE)
        if choice == "q":
            return Decision(DecisionKind.ABORT, feedback="stopped from the terminal")
        if choice == "r":
            return Decision(DecisionKind.REJECT, feedback=Prompt.ask("What is wrong with it") or "not this")
        text = Prompt.ask("Action (e.g. 'tap Display', 'scroll down', 'type \"hi\" in Message')")
        try:
            action = parse_command(text, size)
        except CommandError as exc:
            console.print(f"[red]{quoted(str(exc))}[/]")
            continue
        return Decision(DecisionKind.EDIT if choice == "e" else DecisionKind.DEMONSTRATE, action=action)


def _timings(step: Step) -> str:
    """Where a step's time went, e.g. ``frame 40 ms · parse 12 ms · llm 800 ms``."""
    return " · ".join(f"{name} {ms:.0f} ms" for name, ms in step.timings_ms)


def _print(console: Console, ev: Event, verbose: bool) -> None:
    """One event on the terminal; every stored step ends with where its time went."""
    from agent import events

    match ev:
        case events.Observed(step=i, screen=screen):
            console.rule(f"step {i + 1} · {screen.foreground_package or '?'}")
        case events.Parsed(parse=parse) if verbose:
            console.print(Panel(shown(parse.description), title="screen", expand=False))
        case events.Estimated(latent=lat):
            console.print(f"[cyan]performed:[/] {quoted(lat.performed_action)}\n[cyan]screen:[/] "
                          f"{quoted(lat.screen_summary)}\n[cyan]progress:[/] {quoted(lat.progression)}\n"
                          f"[cyan]mistakes:[/] {quoted(lat.mistakes)}")
        case events.Proposed(proposal=p):
            _print_proposal(console, p, verbose)
        case events.Executed(action=action):
            console.print(f"[green]done:[/] {quoted(action.describe())}")
        case events.Rejected(record=step):
            console.print(f"[yellow]rejected:[/] {quoted(step.decision.feedback if step.decision else '')}")
        case events.Aborted():
            console.print("[yellow]stopped at this step[/]")
        case events.ErrorEvent(message=message, fatal=fatal):
            console.print(f"[red]{'fatal ' if fatal else ''}error:[/] {quoted(redact_url(message))}")
        case events.Finished(status=status, note=note, episode=episode):
            from agent.cost import run_cost

            console.rule(f"[bold]{status.value}[/]: {quoted(redact_url(note))}")
            console.print(f"cost: {quoted(run_cost(episode).describe())}")
        case events.Amended(step=i, record=step):
            console.print(f"[magenta]flashed after step {i + 1}:[/] "
                          + "; ".join(f"“{quoted(t.text)}” ({t.seconds:.1f} s)" for t in step.transients))
    if isinstance(ev, events.Executed | events.Rejected | events.Aborted | events.ErrorEvent) \
            and ev.record is not None and ev.record.timings_ms:
        console.print(f"[dim]time: {quoted(_timings(ev.record))}[/]")


def _print_proposal(console: Console, p: Proposal, verbose: bool) -> None:
    tokens = sum((c.prompt_tokens or 0) + (c.completion_tokens or 0) for c in p.llm_calls)
    llm_ms = sum(c.latency_ms for c in p.llm_calls)
    extra = []
    if p.confidence is not None:
        extra.append(f"confidence {p.confidence:.2f}")
    if p.sensitive:
        extra.append("[red]sensitive[/]")
    console.print(f"[bold]proposes:[/] {quoted(p.action.describe())}  "
                  f"[dim]({len(p.llm_calls)} LLM calls, {tokens} tokens, {llm_ms:.0f} ms)[/] {' '.join(extra)}")
    if p.plan:
        console.print(f"[cyan]plan:[/] {quoted(' → '.join(p.plan))}")
    if p.rationale and verbose:
        console.print(f"[dim]{quoted(p.rationale[:400])}[/]")
    for e in p.evidence:
        console.print(f"[dim]· {quoted(e)}[/]")
    if verbose:
        for c in p.llm_calls:
            console.print(Panel(shown(c.prompt[-1500:]) + "\n[bold]→[/] " + shown(c.reply[:500]),
                                title=f"{c.purpose} ({c.latency_ms:.0f} ms)", expand=False))


def run(
    goal: str = typer.Argument(..., help="What the agent should do, in words."),
    device: str = typer.Option("sim", help="'sim' for the virtual phone, or an adb serial."),
    planner: str | None = typer.Option(None, help="zeroshot±, cotsc±, react±, visiontasker, chain, prompt2task "
                                                  "(default from settings)."),
    mode: str | None = typer.Option(None, help="approve | confident | auto (default from settings)."),
    model: str | None = typer.Option(None, help="Model name on the server (default from settings)."),
    base_url: str | None = typer.Option(None, "--base-url", help="Server address (default from settings)."),
    backend: str | None = typer.Option(None, help="ollama | openai (default from settings)."),
    task: str | None = typer.Option(None, help="Virtual phone only: set the phone up for this task id first."),
    max_steps: int | None = typer.Option(None, min=1, help="Step budget (default from settings)."),
    samples: int = typer.Option(8, min=1, help="CoT-SC samples."),
    fused: bool = typer.Option(False, help="Estimate latent state in one fused call instead of the chain."),
    llm_grounder: bool = typer.Option(True, help="Ask the LLM when no element's words match."),
    constrained: bool | None = typer.Option(None, "--constrained/--free", help="Structured replies whose JSON "
                                            "schema is built per screen (when the server enforces schemas), or "
                                            "free text (default from settings)."),
    allow_sensitive: bool = typer.Option(False, help="Do not ask before sensitive actions (send, pay, delete...)."),
    parse_mode: str = typer.Option("", "--parse", help="Screen parsing: auto | tree | vision | fusion "
                                                       "(default from the vision settings)."),
    store: bool = typer.Option(True, help="Store the episode in the project database."),
    db: Path | None = typer.Option(None, help="Database file (default: the project database)."),
    db_wait: float = typer.Option(30.0, "--db-wait", min=0.1, help="Seconds to wait for a database another "
                                  "program holds locked before the run stops (a step is never left unstored)."),
    timeout: float | None = typer.Option(None, help="Per-request LLM timeout in seconds."),
    verbose: bool = typer.Option(False, "-v", "--verbose", help="Show screens, prompts and replies."),
    record: bool = typer.Option(False, "--record", help="Record the run: a video (its path is printed at the end) "
                                "and what flashes on the screen after each action. Needs a phone streamed over "
                                "scrcpy (with --device sim the virtual phone is served in its own process)."),
) -> None:
    """Run the agent on GOAL and print each step."""
    from agent.events import AwaitingDecision, Finished
    from agent.runner import drive
    from agent.sink import StepNotStored
    from app import compose
    from app.model_prefs import PrefsStore
    from app.settings import load_settings

    console = Console()
    settings, problem = load_settings()
    if problem:
        console.print(f"[yellow]settings: {quoted(problem)}[/]")
    sink = None
    if store:
        from app.storage import Store, StoreError

        try:
            sink = Store(db or settings.database_path, busy_timeout_s=db_wait / 3, write_retries=2)
        except StoreError as exc:
            console.print(f"[red]{quoted(str(exc))}[/]")
            raise typer.Exit(EXIT_ERROR) from None
    try:
        phone, found, judged = _phone(console, device, task, streamed=record)
    except BaseException:
        if sink is not None:
            sink.close()
        raise

    def learnt(record: Any) -> None:
        if record is not None:
            console.print("[dim]stored in the task repository for similar goals[/]")

    parser = compose.make_parser(settings, mode=parse_mode)
    recorded = _recording(console, settings, phone, sink, parser) if record else None
    try:
        client = compose.make_client(settings, model=model, backend=backend, base_url=base_url, timeout_s=timeout)
        request = compose.RunRequest(goal, planner=planner, autonomy=mode, model=model, max_steps=max_steps,
                                     allow_sensitive=allow_sensitive or None, samples=samples, fused=fused,
                                     llm_grounder=llm_grounder, constrained=constrained)
        from agent.secrets import MappingSource
        from app.cli.consent_prompt import TerminalGate

        built = compose.build_run(request, settings, device=phone, parser=parser,
                                  store=sink, client=client, on_learnt=learnt, prefs=PrefsStore.default(),
                                  consent=compose.user_consent(TerminalGate(console)),
                                  secrets=MappingSource(found.secrets) if found is not None and found.secrets else None,
                                  recorded=recorded)
    except ValueError as exc:
        console.print(f"[red]{quoted(redact_url(str(exc)))}[/]")
        _close(phone, sink)
        raise typer.Exit(EXIT_ERROR) from None
    if built.examples:
        console.print(f"[dim]{built.examples} similar solved task(s) given to the planner as examples[/]")
    size = phone.screen_size()
    final = None
    code = EXIT_INTERRUPTED
    ctrl_c = _CtrlC()
    try:
        for ev in drive(built.events, lambda ev: _ask(console, ev, size)):
            ctrl_c.check()
            _print(console, ev, verbose)
            if isinstance(ev, AwaitingDecision):
                console.print(f"[yellow]proposal:[/] {quoted(ev.proposal.action.describe())}")
            if isinstance(ev, Finished):
                final = ev
        if final is not None:
            code = EXIT_CODES.get(final.status.value, EXIT_ERROR)
        if final is not None and found is not None:
            ok = found.is_success(judged)
            console.print(f"task check: {'[green]goal reached[/]' if ok else '[red]goal not reached[/]'}")
            if not ok and code == EXIT_SUCCEEDED:
                code = EXIT_FAILED
    except StepNotStored as exc:
        console.print(f"[red]stopped: a step could not be stored, so the run did not go on.[/] {quoted(str(exc))}")
        built.events.close()
        code = EXIT_NOT_STORED
    except (KeyboardInterrupt, EOFError) as exc:
        why = "interrupted" if isinstance(exc, KeyboardInterrupt) else "the terminal's input ended"
        console.print(f"[yellow]{why}: the run is stored as interrupted[/]")
        built.events.close()
        code = EXIT_INTERRUPTED
    finally:
        ctrl_c.restore()
        compose.close_client(built.client)
        if recorded is not None:
            _say_recorded(console, recorded)
        _close(phone, sink)
    if code != EXIT_SUCCEEDED:
        raise typer.Exit(code)


class _CtrlC:
    """Ctrl-C during the run, heard even where Python drops its ``KeyboardInterrupt``.

    Python raises the interrupt wherever the main thread happens to be; when that is a
    finalizer (an object's ``__del__``, a weak reference's callback) the exception is
    printed as "ignored" and the run goes on, so a Ctrl-C is sometimes lost on a busy
    machine.  While the run's loop runs, the handler notes the signal as well as raising,
    and ``check`` (called at every event) raises again for one that was dropped.  Outside
    the main thread, and after ``restore``, Python's own handling is left alone."""

    def __init__(self) -> None:
        import signal
        import threading

        self.heard = False
        self._previous: Any = None
        if threading.current_thread() is threading.main_thread() \
                and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            self._previous = signal.signal(signal.SIGINT, self._on_signal)

    def _on_signal(self, signum: int, frame: Any) -> None:
        self.heard = True
        raise KeyboardInterrupt

    def check(self) -> None:
        if self.heard:
            raise KeyboardInterrupt

    def restore(self) -> None:
        import signal

        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)
            self._previous = None


def _phone(console: Console, device: str, task: str | None, *, streamed: bool = False) -> tuple[Any, Any, Any]:
    """The phone to run on (``app.cli.phones``), the task if any, and what its check reads."""
    from app.cli.phones import PhoneProblem, open_phone

    try:
        opened = open_phone(device, task, streamed=streamed)
    except PhoneProblem as exc:
        console.print(f"[red]{quoted(str(exc))}[/]")
        raise typer.Exit(EXIT_ERROR) from None
    if opened.note:
        console.print(f"[dim]{quoted(opened.note)}[/]")
    if opened.mirror_problem:
        console.print(f"[yellow]no mirror, nothing will be recorded: {quoted(opened.mirror_problem)}[/]")
    return opened.phone, opened.task, opened.judged


def _recording(console: Console, settings: Any, phone: Any, sink: Any, parser: Any) -> Any:
    from app import compose
    from app.run_record import streams
    from phone.record.capture import reader_beside

    read = reader_beside(parser) if streams(phone) and settings.record.flashes else None
    recorded = compose.recording(settings, phone, sink, video=True, read=read)
    if recorded is None:
        console.print("[yellow]nothing is recorded: the phone is not streamed over scrcpy (see the mirror's "
                      "message above)[/]")
    elif not recorded.video:
        console.print("[yellow]no video: it needs the project database (--store)[/]")
    return recorded


def _say_recorded(console: Console, recorded: Any) -> None:
    """Finish the record (if the run did not) and say where the video is."""
    summary = recorded.stop()
    if summary is None:
        return
    flashes = len(summary.transients)
    console.print(f"[magenta]record:[/] {flashes} flash{'es' if flashes != 1 else ''} on the screen kept in the steps")
    v = summary.video
    if v is not None and v.packets:
        console.print(f"[magenta]video:[/] {quoted(str(v.path))} ({v.seconds:.1f} s, {v.bytes / 1e6:.1f} MB)"
                      + (f" — stopped early: {quoted(v.stopped)}" if v.stopped else ""))
    elif v is not None:
        console.print("[yellow]video: the phone sent no picture; no file was written[/]")


def _close(phone: Any, sink: Any) -> None:
    if sink is not None:
        sink.close()
    phone.close()


run_app.command("run")(run)
