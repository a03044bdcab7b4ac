"""``tapwise bench supervised``: the scripted supervisor (``evaluation.supervised``) on
virtual-phone tasks, with the run assembled exactly as the window assembles it
(``app.compose.build_run``, every step waiting for approval, a failed step offered to
the user).  ``--paired`` runs every task twice: with decision feedback and without it
(rejections not remembered, not told to the planner).  ``--again`` runs every task twice
with one decision memory (``agent.memory``): the second pass sees what the user approved,
edited and demonstrated in the first (``--second-wording N``: in another wording of the
goal), and the two passes are printed side by side.  ``--scripted`` uses the scripted
listening model (no LLM server); otherwise the configured or named model.

``--wording`` (``0``, ``0,1,2``, ``all``) and ``--language`` (``en``, ``de``, ``en,de``)
choose how each task is asked (``evaluation.wordings``): a task without goals in the
language, or without that many wordings, is skipped with a message.  ``--out FILE`` is
rewritten after every task (each result with its wording, language and goal) and an
existing file resumes the run: the cells it holds are read back, not run again.  With
``--again`` the passes share a memory that lives only as long as the command, so its
``--out`` file is written once at the end and never resumed.

Prints one line per task and a summary per arm (or pass), per language and wording beside
the tuned wording 0 when there are several; writes nothing but the ``--out`` file.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console
from rich.markup import escape

from app.cli.bench import bench_app
from app.cli.bench_tables import print_axes

if TYPE_CHECKING:
    from agent.memory.memory import DecisionMemory
    from app.storage import Store
    from evaluation.supervised import SupervisedResult
    from evaluation.wordings import Cell


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
    out: Path | None = typer.Option(None, help="Write every task's figures to this JSON file (rewritten after every "
                                    "task; an existing file resumes the run)."),
    maps: Path | None = typer.Option(None, help="App maps (JSON, as `bench/bench_app_map.py explore --maps` writes "
                                     "them) the runs may use, as if the user had explored those apps."),
    wording: str = typer.Option("0", "--wording", help="Which wording of each goal: 0 (the tuned one), a list such "
                                "as 0,1,2, or 'all'. A task without that wording is skipped with a message."),
    language: str = typer.Option("en", "--language", help="The phone's language and the goals': en, de, or en,de. "
                                 "A task without goals in the language is skipped with a message."),
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
    from evaluation.supervised import listening_model, supervise
    from evaluation.supervised_log import SupervisedLog
    from evaluation.wordings import parse_languages, parse_wordings, plan_cells
    from phone.virtual.phone import VirtualPhone
    from phone.virtual.tasks import load_tasks, tasks_by_id

    console = Console(highlight=False)
    settings, problem = load_settings()
    if problem:
        console.print(f"[yellow]{escape(problem)}[/yellow]")
    by_id = tasks_by_id(load_tasks())
    try:
        ids, _ = select_tasks(tasks)
        cells, skipped = plan_cells([by_id[i] for i in ids], parse_wordings(wording), parse_languages(language))
        passes = _passes(paired, feedback, again, second_wording)
    except ValueError as exc:
        console.print(f"[red]{escape(str(exc))}[/red]", soft_wrap=True)
        raise typer.Exit(2) from None
    for msg in skipped:
        console.print(f"[yellow]{escape(msg)}[/yellow]", soft_wrap=True)
    map_store = _map_store(maps, console) if maps is not None else None
    llm = settings.llm.model_copy(update={k: v for k, v in (("model", model), ("timeout_s", timeout_s)) if v})
    if backend:
        llm = llm.model_copy(update={"backend": "openai" if backend == "llamacpp" else backend})
    if base_url:
        key = "ollama_host" if llm.backend == "ollama" else "openai_base_url"
        llm = llm.model_copy(update={key: base_url})
    settings = settings.model_copy(update={"llm": llm})
    what = {"model": "scripted" if scripted else (builtin or llm.model), "planner": planner or settings.agent.planner,
            "maps": str(maps) if maps is not None else "", "budget": budget}
    try:
        log = SupervisedLog.open(out, what) if out is not None and not again else SupervisedLog(None, what)
    except ValueError as exc:
        console.print(f"[red]{escape(str(exc))}[/red]", soft_wrap=True)
        raise typer.Exit(2) from None
    jobs = list(_jobs(passes, cells, by_id))
    todo = [(p, c) for p, c in jobs if again or not log.has(p.feedback, c)]
    if len(todo) < len(jobs):
        console.print(f"resuming from {escape(str(out))}: {len(jobs) - len(todo)} of {len(jobs)} cells already there",
                      soft_wrap=True)
    server = ScriptedLLMServer(responder=listening_model, models=("scripted",)).__enter__() if scripted and todo \
        else None
    if server is not None:
        settings = settings.model_copy(update={"llm": llm.model_copy(update={
            "backend": "ollama", "ollama_host": server.url, "model": "scripted"})})
    own = None
    if builtin and todo:
        from app.cli.model import start_builtin

        own, bundled, url = start_builtin(console, builtin)
        settings = settings.model_copy(update={"llm": llm.model_copy(update={
            "backend": "openai", "openai_base_url": url, "model": bundled.alias})})
    parser = make_parser(settings, mode="tree")
    prefs = PrefsStore.default()
    chosen = planner_for_model(planner or settings.agent.planner, settings.llm.model, prefs)
    console.print(f"model {escape(settings.llm.model)}, planner {escape(chosen)}"
                  f"{' (fused latent estimate)' if slow_model(settings.llm.model, prefs) else ''}; {len(cells)} cells "
                  f"({len(ids)} tasks × wording {escape(wording)} × language {escape(language)})")
    memory = _fresh_memory(console) if again else None
    by_pass: dict[_Pass, list[SupervisedResult]] = {p: [] for p in passes}
    try:
        for p, cell in todo:
            task = by_id[cell.task_id]
            phone = VirtualPhone(seed=0, lang=cell.language)
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
                r = supervise(task, phone, phone, make_run, wording=cell.wording)
            finally:
                phone.close()
            by_pass[p].append(r)
            if not again:
                log.add(p.feedback, r)
            origins = ", ".join(f"{o} {n}" for o, n in r.origins)
            console.print(f"{p.label}  {cell.task_id:32} {cell.language} w{cell.wording}  "
                          f"{'done' if r.completed else 'NOT done':8} interventions {r.interventions} "
                          f"(rej {r.rejections}, dem {r.demonstrations}, edit {r.edits})  again "
                          f"{r.proposed_again}  model calls {r.model_calls} ({r.model_s:.1f} s)  wall {r.wall_s:.1f} s  "
                          f"approve->next {_seconds(r.approve_to_next_s)}  steps from: {origins}"
                          + (f"  — {escape('; '.join(r.intervened))}" if r.intervened else ""), soft_wrap=True)
    finally:
        if server is not None:
            server.__exit__(None, None, None)
        if own is not None:
            own.stop()
    if again:
        _report_passes(console, passes, by_pass, out)
        return
    for p in passes:
        _print_summary(console, p.label, log.results(p.feedback, cells))
    if out is not None:
        console.print(f"written: {out}")


@dataclass(frozen=True, slots=True)
class _Pass:
    label: str
    feedback: bool
    wording: int | None = None  # a later --again pass's wording (None: the cell's own)


def _passes(paired: bool, feedback: bool, again: bool, second_wording: str) -> tuple[_Pass, ...]:
    if again:
        try:
            later: list[int | None] = [int(w) for w in second_wording.split(",") if w.strip()]
        except ValueError:
            raise ValueError(f"--second-wording {second_wording!r}: give wording numbers such as 1 or 0,1") from None
        return (_Pass("first pass", feedback), *(_Pass(f"second pass, wording {w}", feedback, w) for w in later or [None]))
    if paired:
        return (_Pass("with feedback", True), _Pass("without feedback", False))
    return (_Pass("with feedback" if feedback else "without feedback", feedback),)


def _jobs(passes: tuple[_Pass, ...], cells: list[Cell], by_id: dict[str, Any]) -> Iterator[tuple[_Pass, Cell]]:
    """Every pass over the cells, in order; a later ``--again`` pass asks each cell's task in
    its own wording (tasks without it are left out of that pass)."""
    from dataclasses import replace

    for p in passes:
        for c in cells:
            if p.wording is None:
                yield p, c
            elif p.wording < len(by_id[c.task_id].wordings(c.language)):
                yield p, replace(c, wording=p.wording, goal=by_id[c.task_id].wording(p.wording, c.language))


def _print_summary(console: Console, label: str, results: list[SupervisedResult]) -> None:
    from evaluation.supervised import summarise
    from evaluation.supervised_log import MEASURES

    s = summarise(results)
    median = "—" if s.approve_to_next_median_s is None else f"{s.approve_to_next_median_s:.1f} s"
    console.print(f"[bold]{label}:[/bold] {s.completed}/{s.tasks} completed, "
                  f"mean interventions {s.mean_interventions:.2f}, model calls {s.model_calls} "
                  f"({s.mean_model_calls:.2f} per task), rejected proposed again "
                  f"{s.proposed_again}, Approve→next proposal median {median}, model {s.model_s:.1f} s, "
                  f"waiting {s.waiting_s:.1f} s, wall {s.wall_s:.1f} s", soft_wrap=True)
    print_axes(console, results, MEASURES, f"{label}, per wording")


def _report_passes(console: Console, passes: tuple[_Pass, ...], by_pass: dict[_Pass, list[SupervisedResult]],
                   out: Path | None) -> None:
    """The ``--again`` passes: each one's summary, the first beside each later one, the file."""
    from evaluation.supervised import summarise

    for p in passes:
        _print_summary(console, p.label, by_pass[p])
    first = by_pass[passes[0]]
    for p in passes[1:]:
        console.print(f"[bold]first pass beside {p.label}[/bold]")
        _side_by_side(console, first, by_pass[p])
    if out is not None:
        out.write_text(json.dumps([{"pass": p.label, "feedback": p.feedback, "wording": p.wording,
                                    "summary": asdict(summarise(by_pass[p])), "tasks": [asdict(r) for r in by_pass[p]]}
                                   for p in passes], indent=2, ensure_ascii=False), encoding="utf-8")
        console.print(f"written: {out}")


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
    key: Callable[[SupervisedResult], tuple[str, str]] = lambda r: (r.task_id, r.language)  # noqa: E731
    by_id = {key(r): r for r in first}
    console.print("task | first: done, interventions, model calls | second: done, interventions, model calls")
    for r in second:
        f = by_id.get(key(r))
        if f is None:
            continue
        console.print(f"{r.task_id} | {'yes' if f.completed else 'no'}, {f.interventions}, {f.model_calls} | "
                      f"{'yes' if r.completed else 'no'}, {r.interventions}, {r.model_calls}", soft_wrap=True)
    pairs = [(by_id[key(r)], r) for r in second if key(r) in by_id]
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
