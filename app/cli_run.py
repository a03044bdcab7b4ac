"""``tapwise run "GOAL"``: run the agent headless on the virtual phone or an adb phone.

Prints every step (observation, latent state, proposal, decision, result) with rich.
``--mode auto`` never asks (sensitive actions still ask unless ``--allow-sensitive``);
``approve`` asks at every step and ``confident`` only when the assessment is unsure;
questions are answered on the terminal (a/e/r/d/q).  Steps are stored in the
project database unless ``--no-store``.  Heavy imports stay inside the command.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.panel import Panel

run_app = typer.Typer(help="Run the agent on a goal.", no_args_is_help=True)


def _ask(console: Console, event: Any, size: Any) -> Any:
    from rich.prompt import Prompt

    from agent.commands import CommandError, parse_command
    from agent.types import Decision, DecisionKind

    console.print(f"[yellow]Waiting for you:[/] {escape(event.reason)}")
    while True:
        choice = Prompt.ask("[a]pprove, [e]dit, [r]eject, [d]emonstrate, [q]uit", choices=list("aerdq"), default="a")
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
            console.print(f"[red]{escape(str(exc))}[/]")
            continue
        return Decision(DecisionKind.EDIT if choice == "e" else DecisionKind.DEMONSTRATE, action=action)


def _print(console: Console, ev: Any, verbose: bool) -> None:
    from agent.events import ErrorEvent, Estimated, Executed, Finished, Observed, Parsed, Proposed

    if isinstance(ev, Observed):
        console.rule(f"step {ev.step + 1} · {ev.screen.foreground_package or '?'}")
    elif isinstance(ev, Parsed) and verbose:
        console.print(Panel(escape(ev.parse.description), title="screen", expand=False))
    elif isinstance(ev, Estimated):
        lat = ev.latent
        console.print(f"[cyan]performed:[/] {escape(lat.performed_action)}\n[cyan]screen:[/] "
                      f"{escape(lat.screen_summary)}\n[cyan]progress:[/] {escape(lat.progression)}\n"
                      f"[cyan]mistakes:[/] {escape(lat.mistakes)}")
    elif isinstance(ev, Proposed):
        p = ev.proposal
        tokens = sum((c.prompt_tokens or 0) + (c.completion_tokens or 0) for c in p.llm_calls)
        llm_ms = sum(c.latency_ms for c in p.llm_calls)
        extra = []
        if p.confidence is not None:
            extra.append(f"confidence {p.confidence:.2f}")
        if p.sensitive:
            extra.append("[red]sensitive[/]")
        console.print(f"[bold]proposes:[/] {escape(p.action.describe())}  "
                      f"[dim]({len(p.llm_calls)} LLM calls, {tokens} tokens, {llm_ms:.0f} ms)[/] {' '.join(extra)}")
        if p.plan:
            console.print(f"[cyan]plan:[/] {escape(' → '.join(p.plan))}")
        if p.rationale and verbose:
            console.print(f"[dim]{escape(p.rationale[:400])}[/]")
        for e in p.evidence:
            console.print(f"[dim]· {escape(e)}[/]")
        if verbose:
            for c in p.llm_calls:
                console.print(Panel(escape(c.prompt[-1500:]) + "\n[bold]→[/] " + escape(c.reply[:500]),
                                    title=f"{c.purpose} ({c.latency_ms:.0f} ms)", expand=False))
    elif isinstance(ev, Executed):
        console.print(f"[green]done:[/] {escape(ev.action.describe())}")
    elif isinstance(ev, ErrorEvent):
        console.print(f"[red]{'fatal ' if ev.fatal else ''}error:[/] {escape(ev.message)}")
    elif isinstance(ev, Finished):
        console.rule(f"[bold]{ev.status.value}[/]: {escape(ev.note)}")


def run(
    goal: str = typer.Argument(..., help="What the agent should do, in words."),
    device: str = typer.Option("sim", help="'sim' for the virtual phone, or an adb serial."),
    planner: str = typer.Option("zeroshot+", help="zeroshot±, cotsc±, react±, visiontasker, chain."),
    mode: str = typer.Option("approve", help="approve | confident | auto."),
    model: str | None = typer.Option(None, help="Model name on the server (default from settings)."),
    base_url: str | None = typer.Option(None, "--base-url", help="Server address (default from settings)."),
    backend: str | None = typer.Option(None, help="ollama | openai (default from settings)."),
    task: str | None = typer.Option(None, help="Virtual phone only: set the phone up for this task id first."),
    max_steps: int = typer.Option(15, min=1, help="Step budget."),
    samples: int = typer.Option(8, min=1, help="CoT-SC samples."),
    fused: bool = typer.Option(False, help="Estimate latent state in one fused call instead of the chain."),
    llm_grounder: bool = typer.Option(True, help="Ask the LLM when no element's words match."),
    allow_sensitive: bool = typer.Option(False, help="Do not ask before sensitive actions (send, pay, delete...)."),
    parse_mode: str = typer.Option("auto", "--parse", help="Screen parsing: auto | tree | vision | fusion."),
    store: bool = typer.Option(True, help="Store the episode in the project database."),
    db: Path | None = typer.Option(None, help="Database file (default: the project database)."),
    timeout: float | None = typer.Option(None, help="Per-request LLM timeout in seconds."),
    verbose: bool = typer.Option(False, "-v", "--verbose", help="Show screens, prompts and replies."),
) -> None:
    """Run the agent on GOAL and print each step."""
    from agent.events import AwaitingDecision, Finished, RunSettings
    from agent.grounding.assessment import Assessor
    from agent.grounding.base import ElementGrounder
    from agent.grounding.llm_grounder import LLMGrounder
    from agent.latent import FusedEstimator
    from agent.llm import RetryPolicy, make_client
    from agent.planners import make_planner
    from agent.runner import drive, run_episode
    from app.settings import load_settings
    from vision.config import PipelineConfig
    from vision.pipeline import ScreenParser

    console = Console()
    settings, problem = load_settings()
    if problem:
        console.print(f"[yellow]settings: {escape(problem)}[/]")
    llm = settings.llm
    backend = backend or llm.backend
    base = base_url or (llm.ollama_host if backend == "ollama" else llm.openai_base_url)
    policy = RetryPolicy(attempts=llm.retries + 1, timeout_s=timeout or llm.timeout_s)
    try:
        client = make_client(backend, model or llm.model, base, policy=policy)
        plan = make_planner(planner, client, samples=samples)
        run_settings = RunSettings(mode=mode, max_steps=max_steps, allow_sensitive=allow_sensitive,
                                   model=model or llm.model)
    except ValueError as exc:
        console.print(f"[red]{escape(str(exc))}[/]")
        raise typer.Exit(2) from None

    found: Any = None
    if device == "sim":
        from app.sim.phone import VirtualPhone

        phone: Any = VirtualPhone()
        if task:
            from app.sim.tasks import load_tasks

            found = {t.id: t for t in load_tasks()}.get(task)
            if found is None:
                console.print(f"[red]no task {task!r}; see `tapwise sim tasks`[/]")
                raise typer.Exit(2)
            found.setup(phone)
    else:
        from agent.device import DeviceError
        from app.device.adb_device import AdbDevice

        try:
            phone = AdbDevice(device)
        except DeviceError as exc:
            console.print(f"[red]{escape(str(exc))}[/]")
            raise typer.Exit(1) from None

    sink = None
    knowledge = None
    if store:
        from agent.knowledge.base import Knowledge
        from app.knowledge_store import SqliteKnowledgeStore
        from app.storage import Store

        sink = Store(db or settings.database_path)
        knowledge = Knowledge(SqliteKnowledgeStore(sink))
        # Solved tasks and demonstrations similar to this goal become planner examples.
        examples = knowledge.tasks.example_lines(goal)
        if examples:
            run_settings = replace(run_settings, examples=examples)
            console.print(f"[dim]{len(examples)} similar solved task(s) given to the planner as examples[/]")
    grounder = ElementGrounder(llm=LLMGrounder(client) if llm_grounder else None)
    run_gen = run_episode(goal, phone, ScreenParser(PipelineConfig(mode=parse_mode)), plan, sink,
                          settings=run_settings, estimator=FusedEstimator(client) if fused else None,
                          grounder=grounder, assessor=Assessor(client) if mode == "confident" else None)
    size = phone.screen_size()
    final = None
    try:
        for ev in drive(run_gen, lambda ev: _ask(console, ev, size)):
            _print(console, ev, verbose)
            if isinstance(ev, AwaitingDecision):
                console.print(f"[yellow]proposal:[/] {escape(ev.proposal.action.describe())}")
            if isinstance(ev, Finished):
                final = ev
        if final is not None and task and device == "sim":
            ok = found.is_success(phone)
            console.print(f"task check: {'[green]goal reached[/]' if ok else '[red]goal not reached[/]'}")
    except KeyboardInterrupt:
        console.print("[yellow]interrupted[/]")
        run_gen.close()
    finally:
        if sink is not None:
            if knowledge is not None and final is not None:
                _learn(console, knowledge, sink, final)
            sink.close()
        phone.close()
    if final is None or final.status.value in ("error", "aborted"):
        raise typer.Exit(1)


def _learn(console: Console, knowledge: Any, sink: Any, final: Any) -> None:
    """After a run: archive a success and map its pages (never fails the run)."""
    try:
        episode = sink.load_episode(final.episode.id)
        record = knowledge.learn_from_episode(episode)
        if record is not None:
            console.print("[dim]stored in the task repository for similar goals[/]")
    except Exception as exc:
        console.print(f"[yellow]could not update knowledge: {escape(str(exc))}[/]")


run_app.command("run")(run)
