"""``tapwise bench supervised``: the scripted supervisor (``evaluation.supervised``) on
virtual-phone tasks, with the run assembled exactly as the window assembles it
(``app.compose.build_run``, every step waiting for approval, a failed step offered to
the user).  ``--paired`` runs every task twice: with decision feedback and without it
(rejections not remembered, not told to the planner).  ``--scripted`` uses the scripted
listening model (no LLM server); otherwise the configured or named model.

``--wording`` (``0``, ``0,1,2``, ``all``) and ``--language`` (``en``, ``de``, ``en,de``)
choose how each task is asked (``evaluation.wordings``): a task without goals in the
language, or without that many wordings, is skipped with a message.  ``--out FILE`` is
rewritten after every task (each result with its wording, language and goal) and an
existing file resumes the run: the cells it holds are read back, not run again.

Prints one line per task and a summary per arm, per language and wording beside the tuned
wording 0 when there are several; writes nothing but the ``--out`` file.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.console import Console
from rich.markup import escape

from app.cli.bench import bench_app
from app.cli.bench_tables import print_axes

if TYPE_CHECKING:
    from app.storage import Store


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
    wording: str = typer.Option("0", "--wording", help="Which wording of each goal: 0 (the tuned one), a list such "
                                "as 0,1,2, or 'all'. A task without that wording is skipped with a message."),
    language: str = typer.Option("en", "--language", help="The phone's language and the goals': en, de, or en,de. "
                                 "A task without goals in the language is skipped with a message."),
) -> None:
    """Supervise the agent with a scripted user: interventions per task, rejected actions
    proposed again, model seconds, the user's waiting time, Approve -> next proposal."""
    from app.compose import RunRequest, build_run, make_parser, planner_for_model, slow_model
    from app.model_prefs import PrefsStore
    from app.settings import load_settings
    from evaluation.online_bench import select_tasks
    from evaluation.scripted_model import ScriptedLLMServer
    from evaluation.supervised import listening_model, summarise, supervise
    from evaluation.supervised_log import MEASURES, SupervisedLog
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
    arms = (True, False) if paired else (feedback,)
    what = {"model": "scripted" if scripted else (builtin or llm.model), "planner": planner or settings.agent.planner,
            "maps": str(maps) if maps is not None else "", "budget": budget}
    try:
        log = SupervisedLog.open(out, what) if out is not None else SupervisedLog(None, what)
    except ValueError as exc:
        console.print(f"[red]{escape(str(exc))}[/red]", soft_wrap=True)
        raise typer.Exit(2) from None
    todo = [(arm, c) for arm in arms for c in cells if not log.has(arm, c)]
    if len(todo) < len(arms) * len(cells):
        console.print(f"resuming from {escape(str(out))}: {len(arms) * len(cells) - len(todo)} of "
                      f"{len(arms) * len(cells)} cells already there", soft_wrap=True)
    server = ScriptedLLMServer(responder=listening_model, models=("scripted",)).__enter__() if scripted and todo \
        else None
    if server is not None:
        settings = settings.model_copy(update={"llm": llm.model_copy(update={
            "backend": "ollama", "ollama_host": server.url, "model": "scripted"})})
    own = None
    if builtin and todo:
        from app.builtin_model.catalog import ModelFileError, by_alias
        from app.builtin_model.server import BuiltinServer, ServerError, ServerOptions

        try:
            bundled = by_alias(builtin)
            own = BuiltinServer(bundled, ServerOptions(n_ctx=4096))
            console.print(f"starting the built-in model {bundled.alias} …")
            url = own.start()
        except (ModelFileError, ServerError) as exc:
            console.print(f"[red]{escape(str(exc))}[/red]", soft_wrap=True)
            raise typer.Exit(2) from exc
        settings = settings.model_copy(update={"llm": llm.model_copy(update={
            "backend": "openai", "openai_base_url": url, "model": bundled.alias})})
    parser = make_parser(settings, mode="tree")
    prefs = PrefsStore.default()
    chosen = planner_for_model(planner or settings.agent.planner, settings.llm.model, prefs)
    console.print(f"model {escape(settings.llm.model)}, planner {escape(chosen)}"
                  f"{' (fused latent estimate)' if slow_model(settings.llm.model, prefs) else ''}; {len(cells)} cells "
                  f"({len(ids)} tasks × wording {escape(wording)} × language {escape(language)})")
    try:
        for arm, cell in todo:
            task = by_id[cell.task_id]
            phone = VirtualPhone(seed=0, lang=cell.language)
            task.setup(phone)

            def make_run(goal, device, judge, task=task, arm=arm):  # type: ignore[no-untyped-def]
                return build_run(
                    RunRequest(goal=goal, planner=planner or None, autonomy="approve", learn=False,
                               constrained=False if scripted else None,
                               max_steps=max(1, round(task.step_budget * budget))),
                    settings, device=device, parser=parser, judge=judge, ask_on_error=True, prefs=prefs,
                    store=map_store,
                    confirm_done=True, feedback=arm, max_wait_s=0.2).events

            t0 = time.perf_counter()
            try:
                r = supervise(task, phone, phone, make_run, wording=cell.wording)
            finally:
                phone.close()
            log.add(arm, r)
            console.print(f"{'with' if arm else 'without'} feedback  {cell.task_id:32} {cell.language} w{cell.wording}  "
                          f"{'done' if r.completed else 'NOT done':8} interventions {r.interventions} "
                          f"(rej {r.rejections}, dem {r.demonstrations}, edit {r.edits})  again "
                          f"{r.proposed_again}  model {r.model_s:.1f} s  wall {time.perf_counter() - t0:.1f} s  "
                          f"approve->next {_seconds(r.approve_to_next_s)}",
                          soft_wrap=True)
    finally:
        if server is not None:
            server.__exit__(None, None, None)
        if own is not None:
            own.stop()
    for arm in arms:
        results = log.results(arm, cells)
        s = summarise(results)
        median = "—" if s.approve_to_next_median_s is None else f"{s.approve_to_next_median_s:.1f} s"
        console.print(f"[bold]{'with' if arm else 'without'} feedback:[/bold] {s.completed}/{s.tasks} completed, "
                      f"mean interventions {s.mean_interventions:.2f}, rejected proposed again "
                      f"{s.proposed_again}, Approve→next proposal median {median}, model {s.model_s:.1f} s, "
                      f"waiting {s.waiting_s:.1f} s", soft_wrap=True)
        print_axes(console, results, MEASURES, f"{'with' if arm else 'without'} feedback, per wording")
    if out is not None:
        console.print(f"written: {out}")


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
