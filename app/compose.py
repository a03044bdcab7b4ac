"""One place that assembles a run from the user's settings (and command-line flags):
the LLM client, the planner bundle (planner, grounder, assessor, latent estimator; the
Prompt2Task pipeline included), the screen parser's configuration and the closer second
look at a screen that uses the parser's OCR engine, the run settings,
the accumulated knowledge and the macro grounder; and the run's guards: secrets typed by
reference (the device wrapper, values from the user's vault), requests to a model server
not on this machine redacted and consented to, and the bigger model one step can go to.

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
    from agent.device import Device
    from agent.knowledge.app_choice import AppChooser
    from agent.knowledge.base import Knowledge
    from agent.knowledge.types import TaskRecord
    from agent.llm.base import CancelToken, LLMClient
    from agent.macros.heal import Healer
    from agent.macros.reidentify import Grounder as MacroGrounder
    from agent.memory.memory import DecisionMemory
    from agent.planners.base import Planner
    from agent.privacy import Consent, Redactor
    from agent.run_step import LookAgain
    from agent.runner import Judge, RunGenerator, ScreenParserLike
    from agent.secrets import SecretSource
    from app.model_prefs import PrefsStore
    from app.run_record import RecordingSink
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


def macro_healer(settings: Settings, client: LLMClient | None = None) -> Healer:
    """What heals a replayed macro step the recording cannot find again: one grounding call
    to the configured model (``agent.macros.heal``); the healed step is always put to the user."""
    from agent.macros.heal import ModelHealer

    return ModelHealer(client if client is not None else make_client(settings))


# ---- parser and run settings --------------------------------------------------------------------


def parser_config(settings: Settings, *, mode: str | None = None) -> PipelineConfig:
    """The screen parser's configuration (``mode``: auto, tree, vision or fusion overrides)."""
    return settings.to_pipeline_config(mode=None if mode in (None, "") else mode)


def make_parser(settings: Settings, *, mode: str | None = None) -> ScreenParserLike:
    """A screen parser configured from the settings."""
    from vision.pipeline import ScreenParser

    return ScreenParser(parser_config(settings, mode=mode))


class _ParserOcr:
    """The OCR engine of a parser, reached only when something is read (building it loads
    models: never on the thread that assembles a run)."""

    def __init__(self, parser: Any) -> None:
        self._parser = parser

    def read(self, image: Any) -> Any:
        return self._parser.ocr_backend().read(image)


def second_look(parser: ScreenParserLike) -> LookAgain | None:
    """The closer second look of a run's observe phase (``agent.look_again``), reading with
    ``parser``'s own OCR engine; None for a parser that has none."""
    if not callable(getattr(parser, "ocr_backend", None)):
        return None
    from agent.look_again import SecondLook

    return SecondLook(_ParserOcr(parser))


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


def memory_for(store: object) -> DecisionMemory | None:
    """The decision memory kept in the project database (or in any ``DecisionStore``), or
    None without one."""
    from agent.memory.memory import DecisionMemory
    from agent.memory.store import DecisionStore

    if isinstance(store, DecisionStore):
        return DecisionMemory(store)
    from app.storage import Store

    if not isinstance(store, Store):
        return None
    from app.knowledge_store import SqliteKnowledgeStore

    return DecisionMemory(SqliteKnowledgeStore(store))


def with_memory(planner: Any, gen_of: Callable[[Any], RunGenerator], memory: DecisionMemory, goal: str,
                device: Any, client: LLMClient | None = None, cancel: CancelToken | None = None) -> RunGenerator:
    """The run ``gen_of(planner)`` builds, with the decision memory in front of ``planner``
    (``agent.memory``): remembered steps proposed with no model call, the user's decisions
    kept; with ``client`` the model is asked once whether the goal is a taught one in other words."""
    from agent.memory.planner import RememberingPlanner
    from agent.memory.run import MemorySession, remembering
    from agent.memory.same_task import SameTask

    session = MemorySession(memory, goal, device, SameTask(client) if client is not None else None, cancel)
    return remembering(gen_of(RememberingPlanner(planner, session)), session)


def on_finished(gen: RunGenerator, then: Callable[[Episode], None]) -> RunGenerator:
    """Pass ``gen``'s events and decisions through unchanged and call ``then`` with the
    finished episode (on the thread that drives the generator, never a GUI thread).  A
    failing ``then`` is logged: the episode is already stored."""
    from agent.relay import relay

    def hear(event: object) -> None:
        if isinstance(event, Finished):
            then(event.episode)

    return relay(gen, hear, what=f"after the episode, {getattr(then, '__name__', 'a step')}")


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


def recording(settings: Settings, device: Any, store: Any, *, video: bool | None = None, read: Any = None,
              on_stopped: Callable[..., None] | None = None) -> RecordingSink | None:
    """The record of a run on ``device`` as the settings (``record``) ask for it — what
    flashes on the screen, and a video unless ``video`` says otherwise — wrapped around
    ``store``; None when the device does not stream or nothing is to be recorded.  ``read``:
    the OCR to read flashes with, kept across runs (``app.run_record.recording_for``)."""
    from app.run_record import recording_for

    r = settings.record
    return recording_for(device, store, flashes=r.flashes, video=r.video if video is None else video,
                         max_video_mb=r.max_video_mb, read=read, on_stopped=on_stopped)


def warm_up() -> None:
    """Import the agent loop and the vision pipeline ahead of time (on a worker thread), so
    the first Start or parse does not pay for the imports."""
    import agent.planners
    import agent.runner  # noqa: F401
    import vision.pipeline  # noqa: F401


# ---- the run's guards: secrets, redaction, escalation ------------------------------------------


class _UserVault:
    """The user's vault as a ``SecretSource``, opened only when a secret is typed."""

    def __init__(self) -> None:
        self._vault: Any = None

    def value(self, name: str) -> str:
        if self._vault is None:
            from app.vault import open_vault

            self._vault = open_vault()
        return str(self._vault.value(name))


def agent_device(device: Any, secrets: SecretSource | None = None) -> Device:
    """``device`` as runs and replays drive it: ``{{secret:NAME}}`` typed from ``secrets``
    (default: the user's vault, opened on first use)."""
    from agent.secrets import with_secrets

    return with_secrets(device, secrets if secrets is not None else _UserVault())


def user_consent(gate: Any = None) -> Consent:
    """The user's consent: ``gate`` asks (None: nothing is asked, only remembered answers
    count), "for this task" answers are kept in the settings folder."""
    from agent.privacy import Consent, RememberedOnly
    from app.consents import FileConsents

    return Consent(gate if gate is not None else RememberedOnly(), FileConsents())


def server_of(client: object) -> str:
    """The address ``client`` talks to ("" when it does not say)."""
    return str(getattr(client, "base_url", "") or getattr(client, "host", "") or "")


def contact_names(device: object) -> list[str]:
    """The names the phone's contacts hold (empty when the phone cannot say)."""
    read = getattr(device, "contact_names", None)
    if read is None:
        return []
    try:
        return [str(n) for n in read()]
    except Exception as exc:  # a phone that cannot list contacts: names are then not redacted
        log.warning("could not read the phone's contact names: %s", exc)
        return []


def run_redactor(settings: Settings, device: object) -> Redactor:
    """One run's redactor (shared by its models, so a value keeps its placeholder).  The
    contact names are read from the phone on its first redaction: only a run that sends
    to a remote server reads them."""
    from agent.privacy import Redactor

    priv = settings.privacy
    return Redactor(contact_names=(lambda: contact_names(device)) if priv.redact_contact_names else (),
                    min_digits=priv.min_digits)


def guarded_client(client: LLMClient, settings: Settings, consent: Consent, redactor: Redactor,
                   goal: str = "") -> LLMClient:
    """``client`` as a run uses it: behind the redactor and the user's consent when its
    server is not on this machine (or the settings treat it as remote)."""
    from agent.privacy import RedactingClient, is_remote

    priv = settings.privacy
    server = server_of(client)
    if not priv.redact_remote or not (priv.treat_as_remote or (server and is_remote(server))):
        return client
    return RedactingClient(client, redactor, consent, server=server, goal=goal)


def bigger_client(settings: Settings, *, timeout_s: float | None = None) -> LLMClient | None:
    """The bigger model's client, when one is configured (its own server, or the run's)."""
    esc = settings.escalation
    if not esc.model.strip():
        return None
    base_url = esc.base_url.strip() or None
    backend = esc.backend if base_url else settings.llm.backend
    return make_client(settings, model=esc.model.strip(), backend=backend, base_url=base_url, timeout_s=timeout_s)


def app_chooser(client: LLMClient, model: str) -> AppChooser | None:
    """How a built-in model orders the home screen's apps for a goal that names none
    (``agent.knowledge.app_choice``); None for any other model, or a client that cannot
    read token likelihoods (a remote server behind the redactor included)."""
    from agent.knowledge.app_choice import AppChooser
    from app.builtin_model.catalog import MODELS

    turns = next((m.turns for m in MODELS if m.alias == model.strip().lower()), "")
    return AppChooser(client, turns) if AppChooser.usable(client, turns) else None


def escalating(planner: Planner, bigger: Planner, *, small_model: str, big_client: LLMClient,
               settings: Settings, consent: Consent) -> Planner:
    """``planner`` with ``bigger`` behind it for the steps the small model cannot do."""
    from agent.planners.escalate import BiggerModel, EscalatingPlanner, EscalationPolicy
    from agent.privacy import RedactingClient, is_remote

    esc = settings.escalation
    server = server_of(big_client)
    return EscalatingPlanner(
        planner, BiggerModel(bigger, big_client.model, server,
                             remote=isinstance(big_client, RedactingClient) or (bool(server) and is_remote(server))),
        small_model=small_model, consent=consent,
        policy=EscalationPolicy(below=esc.below_confidence, after_rejections=esc.after_rejections))


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
    second_look: bool = True  # read a pixel-parsed screen again, closer, when it shows none of the goal's words
    remember: bool = True  # use and feed the decision memory (a ``Store``, or ``memory=`` given)


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
              prefs: PrefsStore | None = None, judge: Judge | None = None, memory: DecisionMemory | None = None,
              consent: Consent | None = None, secrets: SecretSource | None = None, bigger: LLMClient | None = None,
              recorded: RecordingSink | None = None, **run_overrides: Any) -> Run:
    """Assemble ``run_episode`` for ``request``: client (unless given), planner bundle,
    run settings, and with a ``Store`` the knowledge (similar solved tasks become
    examples; a finished episode is learnt from, demonstrated steps of an unsuccessful
    one kept, and ``on_learnt`` told; the app maps read and grown are those of the
    language the phone shows, asked once here).  The decision memory (``memory``, else the
    one in ``store``) proposes the user's remembered steps and keeps their new decisions,
    unless ``request.remember`` is off.  ``judge`` is the task's oracle where there is one
    (a virtual-phone task): the phone then decides success.  ``recorded`` (``recording``)
    is the record of the run: it wraps ``store`` and the runner tells it each action.  Keywords in
    ``run_overrides`` are ``RunSettings`` fields.  ``ValueError`` for a bad planner,
    backend or autonomy.

    The guards: ``{{secret:NAME}}`` is typed from ``secrets`` (default: the user's vault);
    a model server not on this machine gets redacted requests after ``consent`` (default:
    only remembered answers, so nothing remote is sent unasked); with a bigger model
    (``bigger``, default: the one the settings name) a step the run's model cannot do goes
    to it, with ``consent``."""
    from agent.runner import run_episode

    consent = consent if consent is not None else user_consent()
    redactor = run_redactor(settings, device)
    client = client if client is not None else make_client(settings, model=request.model)
    client = guarded_client(client, settings, consent, redactor, request.goal)
    big = bigger if bigger is not None else bigger_client(settings)
    device = agent_device(device, secrets)
    autonomy = Autonomy(request.autonomy if request.autonomy is not None else settings.agent.autonomy)
    model = request.model or settings.llm.model
    planner = planner_for_model(request.planner or settings.agent.planner, model, prefs)
    bundle_constrained = (settings.agent.constrained_replies if request.constrained is None
                          else request.constrained)
    bundle = planner_bundle(planner, client, autonomy=autonomy,
                            samples=request.samples, fused=request.fused or slow_model(model, prefs),
                            llm_grounder=request.llm_grounder, constrained=bundle_constrained,
                            apps=app_names(device))
    rs = run_settings(settings, autonomy=autonomy, model=request.model, max_steps=request.max_steps,
                      allow_sensitive=request.allow_sensitive, **run_overrides)
    from agent.knowledge.map_language import phone_language

    # maps in the language the phone shows; one it cannot say: every map, not told apart (None)
    language = (phone_language(device) or None) if store is not None else None
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

    planner_core = bundle.planner
    if big is not None:
        big = guarded_client(big, settings, consent, redactor, request.goal)
        big_bundle = planner_bundle(planner, big, autonomy=autonomy, samples=request.samples,
                                    fused=request.fused or slow_model(big.model, prefs), llm_grounder=False,
                                    constrained=bundle_constrained, apps=app_names(device))
        planner_core = escalating(bundle.planner, big_bundle.planner, small_model=model, big_client=big,
                                  settings=settings, consent=consent)
    planner_used = with_maps(planner_core, maps_from.store if maps_from is not None else None, device,
                             evidence=settings.agent.screen_evidence, small_model=is_builtin(model),
                             apps=app_chooser(client, model))

    def episode(planner: Any) -> RunGenerator:
        return run_episode(request.goal, device, parser, planner, recorded if recorded is not None else store,
                           settings=rs, estimator=bundle.estimator, grounder=bundle.grounder, assessor=bundle.assessor,
                           cancel=cancel, judge=judge, record=recorded.capture if recorded is not None else None,
                           look_again=second_look(parser) if request.second_look else None)

    # The user's decisions come first (agent.memory): outside the maps and the screen's evidence.
    remembered = (memory if memory is not None else memory_for(store)) if request.remember else None
    gen = (with_memory(planner_used, episode, remembered, request.goal, device, client, cancel) if remembered is not None
           else episode(planner_used))
    if knowledge is not None:
        gen = learning_from(gen, knowledge, on_learnt)
    if big is not None and bigger is None:  # the bigger model's client is the run's own: closed with it
        gen = _closing(gen, big)
    return Run(gen, client, bundle, rs, knowledge, len(examples))


def _closing(gen: RunGenerator, client: object) -> RunGenerator:
    """``gen`` unchanged; ``client`` is closed when it ends, however it ends."""
    try:
        return (yield from gen)
    finally:
        close_client(client)


__all__ = [
    "PLANNERS", "PLANNER_NAMES", "PROMPT2TASK", "KnowsApps", "PlannerBundle", "PlannerChoice", "Run", "RunRequest",
    "app_names", "build_run", "check_planner", "close_client", "knowledge_for", "learn_demonstrated_steps",
    "learning_from", "list_models", "memory_for", "on_finished", "warm_up", "with_memory",
    "macro_grounder", "macro_healer", "make_client", "make_parser", "parser_config", "planner_bundle",
    "planner_for_model", "slow_model", "recording", "run_settings", "second_look", "agent_device", "bigger_client", "escalating",
    "guarded_client", "run_redactor", "server_of", "user_consent",
]
