"""The offline benchmark's run: every (planner, task) cell replayed step by step, scored,
and saved to the results database the moment it completes, so a run can be continued.
Tasks go in the outer loop, so a run cut short leaves every cell on the same tasks.

A cell is one recorded task under one planner with one reply mode (its ``label``, e.g.
``visiontasker:structured``).  It becomes an ``EpisodeResult`` like an online cell:
``checkpoints_total`` / ``checkpoints_reached`` are the task's steps and the ones the
planner got right (so ``partial`` is the task's action accuracy), ``success`` means every
step was right (completion), ``noise`` is ``"offline"`` and ``note`` the app.  Each step's
record holds the gold and predicted actions, the verdict and its kind, the LLM calls and
time.  ``run_offline`` takes a factory for the replayer so the caller decides the client
and parser; the oracle (``GoldOracle``), when given, is told each gold step first.
Progress is reported through callbacks; no printing.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from agent.planners.base import Turn
from evaluation.metrics import EpisodeResult
from evaluation.offline.folds import FOLDS_SUFFIX
from evaluation.offline.oracle import GoldOracle
from evaluation.offline.replay import StepReplayer, gold_turn
from evaluation.offline.scoring import score
from evaluation.offline.types import OfflineTask
from evaluation.results import ResultsDB

log = logging.getLogger(__name__)

NOISE = "offline"
STOPPED = "offline"


def cell_label(planner: str, constrained: bool) -> str:
    return f"{planner}:{'structured' if constrained else 'free'}"


@dataclass(frozen=True, slots=True)
class Cell:
    planner: str
    constrained: bool
    folds: bool = False  # each app's tasks replayed with the evidence fitted on the other apps

    @property
    def label(self) -> str:
        return cell_label(self.planner, self.constrained) + (FOLDS_SUFFIX if self.folds else "")


StepCallback = Callable[[OfflineTask, int, dict], None]


def run_task(task: OfflineTask, replayer: StepReplayer, label: str, *, model: str = "",
             oracle: GoldOracle | None = None, on_step: StepCallback | None = None) -> EpisodeResult:
    """Replay every step of ``task`` (gold history) and score each proposal."""
    t0 = time.perf_counter()
    history: list[Turn] = []
    records: list[dict] = []
    right = calls = prompt_tokens = completion_tokens = 0
    for step in task.steps:
        try:
            obs = replayer.observe(step.screen)
        except (ValueError, OSError) as exc:
            return _failed(task, label, model, f"step {step.index}: the recorded screen cannot be read: {exc}",
                           records, t0)
        if oracle is not None:
            oracle.expect(step.gold, obs.parse)
        pred = replayer.predict(task.goal, obs, tuple(history), step.index)
        verdict = score(step.gold, pred.action, obs.parse)
        right += verdict.correct
        calls += len(pred.calls)
        prompt_tokens += sum(c.prompt_tokens or 0 for c in pred.calls)
        completion_tokens += sum(c.completion_tokens or 0 for c in pred.calls)
        rec = {
            "step": step.index, "gold": step.gold.describe(), "gold_kind": step.gold.kind.value,
            "pred": pred.action.describe() if pred.action is not None else None, "correct": verdict.correct,
            "kind": verdict.kind, "detail": verdict.detail, "text_correct": verdict.text_correct,
            "error": pred.error, "llm_calls": len(pred.calls), "ms": round(pred.ms, 1),
            "evidence": list(pred.proposal.evidence) if pred.proposal is not None else [],
        }
        records.append(rec)
        if on_step is not None:
            on_step(task, step.index, rec)
        history.append(gold_turn(step.gold, obs.text))
    n = len(task.steps)
    return EpisodeResult(
        planner=label, task_id=task.task_id, seed=0, noise=NOISE, model=model, success=right == n,
        checkpoints_total=n, checkpoints_reached=right, stopped_by=STOPPED, actions=n, steps=n,
        llm_calls=calls, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens,
        wall_s=time.perf_counter() - t0, step_records=tuple(records), note=task.app, goal=task.goal,
        aitw_match=right / n if n else None,
        unparseable_replies=sum(1 for r in records for e in r["evidence"] if "unreadable" in e),
    )


def _failed(task: OfflineTask, label: str, model: str, message: str, records: list[dict], t0: float) -> EpisodeResult:
    log.warning("%s on %s: %s", label, task.task_id, message)
    return EpisodeResult(planner=label, task_id=task.task_id, noise=NOISE, model=model, stopped_by="error",
                         checkpoints_total=len(task.steps), steps=len(records), error=message,
                         wall_s=time.perf_counter() - t0, step_records=tuple(records), note=task.app, goal=task.goal)


@dataclass(frozen=True, slots=True)
class Outcome:
    ran: int
    skipped: int
    errors: int


def run_offline(store: ResultsDB, run: str, tasks: Sequence[OfflineTask], cells: Sequence[Cell],
                replayer_for: Callable[[Cell, str], StepReplayer], *, model: str = "",
                oracle_for: Callable[[Cell], GoldOracle | None] | None = None, retry_errors: bool = False,
                on_skip: Callable[[int], None] | None = None, on_step: StepCallback | None = None,
                on_result: Callable[[EpisodeResult, int, int], None] | None = None) -> Outcome:
    """Every cell × task not yet in ``run`` (errored ones again with ``retry_errors``),
    task by task (every cell on a task before the next task, so a run cut short still
    pairs its cells on the same tasks); each result is saved as soon as it is known.
    ``replayer_for(cell, app)``: the replayer for a cell's tasks of one app (a fold cell
    gets one per app, with the evidence fitted without that app; others one for all)."""
    done = store.done_keys(run, include_errors=not retry_errors)
    total = len(tasks) * len(cells)
    todo = [(c, t) for t in tasks for c in cells if (c.label, t.task_id, 0, NOISE) not in done]
    skipped = total - len(todo)
    if on_skip is not None:
        on_skip(skipped)
    ran = errors = 0
    replayers: dict[tuple[Cell, str], StepReplayer] = {}
    oracles: dict[Cell, GoldOracle | None] = {}
    for cell, task in todo:
        key = (cell, task.app if cell.folds else "")
        if key not in replayers:
            replayers[key] = replayer_for(cell, key[1])
        if cell not in oracles:
            oracles[cell] = oracle_for(cell) if oracle_for is not None else None
        result = run_task(task, replayers[key], cell.label, model=model, oracle=oracles[cell], on_step=on_step)
        store.save(run, result)
        ran += 1
        errors += result.error is not None
        if on_result is not None:
            on_result(result, skipped + ran, total)
    return Outcome(ran, skipped, errors)
