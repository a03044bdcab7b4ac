"""The online benchmark's cells: glue between the measures (``evaluation``) and the virtual phone (``phone.virtual``).

``run_cell(job)`` plays one benchmark cell headless: a fresh ``VirtualPhone`` set up for
the task in the job's language, the goal in the job's wording (``Task.wording``), the agent loop (``agent.runner.run_episode``) driven with every proposal
approved, and the phone's oracle consulted after every executed action (success,
checkpoints) and before every proposal (the truth the latent-state estimates are judged
against).  Grounding noise is applied here, by ``evaluation.truth_device.TruthRecordingDevice``, so the true
effect of every input is known; pop-ups and missing labels use the phone's own noise
knobs.  This module is Qt-free and is imported by worker processes.
"""

from __future__ import annotations

import functools
import logging
import re
import time
from typing import Any

from evaluation.truth_device import Performed, TruthRecordingDevice, combine

log = logging.getLogger(__name__)

#: Noise profiles selectable with ``--noise``.  ``grounding`` is applied by the
#: benchmark's device wrapper; the others are the phone's ``NoiseConfig`` knobs.
NOISE_PROFILES: dict[str, dict[str, Any]] = {
    "none": {},
    "grounding": {"tap_sd_px": 45.0, "drop": 0.1},
    "popups": {"phone": {"ads": 0.15}},
    "labels": {"phone": {"missing_desc": 0.7, "invisible_nodes": 4}},
    "all": {"tap_sd_px": 45.0, "drop": 0.1, "phone": {"ads": 0.15, "missing_desc": 0.7, "invisible_nodes": 4}},
}


def check_noises(names: list[str]) -> None:
    bad = [n for n in names if n not in NOISE_PROFILES]
    if bad:
        raise ValueError(f"unknown noise profile(s) {', '.join(bad)}; choose from {', '.join(NOISE_PROFILES)}")
    if not names:
        raise ValueError("name at least one noise profile (e.g. none)")


# ---- tasks ------------------------------------------------------------------------------


def _task_files(entry: str) -> list[Any]:
    from pathlib import Path

    p = Path(entry)
    if p.is_dir():
        return sorted(list(p.glob("*.yaml")) + list(p.glob("*.yml")) + list(p.glob("*.json")))
    return [p]


@functools.cache
def _load_source(source: str) -> tuple[tuple[Any, ...], tuple[tuple[str, str], ...]]:
    """Tasks named by ``source`` and the problems met loading them.

    ``source`` is a comma-separated list of ``all`` (the built-in tasks), paths (task
    files or folders), task ids and named sets (``yardstick``: see ``phone.virtual.task_sets``).
    A file that fails to load is reported and skipped;
    the other files still count.  Cached per process (workers reload by source).
    """
    from pathlib import Path

    from phone.virtual.task_sets import expand_task_set
    from phone.virtual.tasks import BUILTIN_DIR, TaskError, load_task_file

    entries = [e.strip() for e in source.split(",") if e.strip()] or ["all"]
    files: list[Path] = []
    ids: list[str] = []
    for e in entries:
        named = expand_task_set(e)
        if e == "all":
            files += _task_files(str(BUILTIN_DIR))
        elif named is not None:
            ids += [i for i in named if i not in ids]
        elif Path(e).exists():
            files += _task_files(e)
        elif e.endswith((".yaml", ".yml", ".json")) or "/" in e:
            raise ValueError(f"{e}: no such task file or folder")
        else:
            ids.append(e)
    if ids and not any(x == "all" for x in entries):
        files = _task_files(str(BUILTIN_DIR)) + files
    tasks: dict[str, Any] = {}
    problems: list[tuple[str, str]] = []
    for f in dict.fromkeys(files):
        try:
            loaded = load_task_file(f)
        except TaskError as exc:
            problems.append((str(f), str(exc)))
            continue
        for t in loaded:
            if t.id in tasks:
                problems.append((str(f), f"task id {t.id!r} is already defined in {tasks[t.id].source}; skipped"))
                continue
            tasks[t.id] = t
    if ids:
        missing = [i for i in ids if i not in tasks]
        if missing:
            raise ValueError(f"unknown task id(s) {', '.join(missing)}; known: {', '.join(sorted(tasks)) or 'none'}")
        chosen = [tasks[i] for i in ids]
        if any(x == "all" for x in entries) or any(Path(x).exists() for x in entries):
            chosen += [t for t in tasks.values() if t.id not in ids]
        return tuple(chosen), tuple(problems)
    return tuple(tasks.values()), tuple(problems)


def select_tasks(source: str) -> tuple[list[str], list[tuple[str, str]]]:
    """Task ids to run and (file, message) problems for the files that failed to load."""
    tasks, problems = _load_source(source)
    return [t.id for t in tasks], list(problems)


def find_task(source: str, task_id: str) -> Any:
    tasks, _ = _load_source(source)
    for t in tasks:
        if t.id == task_id:
            return t
    raise ValueError(f"task {task_id!r} is not in {source!r}")


def describe_condition(cond: dict[str, Any]) -> str:
    """Words for a checkpoint condition, for judging progression estimates."""
    if "all" in cond or "any" in cond:
        return " and ".join(describe_condition(c) for c in cond.get("all", cond.get("any", [])))
    if "not" in cond:
        return "not " + describe_condition(cond["not"])
    if "visited" in cond:
        page = str(cond["visited"]).split("/")[-1]
        return page.replace("_", " ").replace("-", " ")
    path = str(cond.get("path", "")).split(".")
    words = [p for p in path[1:] if not p.lstrip("-").isdigit() and p not in ("ui", "foreground")]
    for op in ("eq", "ieq", "contains", "icontains"):
        value = cond.get(op)
        if isinstance(value, str) and value:
            # a package names its app by its last part: com.android.settings -> settings
            words.append(value.rsplit(".", 1)[-1] if re.fullmatch(r"[a-z]+(\.[a-z0-9_]+)+", value) else value)
    return " ".join(words or path).replace("_", " ")


def gold_trajectories(source: str, task_ids: list[str], language: str = "en") -> tuple[list[Any], list[tuple[str, str]]]:
    """Replay each task's reference solution on a fresh phone (in ``language``) and record it
    in AITW form: the action with the screen's element boxes before it, plus a final ``complete``."""
    from agent.types import ActionType
    from evaluation.aitw import AitwAction, AitwStep, Trajectory, boxes_from_rects
    from phone.virtual.phone import VirtualPhone
    from phone.virtual.tasks import StepError, perform

    out: list[Any] = []
    failures: list[tuple[str, str]] = []
    for tid in task_ids:
        task = find_task(source, tid)
        phone = VirtualPhone(seed=0)
        task.setup(phone, language)
        steps: list[Any] = []
        at = 0
        try:
            for step in task.solution:
                at += 1
                if step.kind == "key":
                    step.execute(phone)
                    continue
                size = phone.screen_size()
                truth = phone.ground_truth()
                boxes = boxes_from_rects([e.rect for e in truth.elements if e.clickable or e.text], size)
                action = step.to_action(phone)
                steps.append(AitwStep(AitwAction.from_action(action, size), boxes, action.describe()))
                if not action.is_terminal:
                    perform(phone, action)
        except (StepError, ValueError) as exc:
            failures.append((task.source or tid, f"task {tid}: reference step {at}: {exc}"))
            continue
        finally:
            phone.close()
        if not steps or steps[-1].action.category.value not in ("complete", "impossible"):
            steps.append(AitwStep(AitwAction.from_action(_terminal(ActionType.COMPLETE), size)))
        out.append(Trajectory(tid, task.goal, tuple(steps), f"task:{tid}"))
    return out, failures


def _terminal(kind: Any) -> Any:
    from agent.types import Action

    return Action(kind)


# ---- one benchmark cell ------------------------------------------------------------------

def check_planners(names: list[str]) -> None:
    """``ValueError`` naming the choices (``agent.planners.registry.PLANNERS``) unless every name is a planner."""
    from agent.planners.registry import PLANNER_NAMES, check_planner

    if not names:
        raise ValueError(f"name at least one planner ({', '.join(PLANNER_NAMES)})")
    bad = []
    for n in names:
        try:
            check_planner(n)
        except ValueError:
            bad.append(n)
    if bad:
        raise ValueError(f"unknown planner(s) {', '.join(bad)}; choose from {', '.join(PLANNER_NAMES)}")


def _aitw_match(source: str, task_id: str, episode: Any, size: Any, language: str = "en") -> float | None:
    """The episode's executed actions against the task's reference solution (AITW rule)."""
    from evaluation.aitw import score
    from evaluation.loaders import LoadError, trajectory_from_episode

    try:
        gold, failures = _gold_cached(source, task_id, language)
        if gold is None:
            return None
        pred = trajectory_from_episode(episode, size)
    except (LoadError, ValueError) as exc:
        log.info("no AITW score for %s: %s", task_id, exc)
        return None
    return score([gold], [pred]).step_accuracy


@functools.cache
def _gold_cached(source: str, task_id: str, language: str) -> tuple[Any, tuple[tuple[str, str], ...]]:
    gold, failures = gold_trajectories(source, [task_id], language)
    return (gold[0] if gold else None), tuple(failures)


def _estimate(lat: Any) -> dict[str, Any] | None:
    if lat is None:
        return None
    return {"performed_action": lat.performed_action, "screen_summary": lat.screen_summary,
            "progression": lat.progression, "mistakes": lat.mistakes, "completion": lat.completion}


def _stage(purpose: str) -> str:
    return (purpose or "llm").split(".")[0].split(":")[0] or "llm"


class _CellRecorder:
    """Everything one cell records while its run's events go by: LLM calls and tokens,
    per-stage time, a truth record per step (the oracle's view next to the agent's
    estimate), and what the last executed action really did."""

    def __init__(self, task: Any, phone: Any, device: Any) -> None:
        self.task, self.phone, self.device = task, phone, device
        self.descriptions = [describe_condition(c) for c in task.checkpoints]
        self.reached_ever: set[int] = set(self.reached_now())
        self.actions = 0
        self.first_success: int | None = None
        self.llm_calls = self.prompt_tokens = self.completion_tokens = self.unparseable = 0
        self.stage_ms: dict[str, float] = {}
        self.records: list[dict[str, Any]] = []
        self.last_cmd = ""
        self.last_perf: Performed | None = None
        self.log_mark = 0
        self.final_action: Any = None
        self.finished: Any = None

    def reached_now(self) -> list[int]:
        return [k for k, ok in enumerate(self.task.checkpoint_flags(self.phone)) if ok]

    def _add_ms(self, stage: str, ms: float) -> None:
        self.stage_ms[stage] = self.stage_ms.get(stage, 0.0) + ms

    def count(self, calls: tuple[Any, ...]) -> None:
        for c in calls:
            self.llm_calls += 1
            # a re-ask means the reply before it was unreadable; a client error with text too
            self.unparseable += int(c.purpose.endswith(".reask") or bool(c.error and c.reply.strip()))
            self.prompt_tokens += c.prompt_tokens or 0
            self.completion_tokens += c.completion_tokens or 0
            self._add_ms(_stage(c.purpose), float(c.latency_ms or 0.0))

    def truth_record(self, step: int, lat: Any, proposed: str = "") -> dict[str, Any]:
        now, perf = self.reached_now(), self.last_perf
        return {
            "index": step, "commanded": self.last_cmd,
            "performed": None if perf is None else perf.performed,
            "performed_kind": "" if perf is None else perf.kind,
            "performed_target": "" if perf is None else perf.target,
            "performed_text": "" if perf is None else perf.text,
            "performed_matches_commanded": None if perf is None else perf.matches,
            "estimate": _estimate(lat), "proposed": proposed,
            "truth_complete": bool(self.task.is_success(self.phone)),
            "reached": [self.descriptions[k] for k in now],
            "reached_ever": [self.descriptions[k] for k in sorted(self.reached_ever)],
            "checkpoints": self.descriptions,
        }

    def _current(self, step: int) -> dict[str, Any] | None:
        return self.records[-1] if self.records and self.records[-1]["index"] == step else None

    def on_proposed(self, ev: Any) -> None:
        self.count(ev.proposal.llm_calls)
        rec = self._current(ev.step)
        if rec is None:
            rec = self.truth_record(ev.step, ev.proposal.latent, ev.proposal.action.describe())
            self.records.append(rec)
        else:
            rec["estimate"] = _estimate(ev.proposal.latent)
            rec["proposed"] = ev.proposal.action.describe()
        rec["replies"] = [e for e in ev.proposal.evidence if e.startswith("reply:")]

    def on_error(self, ev: Any) -> None:
        self.count(ev.calls)
        rec = self._current(ev.step)
        if rec is None:
            self.records.append({"index": ev.step, "estimate": None, "error": ev.message})
        else:
            rec["error"] = ev.message
        self.unparseable += int("unreadable reply" in ev.message)

    def on_executed(self, ev: Any) -> None:
        if ev.action.is_terminal:
            self.final_action = ev.action
            return
        self.actions += 1
        self.last_cmd = ev.action.describe()
        self.last_perf = combine(self.device.log[self.log_mark:])
        self.log_mark = len(self.device.log)
        self.reached_ever.update(self.reached_now())
        if self.first_success is None and not self.task.impossible and self.task.is_success(self.phone):
            self.first_success = self.actions

    def on_event(self, ev: Any) -> None:
        from agent.events import ErrorEvent, Estimated, Executed, Finished, Parsed, Proposed

        if isinstance(ev, Parsed):
            self._add_ms("parse", sum(t.ms for t in ev.parse.timings))
        elif isinstance(ev, Estimated):
            # recorded as soon as it is estimated, so steps whose planning fails still count
            self.records.append(self.truth_record(ev.step, ev.latent))
        elif isinstance(ev, Proposed):
            self.on_proposed(ev)
        elif isinstance(ev, ErrorEvent):
            self.on_error(ev)
        elif isinstance(ev, Finished):
            self.finished = ev
        if isinstance(ev, Executed | ErrorEvent) and ev.record is not None:
            for stage, ms in ev.record.timings_ms:  # the device's share of each step
                if stage in ("frame", "hierarchy", "execute"):
                    self._add_ms(stage, ms)
        if isinstance(ev, Executed):
            self.on_executed(ev)


def _stopped_by(final_action: Any, status: Any, note: str) -> str:
    """Why a cell's run stopped, in the metrics' words."""
    from agent.types import ActionType, EpisodeStatus
    from evaluation.metrics import (
        STOP_AGENT_ERROR,
        STOP_COMPLETE,
        STOP_IMPOSSIBLE,
        STOP_MAX_STEPS,
        STOP_REPEAT,
    )

    if final_action is not None:
        return STOP_COMPLETE if final_action.type is ActionType.COMPLETE else STOP_IMPOSSIBLE
    if "budget" in note:
        return STOP_MAX_STEPS
    if "repeated" in note:
        return STOP_REPEAT
    if status in (EpisodeStatus.ERROR, EpisodeStatus.ABORTED):
        return STOP_AGENT_ERROR
    return STOP_MAX_STEPS


def _cell_phone(job: Any, task: Any, arena: Any) -> tuple[Any, Any]:
    """The phone the oracle reads and the device the agent drives, set up for the task."""
    from phone.virtual.noise import NoiseConfig
    from phone.virtual.phone import VirtualPhone

    profile = NOISE_PROFILES[job.noise]
    if arena is not None:
        task.setup(arena.phone, job.language)
        return arena.phone, arena.device
    phone = VirtualPhone(seed=job.seed, noise=NoiseConfig(**profile.get("phone", {})))
    task.setup(phone, job.language)
    return phone, TruthRecordingDevice(phone, seed=job.seed, tap_sd_px=profile.get("tap_sd_px", 0.0),
                                       drop=profile.get("drop", 0.0))


def _cell_run(job: Any, task: Any, phone: Any, device: Any) -> Any:
    """The ``run_episode`` generator for a cell: every proposal approved, the benchmark's
    own parser (reproducible whatever the user's vision settings say)."""
    from agent.device import app_names
    from agent.events import RunSettings
    from agent.llm import RetryPolicy, make_client
    from agent.planners.registry import planner_bundle
    from agent.runner import run_episode
    from agent.types import Autonomy
    from vision.config import PipelineConfig
    from vision.pipeline import ScreenParser

    s = job.settings
    model = str(s.get("model", ""))
    client = make_client(str(s.get("backend", "ollama")), model, str(s.get("base_url", "")) or None,
                         policy=RetryPolicy(attempts=int(s.get("attempts", 2)), timeout_s=float(s.get("timeout_s", 120.0))))
    bundle = planner_bundle(job.planner, client, autonomy=Autonomy.AUTO, samples=int(s.get("samples", 8)),
                            temperature=float(s.get("sample_temperature", 0.5)), fused=s.get("estimator") == "fused",
                            llm_grounder=False, constrained=bool(s.get("constrained", False)), apps=app_names(phone))
    mode = str(s.get("parse_mode", "tree"))
    tree = mode == "tree"
    parser = ScreenParser(PipelineConfig(mode=mode, ocr="none" if tree else "rapidocr",  # type: ignore[arg-type]
                                         detector="none" if tree else "auto", icons="none" if tree else "auto"))
    settings = RunSettings(mode=Autonomy.AUTO, model=model, allow_sensitive=True, max_wait_s=0.2,
                           max_steps=int(s.get("max_steps") or task.step_budget))
    goal = task.wording(job.wording, job.language)
    return goal, run_episode(goal, device, parser, bundle.planner, None, settings=settings,
                             estimator=bundle.estimator, grounder=bundle.grounder, assessor=bundle.assessor)


def run_cell(job: Any, arena: Any = None) -> Any:
    """Play one cell (``evaluation.online.Job``) on a fresh virtual phone; see the module docstring.

    ``arena`` (``evaluation.farm.cells.ServedArena``) plays it on a served virtual phone over adb
    instead: its ``phone`` gives the oracle the phone's state, its ``device`` the inputs
    (no grounding noise and no per-input truth there: that stays in the phone's process)."""
    from agent.runner import drive
    from agent.types import EpisodeStatus
    from evaluation.metrics import EpisodeResult

    s = job.settings
    task = find_task(s.get("tasks_source", "all"), job.task_id)
    phone, device = _cell_phone(job, task, arena)
    try:
        rec = _CellRecorder(task, phone, device)
        t0 = time.perf_counter()
        goal, events = _cell_run(job, task, phone, device)
        for ev in drive(events):
            rec.on_event(ev)
        success = bool(task.is_success(phone, rec.final_action))
        if success and task.impossible:
            rec.first_success = rec.actions
        fin = rec.finished
        status = fin.status if fin else EpisodeStatus.ERROR
        note = fin.note if fin else "the run ended without a Finished event"
        aitw_match = None
        if fin is not None and s.get("aitw", True):
            aitw_match = _aitw_match(s.get("tasks_source", "all"), job.task_id, fin.episode, phone.screen_size(),
                                     job.language)
        return EpisodeResult(
            planner=job.planner, task_id=job.task_id, seed=job.seed, noise=job.noise, model=str(s.get("model", "")),
            success=success, checkpoints_total=len(task.checkpoints), checkpoints_reached=len(rec.reached_ever),
            stopped_by=_stopped_by(rec.final_action, status, note), actions=rec.actions,
            first_success_action=rec.first_success, steps=len(fin.episode.steps) if fin else len(rec.records),
            llm_calls=rec.llm_calls, prompt_tokens=rec.prompt_tokens, completion_tokens=rec.completion_tokens,
            wall_s=time.perf_counter() - t0, stage_ms={k: round(v, 1) for k, v in rec.stage_ms.items()},
            step_records=tuple(rec.records), note=note, goal=goal, aitw_match=aitw_match,
            unparseable_replies=rec.unparseable, wording=job.wording, language=job.language,
        )
    finally:
        phone.close()


# ---- settings --------------------------------------------------------------------------


def preflight(llm: dict[str, Any], timeout_s: float = 10.0) -> str | None:
    """Check that the server answers and knows the model.  Raises ``ValueError`` when the
    server cannot be reached; returns a warning when the model is not listed."""
    from agent.llm import LLMError, RetryPolicy, make_client

    client = make_client(llm["backend"], llm["model"], llm["base_url"], policy=RetryPolicy(attempts=1, timeout_s=timeout_s))
    try:
        models = client.list_models()
    except LLMError as exc:
        how = ("start it with `ollama serve` and `ollama pull MODEL`" if llm["backend"] == "ollama" else
               "start one, e.g. `python -m llama_cpp.server --model FILE.gguf --model_alias NAME --port 8080`")
        raise ValueError(f"the LLM server at {llm['base_url']} does not answer ({exc}); {how}") from None
    finally:
        close = getattr(client, "close", None)
        if close is not None:
            close()
    if models and llm["model"] not in models and f"{llm['model']}:latest" not in models:
        return f"model {llm['model']!r} is not listed by the server (it has: {', '.join(models[:8])})"
    return None
