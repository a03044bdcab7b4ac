"""``tapwise bench supervised``: the scripted supervisor (``evaluation.supervised``) on
virtual-phone tasks, with the run assembled exactly as the window assembles it
(``app.compose.build_run``, every step waiting for approval, a failed step offered to
the user).  ``--paired`` runs every task twice: with decision feedback and without it
(rejections not remembered, not told to the planner).  ``--again`` runs every task twice
with one decision memory (``agent.memory``): the second pass sees what the user approved,
edited and demonstrated in the first (``--second-wording N``: in another wording of the
goal), and the two passes are printed side by side.  ``--scripted`` uses the scripted
listening model (no LLM server); otherwise the configured or named model.

Prints one line per task and a summary per arm; writes nothing but an optional JSON file.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.console import Console
from rich.markup import escape

from app.cli.bench import bench_app

if TYPE_CHECKING:
    from agent.memory.memory import DecisionMemory
    from app.storage import Store
    from evaluation.supervised import SupervisedResult
    from phone.virtual.tasks import Task


@bench_app.command("supervised")
def supervised(
    tasks: str = typer.Option("yardstick", "--tasks", help="A task set (yardstick), 'all', or comma-separated ids."),
    scripted: bool = typer.Option(False, "--scripted", help="The scripted listening model (no LLM server)."),
    builtin: str = typer.Option("", help="Start this built-in model (e.g. qwen2.5-coder-0.5b) for the run."),
    model: str = typer.Option("", help="Model name as the server knows it (default: the configured model)."),
    base_url: str = typer.Option("", help="LLM server URL (default: the configured one)."),
    backend: str = typer.Option("", help="'ollama' or 'openai' (OpenAI-compatible, e.g. llama.cpp)."),
    planner: str = typer.Option("", help="Planner (default: as the settings say)."),
    paired: bool = typer.Option(False, "--paired", help="Each task with and without decision feedback."),
    feedback: bool = typer.Option(True, "--feedback/--no-feedback", help="Decision feedback (without --paired)."),
    budget: float = typer.Option(2.0, help="Step budget as a multiple of the task's own budget."),
    timeout_s: float = typer.Option(120.0, help="Timeout per LLM request, seconds."),
    out: Path | None = typer.Option(None, help="Write every task's figures to this JSON file."),
    maps: Path | None = typer.Option(None, help="App maps (JSON, as `bench/bench_app_map.py explore --maps` writes "
                                     "them) the runs may use, as if the user had explored those apps."),
    again: bool = typer.Option(False, "--again", help="Supervise every task twice: the second pass with the "
                               "decision memory the first left (first and second pass side by side)."),
    second_wording: str = typer.Option("", "--second-wording", help="With --again: word the second pass with each "
                                       "task's goal number N (0: its first wording), or several passes after the "
                                       "first, one per listed wording (0,1); tasks without the wording are left out "
                                       "of that pass. Default: the first pass's wording."),
) -> None:
    """Supervise the agent with a scripted user: interventions per task, rejected actions
    proposed again, model seconds, the user's waiting time, Approve -> next proposal."""
    from app.compose import RunRequest, build_run, make_parser, planner_for_model, slow_model
    from app.model_prefs import PrefsStore
    from app.settings import load_settings
    from evaluation.online_bench import select_tasks
    from evaluation.scripted_model import ScriptedLLMServer
    from evaluation.supervised import listening_model, summarise, supervise
    from phone.virtual.phone import VirtualPhone
    from phone.virtual.tasks import load_tasks, tasks_by_id

    console = Console(highlight=False)
    settings, problem = load_settings()
    if problem:
        console.print(f"[yellow]{escape(problem)}[/yellow]")
    try:
        ids, _ = select_tasks(tasks)
    except ValueError as exc:
        console.print(f"[red]{escape(str(exc))}[/red]")
        raise typer.Exit(2) from None
    by_id = tasks_by_id(load_tasks())
    map_store = _map_store(maps, console) if maps is not None else None
    llm = settings.llm.model_copy(update={k: v for k, v in (("model", model), ("timeout_s", timeout_s)) if v})
    if backend:
        llm = llm.model_copy(update={"backend": "openai" if backend == "llamacpp" else backend})
    if base_url:
        key = "ollama_host" if llm.backend == "ollama" else "openai_base_url"
        llm = llm.model_copy(update={key: base_url})
    settings = settings.model_copy(update={"llm": llm})
    server = ScriptedLLMServer(responder=listening_model, models=("scripted",)).__enter__() if scripted else None
    if server is not None:
        settings = settings.model_copy(update={"llm": llm.model_copy(update={
            "backend": "ollama", "ollama_host": server.url, "model": "scripted"})})
    if builtin:
        from app.cli.model import start_builtin

        own, bundled, url = start_builtin(console, builtin)
        settings = settings.model_copy(update={"llm": llm.model_copy(update={
            "backend": "openai", "openai_base_url": url, "model": bundled.alias})})
    parser = make_parser(settings, mode="tree")
    prefs = PrefsStore.default()
    chosen = planner_for_model(planner or settings.agent.planner, settings.llm.model, prefs)
    console.print(f"model {escape(settings.llm.model)}, planner {escape(chosen)}"
                  f"{' (fused latent estimate)' if slow_model(settings.llm.model, prefs) else ''}")
    passes = _passes(paired, feedback, again, second_wording)
    memory = _fresh_memory(console) if again else None
    summary_rows = []
    try:
        for p in passes:
            results = []
            for tid in ids:
                task = by_id[tid]
                goal = _wording(task, p.wording)
                if goal is None:
                    continue
                phone = VirtualPhone(seed=0)
                task.setup(phone)

                def make_run(goal, device, judge, task=task, arm=p.feedback):  # type: ignore[no-untyped-def]
                    return build_run(
                        RunRequest(goal=goal, planner=planner or None, autonomy="approve", learn=False,
                                   constrained=False if scripted else None, remember=memory is not None,
                                   max_steps=max(1, round(task.step_budget * budget))),
                        settings, device=device, parser=parser, judge=judge, ask_on_error=True, prefs=prefs,
                        store=map_store, memory=memory,
                        confirm_done=True, feedback=arm, max_wait_s=0.2).events

                try:
                    r = supervise(task, phone, phone, make_run, goal=goal)
                finally:
                    phone.close()
                results.append(r)
                origins = ", ".join(f"{o} {n}" for o, n in r.origins)
                console.print(f"{p.label}  {tid:32} "
                              f"{'done' if r.completed else 'NOT done':8} interventions {r.interventions} "
                              f"(rej {r.rejections}, dem {r.demonstrations}, edit {r.edits})  again "
                              f"{r.proposed_again}  model calls {r.model_calls} ({r.model_s:.1f} s)  wall {r.wall_s:.1f} s  "
                              f"approve->next {_seconds(r.approve_to_next_s)}  steps from: {origins}",
                              soft_wrap=True)
            s = summarise(results)
            summary_rows.append((p, s, results))
            median = "—" if s.approve_to_next_median_s is None else f"{s.approve_to_next_median_s:.1f} s"
            console.print(f"[bold]{p.label}:[/bold] {s.completed}/{s.tasks} completed, "
                          f"mean interventions {s.mean_interventions:.2f}, model calls {s.model_calls} "
                          f"({s.mean_model_calls:.2f} per task), rejected proposed again "
                          f"{s.proposed_again}, Approve→next proposal median {median}, model {s.model_s:.1f} s, "
                          f"waiting {s.waiting_s:.1f} s, wall {s.wall_s:.1f} s", soft_wrap=True)
    finally:
        if server is not None:
            server.__exit__(None, None, None)
        if builtin:
            own.stop()
    for p, _, rs in summary_rows[1:] if again else ():
        console.print(f"[bold]first pass beside {p.label}[/bold]")
        _side_by_side(console, summary_rows[0][2], rs)
    if out is not None:
        out.write_text(json.dumps([{"pass": p.label, "feedback": p.feedback, "wording": p.wording,
                                    "summary": asdict(s), "tasks": [asdict(r) for r in rs]}
                                   for p, s, rs in summary_rows], indent=2), encoding="utf-8")
        console.print(f"written: {out}")


@dataclass(frozen=True, slots=True)
class _Pass:
    label: str
    feedback: bool
    wording: int  # which of the task's goals (0: its first)


def _passes(paired: bool, feedback: bool, again: bool, second_wording: str) -> tuple[_Pass, ...]:
    if again:
        later = [int(w) for w in second_wording.split(",") if w.strip()] or [0]
        return (_Pass("first pass", feedback, 0), *(_Pass(f"second pass, wording {w}", feedback, w) for w in later))
    if paired:
        return (_Pass("with feedback", True, 0), _Pass("without feedback", False, 0))
    return (_Pass("with feedback" if feedback else "without feedback", feedback, 0),)


def _wording(task: Task, n: int) -> str | None:
    """The task's goal in its ``n``-th wording (None when it has no such wording)."""
    return task.goals[n] if 0 <= n < len(task.goals) else None


def _fresh_memory(console: Console) -> DecisionMemory:
    """An empty decision memory in a throwaway Tapwise database (the first pass fills it)."""
    import tempfile

    from agent.memory.memory import DecisionMemory
    from app.knowledge_store import SqliteKnowledgeStore
    from app.storage import Store as Db

    path = Path(tempfile.mkdtemp(prefix="tapwise-memory-")) / "memory.sqlite"
    console.print(f"decision memory: {escape(str(path))}")
    return DecisionMemory(SqliteKnowledgeStore(Db(path)))


def _side_by_side(console: Console, first: list[SupervisedResult], second: list[SupervisedResult]) -> None:
    """Per task: interventions and model calls of the first pass beside the second's."""
    by_id = {r.task_id: r for r in first}
    console.print("task | first: done, interventions, model calls | second: done, interventions, model calls")
    for r in second:
        f = by_id.get(r.task_id)
        if f is None:
            continue
        console.print(f"{r.task_id} | {'yes' if f.completed else 'no'}, {f.interventions}, {f.model_calls} | "
                      f"{'yes' if r.completed else 'no'}, {r.interventions}, {r.model_calls}", soft_wrap=True)
    pairs = [(by_id[r.task_id], r) for r in second if r.task_id in by_id]
    if pairs:
        n = len(pairs)
        console.print(f"[bold]same tasks, {n}:[/bold] interventions/task {sum(f.interventions for f, _ in pairs) / n:.2f}"
                      f" -> {sum(r.interventions for _, r in pairs) / n:.2f}; model calls "
                      f"{sum(f.model_calls for f, _ in pairs)} -> {sum(r.model_calls for _, r in pairs)}",
                      soft_wrap=True)


def _map_store(path: Path, console: Console) -> Store:
    """A throwaway database holding the app maps of ``path`` (nothing else: no solved tasks)."""
    import tempfile

    from agent.knowledge.app_map import AppMap, MapError
    from agent.knowledge.guide import AppMaps
    from app.knowledge_store import SqliteKnowledgeStore
    from app.storage import Store as Db

    try:
        docs = json.loads(path.read_text(encoding="utf-8"))
        found = [AppMap.from_data(d) for d in docs]
    except (OSError, ValueError, MapError, KeyError, TypeError) as exc:
        console.print(f"[red]cannot read the maps in {escape(str(path))}: {escape(str(exc))}[/red]")
        raise typer.Exit(2) from None
    store = Db(Path(tempfile.mkdtemp(prefix="tapwise-maps-")) / "maps.sqlite")
    for m in found:
        AppMaps(SqliteKnowledgeStore(store)).save(m)
    console.print(f"{len(found)} app maps from {escape(str(path))}")
    return store


def _seconds(values: tuple[float, ...]) -> str:
    """The values in whole seconds, for the per-task line."""
    return "[" + ", ".join(f"{v:.0f}" for v in values) + "] s"
