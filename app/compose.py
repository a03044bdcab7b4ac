"""One place that assembles a run from the user's settings (and command-line flags):
the LLM client, the planner bundle (planner, grounder, assessor, latent estimator; the
Prompt2Task pipeline included), the screen parser's configuration, the run settings,
the accumulated knowledge and the macro grounder.

The window (``app.gui``), ``tapwise run``, the online benchmark, the self-test and the
bench scripts all build their runs here, so a run behaves the same wherever it starts.
``build_run`` is the whole recipe; the smaller functions are its parts for callers that
need only one (listing models, a parser, a macro replay).

Qt-free.  Building does no network I/O (clients connect lazily) and downloads nothing;
heavy imports happen inside the functions so importing this module stays cheap.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from agent.device import KnowsApps, app_names
from agent.events import Finished, RunSettings, StepSink
from agent.planners.registry import (
    PLANNER_NAMES,
    PLANNERS,
    PROMPT2TASK,
    PlannerBundle,
    PlannerChoice,
    check_planner,
    planner_bundle,
)
from agent.types import Autonomy, Episode

if TYPE_CHECKING:
    from agent.knowledge.base import Knowledge
    from agent.knowledge.types import TaskRecord
    from agent.llm.base import CancelToken, LLMClient
    from agent.macros.reidentify import Grounder as MacroGrounder
    from agent.runner import Judge, RunGenerator, ScreenParserLike
    from app.model_prefs import PrefsStore
    from app.settings import Settings
    from vision.config import PipelineConfig

log = logging.getLogger(__name__)

# ---- the LLM client ------------------------------------------------------------------------


def make_client(settings: Settings, *, model: str | None = None, backend: str | None = None,
                base_url: str | None = None, timeout_s: float | None = None,
                attempts: int | None = None) -> LLMClient:
    """The LLM client the settings describe; each keyword (a command-line flag) overrides
    its setting.  ``ValueError`` for an unknown backend."""
    from agent.llm import RetryPolicy
    from agent.llm import make_client as client_for

    llm = settings.llm
    backend = backend or llm.backend
    if base_url is None:
        base_url = llm.ollama_host if backend == "ollama" else llm.openai_base_url
    policy = RetryPolicy(attempts=attempts or llm.retries + 1, timeout_s=timeout_s or llm.timeout_s)
    client = client_for(backend, llm.model if model is None else model, base_url, policy=policy)
    if llm.api_key is not None:
        from agent.llm.openai_client import OpenAIClient

        if isinstance(client, OpenAIClient):
            client.api_key = llm.api_key.get_secret_value()
    return client


def list_models(settings: Settings) -> list[str]:
    """Model names on the configured server (``LLMError`` with a hint when unreachable)."""
    client = make_client(settings, model="")
    try:
        return client.list_models()
    finally:
        close_client(client)


def close_client(client: object) -> None:
    """Close a client's connections if it holds any (never raises)."""
    close = getattr(client, "close", None)
    if close is not None:
        try:
            close()
        except Exception as exc:  # closing must not hide a run's result
            log.warning("closing the LLM client failed: %s", exc)


# ---- planners --------------------------------------------------------------------------------


def macro_grounder(client: LLMClient, goal: str = "") -> MacroGrounder:
    """The last rung of a macro replay's re-identification: the LLM grounder."""
    from agent.grounding.llm_grounder import LLMGrounder
    from agent.macros.reidentify import grounder_from_agent

    return grounder_from_agent(LLMGrounder(client), goal)


# ---- parser and run settings --------------------------------------------------------------------


def parser_config(settings: Settings, *, mode: str | None = None) -> PipelineConfig:
    """The screen parser's configuration (``mode``: auto, tree, vision or fusion overrides)."""
    return settings.to_pipeline_config(mode=None if mode in (None, "") else mode)


def make_parser(settings: Settings, *, mode: str | None = None) -> ScreenParserLike:
    """A screen parser configured from the settings."""
    from vision.pipeline import ScreenParser

    return ScreenParser(parser_config(settings, mode=mode))


def run_settings(settings: Settings, *, autonomy: Autonomy | str | None = None, model: str | None = None,
                 max_steps: int | None = None, allow_sensitive: bool | None = None,
                 **overrides: Any) -> RunSettings:
    """The runner's settings from the user's; each keyword overrides (``overrides`` are
    any other ``RunSettings`` fields, e.g. ``max_wait_s`` or ``ask_on_error``)."""
    agent = settings.agent
    return RunSettings(
        mode=Autonomy(autonomy if autonomy is not None else agent.autonomy),
        max_steps=max_steps if max_steps is not None else agent.step_budget,
        allow_sensitive=(not agent.sensitive_needs_approval) if allow_sensitive is None else allow_sensitive,
        model=settings.llm.model if model is None else model,
        **overrides,
    )


# ---- knowledge -----------------------------------------------------------------------------------


def knowledge_for(store: object, language: str | None = None) -> Knowledge | None:
    """The accumulated knowledge kept in the project database, or None without one.
    ``language``: the phone's UI language; the app maps read and grown are that
    language's (``agent.knowledge.map_language``); None: every stored map as it is kept."""
    from app.storage import Store

    if not isinstance(store, Store):
        return None
    from agent.knowledge.base import Knowledge
    from agent.knowledge.map_language import LanguageMaps
    from app.knowledge_store import SqliteKnowledgeStore

    try:
        kstore = SqliteKnowledgeStore(store)
        return Knowledge(kstore if language is None else LanguageMaps(kstore, language))
    except Exception:  # knowledge is an extra: a run never fails for it
        log.warning("knowledge store unavailable", exc_info=True)
        return None


def on_finished(gen: RunGenerator, then: Callable[[Episode], None]) -> RunGenerator:
    """Pass ``gen``'s events and decisions through unchanged and call ``then`` with the
    finished episode (on the thread that drives the generator, never a GUI thread).  A
    failing ``then`` is logged: the episode is already stored."""
    reply: Any = None
    try:
        while True:
            try:
                event = gen.send(reply)
            except StopIteration as stop:
                return stop.value  # type: ignore[no-any-return]
            if isinstance(event, Finished):
                try:
                    then(event.episode)
                except Exception:  # best effort
                    log.warning("after the episode: %s failed", getattr(then, "__name__", "a step"), exc_info=True)
            reply = yield event
    finally:
        gen.close()


def learning_from(gen: RunGenerator, knowledge: Knowledge,
                  on_learnt: Callable[[TaskRecord | None], None] | None = None) -> RunGenerator:
    """``gen`` unchanged; when the episode finishes, archive it in the task repository
    and map its pages.  ``on_learnt`` hears the archived record (None when the episode
    was not archived, e.g. it failed)."""

    def learn(episode: Episode) -> None:
        record = knowledge.learn_from_episode(episode)
        learn_demonstrated_steps(knowledge, episode)
        if on_learnt is not None:
            on_learnt(record)

    return on_finished(gen, learn)


def learn_demonstrated_steps(knowledge: Knowledge, episode: Episode) -> None:
    """Keep an unsuccessful run the user showed steps in as a demonstration for its goal
    (a solved run is archived by ``learn_from_episode``)."""
    from agent.types import DecisionKind, EpisodeStatus

    shown = any(s.decision is not None and s.decision.kind is DecisionKind.DEMONSTRATE for s in episode.steps)
    if not shown or episode.status is EpisodeStatus.SUCCEEDED:
        return
    try:
        knowledge.learn_from_demonstration(episode, episode.goal)
    except Exception:  # e.g. nothing reached the phone: nothing to learn
        log.info("the demonstration could not be kept", exc_info=True)


def warm_up() -> None:
    """Import the agent loop and the vision pipeline ahead of time (on a worker thread), so
    the first Start or parse does not pay for the imports."""
    import agent.planners
    import agent.runner  # noqa: F401
    import vision.pipeline  # noqa: F401


# ---- the whole recipe ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RunRequest:
    """What a caller asks for; None means "as the settings say"."""

    goal: str
    planner: str | None = None
    autonomy: Autonomy | str | None = None
    model: str | None = None
    max_steps: int | None = None
    allow_sensitive: bool | None = None
    samples: int = 8
    fused: bool = False
    llm_grounder: bool = True
    learn: bool = True  # use and feed the accumulated knowledge (needs a ``Store``)
    constrained: bool | None = None  # structured replies; None: as the settings say


@dataclass(frozen=True, slots=True)
class Run:
    """An assembled run: drive ``events`` (``agent.runner.drive`` or ``send``), then close
    ``client`` (``close_client``)."""

    events: RunGenerator
    client: LLMClient
    bundle: PlannerBundle
    settings: RunSettings
    knowledge: Knowledge | None
    examples: int  # solved tasks given to the planner as examples


def planner_for_model(planner: str, model: str, prefs: PrefsStore | None = None) -> str:
    """``planner``, unless the user chose a model adapter for ``model`` in the model
    manager (``prefs``, loaded by the caller with its settings): then that adapter's
    planner; ``auto`` becomes the planner that fits the model's measured speed."""
    if prefs is not None and model:
        return prefs.planner_for(model, planner)
    if planner == "auto":
        from agent.planners.registry import auto_planner
        from app.model_prefs import BUILTIN_SECONDS_PER_CALL, is_builtin

        return auto_planner(BUILTIN_SECONDS_PER_CALL if is_builtin(model) else None)
    return planner


def slow_model(model: str, prefs: PrefsStore | None = None) -> bool:
    """The model's calls are too slow for five latent-state calls per step: a planner with
    latent state then estimates it in one fused call."""
    from agent.planners.registry import STEP_BUDGET_S
    from app.model_prefs import BUILTIN_SECONDS_PER_CALL, is_builtin

    speed = prefs.speed(model) if prefs is not None else (BUILTIN_SECONDS_PER_CALL if is_builtin(model) else None)
    return speed is not None and speed * 3 > STEP_BUDGET_S


def build_run(request: RunRequest, settings: Settings, *, device: Any, parser: ScreenParserLike,
              store: StepSink | None = None, cancel: CancelToken | None = None,
              client: LLMClient | None = None, on_learnt: Callable[[TaskRecord | None], None] | None = None,
              prefs: PrefsStore | None = None, judge: Judge | None = None, **run_overrides: Any) -> Run:
    """Assemble ``run_episode`` for ``request``: client (unless given), planner bundle,
    run settings, and with a ``Store`` the knowledge (similar solved tasks become
    examples; a finished episode is learnt from, demonstrated steps of an unsuccessful
    one kept, and ``on_learnt`` told; the app maps read and grown are those of the
    language the phone shows, asked once here).  ``judge`` is the task's oracle where there is one
    (a virtual-phone task): the phone then decides success.  Keywords in
    ``run_overrides`` are ``RunSettings`` fields.  ``ValueError`` for a bad planner,
    backend or autonomy."""
    from agent.runner import run_episode

    client = client if client is not None else make_client(settings, model=request.model)
    autonomy = Autonomy(request.autonomy if request.autonomy is not None else settings.agent.autonomy)
    model = request.model or settings.llm.model
    planner = planner_for_model(request.planner or settings.agent.planner, model, prefs)
    bundle = planner_bundle(planner, client, autonomy=autonomy,
                            samples=request.samples, fused=request.fused or slow_model(model, prefs),
                            llm_grounder=request.llm_grounder,
                            constrained=(settings.agent.constrained_replies if request.constrained is None
                                         else request.constrained),
                            apps=app_names(device))
    rs = run_settings(settings, autonomy=autonomy, model=request.model, max_steps=request.max_steps,
                      allow_sensitive=request.allow_sensitive, **run_overrides)
    from agent.knowledge.map_language import phone_language

    language = phone_language(device) if store is not None else ""  # maps in the language the phone shows
    knowledge = knowledge_for(store, language) if request.learn else None
    examples: tuple[str, ...] = ()
    if knowledge is not None:
        examples = knowledge.tasks.example_lines(request.goal)
        if examples:
            rs = replace(rs, examples=examples)
    # The app maps, when any app was explored, and the screen's own evidence (agent.knowledge.guide).
    # Maps are read even when the run is not to be learnt from: they are what the user explored.
    from agent.knowledge.guided import with_maps

    maps_from = knowledge if knowledge is not None else knowledge_for(store, language)
    from app.model_prefs import is_builtin

    planner_used = with_maps(bundle.planner, maps_from.store if maps_from is not None else None, device,
                             evidence=settings.agent.screen_evidence, small_model=is_builtin(model))
    gen = run_episode(request.goal, device, parser, planner_used, store, settings=rs,
                      estimator=bundle.estimator, grounder=bundle.grounder, assessor=bundle.assessor, cancel=cancel,
                      judge=judge)
    if knowledge is not None:
        gen = learning_from(gen, knowledge, on_learnt)
    return Run(gen, client, bundle, rs, knowledge, len(examples))


__all__ = [
    "PLANNERS", "PLANNER_NAMES", "PROMPT2TASK", "KnowsApps", "PlannerBundle", "PlannerChoice", "Run", "RunRequest",
    "app_names", "build_run", "check_planner", "close_client", "knowledge_for", "learn_demonstrated_steps",
    "learning_from", "list_models", "on_finished", "warm_up",
    "macro_grounder", "make_client", "make_parser", "parser_config", "planner_bundle", "planner_for_model", "slow_model",
    "run_settings",
]
