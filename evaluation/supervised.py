"""The scripted supervisor: what supervising the agent costs a user, task by task.

A run is driven exactly as the window drives it (every step waits for approval), and a
scripted user answers each question from the virtual phone's oracle:

* **approve** when the proposed action advances the task: it reaches the task's goal or
  its next checkpoint (tried on a copy of the phone), or it lands where one of the
  remaining reference steps lands; "done" only when the goal is met, "impossible" only
  for an impossible task;
* **reject** with a short reason otherwise;
* after two rejections on one screen, **demonstrate** the next reference step there.

Per task it records the approvals, rejections, demonstrations, interventions
(rejections + edits + demonstrations), how often a rejected action was proposed again on
the same screen, the model's seconds, the user's waiting time (from an answer to the
next question), Approve -> next proposal times, the model calls, the wall time and where
each proposal came from (``agent.cost``).  The run's oracle (``judge``) is the
task's own success check, so a run ends "succeeded" when the phone says so.

The goal is any of the task's wordings (``wording``) in the phone's language: on a phone in
German the run gets the task's German goal and the supervisor resolves the reference steps
on the German screens.  Qt-free and app-free: the caller passes ``make_run``, which
assembles the run the way the window does (``app.compose.build_run``).
"""

from __future__ import annotations

import logging
import re
import statistics
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from agent.cost import run_cost
from agent.events import AwaitingDecision, Event, Executed, Finished, Proposed
from agent.grounding.match import lcs_similarity, simplify
from agent.runner import RunGenerator
from agent.types import Action, ActionType, Decision, DecisionKind, EpisodeStatus
from phone.virtual.tasks import StepError, Task, perform

log = logging.getLogger(__name__)

#: Rejections on one screen after which the supervisor shows the step itself.
DEMONSTRATE_AFTER = 2

#: ``make_run(goal, device, judge)`` -> the run's event generator (approval on every step).
MakeRun = Callable[[str, Any, Callable[[Action | None], bool | None]], RunGenerator]


@dataclass(frozen=True, slots=True)
class SupervisedResult:
    """One task under the scripted supervisor."""

    task_id: str
    completed: bool
    status: str
    note: str
    wording: int = 0  # which of the task's wordings in ``language`` the run was given
    language: str = "en"  # the phone's UI language (and the goal's)
    goal: str = ""
    approvals: int = 0
    rejections: int = 0
    edits: int = 0
    demonstrations: int = 0
    proposed_again: int = 0  # a rejected action proposed again on the same screen
    steps: int = 0
    model_s: float = 0.0
    waiting_s: float = 0.0
    approve_to_next_s: tuple[float, ...] = ()
    model_calls: int = 0
    wall_s: float = 0.0
    origins: tuple[tuple[str, int], ...] = ()  # where the proposals came from (``agent.cost.origin``)
    #: each intervention in order: what was turned down or shown, and the planner that proposed it
    intervened: tuple[str, ...] = ()

    @property
    def interventions(self) -> int:
        return self.rejections + self.edits + self.demonstrations


def _place(phone: Any) -> tuple[object, ...]:
    """Where the phone is, for comparing outcomes: the app, the screen's words and states."""
    truth = phone.ground_truth()
    rows = sorted((e.kind.value, e.text, e.label, bool(getattr(e, "checked", False))) for e in truth.elements
                  if e.rect.top > 90)  # the status bar's clock and icons do not make a place
    return (phone.foreground(), tuple(rows))


def _after(phone: Any, action: Action, task: Task, done: list[Action], language: str = "en") -> Any | None:
    """A fresh phone in ``language`` brought to where ``phone`` is (the task's start, then
    the actions ``done`` so far) with ``action`` performed on it; None when it cannot be
    performed.  (A copy of the phone object would share its apps' callbacks with the original.)"""
    from phone.virtual.phone import VirtualPhone

    clone = VirtualPhone(seed=getattr(phone, "seed", 0))
    task.setup(clone, language)
    try:
        for earlier in done:
            perform(clone, earlier)
        perform(clone, action)
    except Exception as exc:  # an action the phone refuses advances nothing
        log.debug("supervisor: %s not possible: %s", action.describe(), exc)
        clone.close()
        return None
    return clone


@dataclass
class ScriptedSupervisor:
    """Answers a run's questions from the task's oracle (see the module docstring)."""

    task: Task
    phone: Any
    language: str = "en"  # the phone's language at the task's start (its copies are set up in it)
    next_ref: int = 0
    rejected: dict[tuple[object, ...], list[str]] = field(default_factory=dict)
    ever_rejected: dict[tuple[object, ...], set[str]] = field(default_factory=dict)
    done: list[Action] = field(default_factory=list)  # what reached the phone so far, in order
    approvals: int = 0
    rejections: int = 0
    demonstrations: int = 0
    proposed_again: int = 0
    intervened: list[str] = field(default_factory=list)  # each intervention, in words

    def _reference(self) -> list[tuple[int, Action | None]]:
        """The remaining reference steps that can be done on this screen (None: "impossible")."""
        out: list[tuple[int, Action | None]] = []
        for j in range(self.next_ref, len(self.task.solution)):
            step = self.task.solution[j]
            if step.kind == "impossible":
                out.append((j, None))
                continue
            try:
                out.append((j, step.to_action(self.phone)))
            except StepError:
                continue
        return out

    def advances(self, action: Action) -> bool:
        t = action.type
        if t is ActionType.COMPLETE:
            return bool(self.task.is_success(self.phone, action))
        if t is ActionType.IMPOSSIBLE:
            return self.task.impossible
        after = _after(self.phone, action, self.task, self.done, self.language)
        if after is None:
            return False
        try:
            if not self.task.impossible and self.task.is_success(after):
                return True
            if self.task.checkpoints_done(after) > self.task.checkpoints_done(self.phone):
                return True
            there = _place(after)
            if there == _place(self.phone):  # it leaves the phone where it is: nothing advanced
                return False
            for j, ref in self._reference():
                if ref is None:
                    continue
                ref_after = _after(self.phone, ref, self.task, self.done, self.language)
                if ref_after is not None:
                    same = _place(ref_after) == there
                    ref_after.close()
                    if same:
                        self.next_ref = j + 1
                        return True
            return False
        finally:
            after.close()

    def decide(self, question: AwaitingDecision) -> Decision:
        here = _place(self.phone)
        turned_down = self.rejected.setdefault(here, [])
        proposed = question.proposal.action
        if question.confirm_done:
            ok = bool(self.task.is_success(self.phone))
            self.approvals += ok
            self.rejections += not ok
            if not ok:
                self.intervened.append(f"rejected {proposed.describe()} [{question.proposal.planner}]")
            return Decision(DecisionKind.APPROVE if ok else DecisionKind.REJECT, feedback="" if ok else "not done yet")
        ever = self.ever_rejected.setdefault(here, set())
        if not question.failed:
            if proposed.describe() in ever:
                self.proposed_again += 1
            if self.advances(proposed):
                self.approvals += 1
                return Decision(DecisionKind.APPROVE)
        if question.failed or len(turned_down) >= DEMONSTRATE_AFTER:
            shown = self._demonstration()
            if shown is not None:
                self.demonstrations += 1
                self.intervened.append(f"showed {shown.describe()} after {proposed.describe()} "
                                        f"[{question.proposal.planner}]")
                turned_down.clear()
                return Decision(DecisionKind.DEMONSTRATE, action=shown)
        self.rejections += 1
        self.intervened.append(f"rejected {proposed.describe()} [{question.proposal.planner}]")
        turned_down.append(proposed.describe())
        ever.add(proposed.describe())
        return Decision(DecisionKind.REJECT, feedback=_reason(proposed))

    def _demonstration(self) -> Action | None:
        refs = self._reference()
        if not refs:
            return Action.simple(ActionType.BACK)
        j, ref = refs[0]
        self.next_ref = j + 1
        return ref if ref is not None else Action.simple(ActionType.IMPOSSIBLE)


def _reason(action: Action) -> str:
    if action.type is ActionType.COMPLETE:
        return "the task is not done yet"
    if action.type is ActionType.IMPOSSIBLE:
        return "it can be done: keep going"
    return f"\"{action.describe()}\" does not help with this task"


def supervise(task: Task, phone: Any, device: Any, make_run: MakeRun, *, wording: int = 0,
              on_event: Callable[[Event], None] | None = None, goal: str | None = None) -> SupervisedResult:
    """Run ``task`` under the scripted supervisor on a phone already set up for it, the
    goal given in the task's wording ``wording`` in the phone's language (``Task.wording``
    raises ``WordingError`` when the task has no such wording); ``goal``, when given, is
    the words the run gets instead (the result still names ``wording``)."""
    language = str(getattr(phone, "lang", "en"))
    goal = goal or task.wording(wording, language)
    supervisor = ScriptedSupervisor(task, phone, language)
    judge = lambda final: bool(task.is_success(phone, final))  # noqa: E731
    gen = make_run(goal, device, judge)
    finished: Finished | None = None
    started = time.perf_counter()
    answered_at: float | None = None
    approved_at: float | None = None
    waiting = 0.0
    approve_waits: list[float] = []
    try:
        event: Event = next(gen)
        while True:
            if on_event is not None:
                on_event(event)
            if isinstance(event, Executed) and not event.action.is_terminal:
                supervisor.done.append(event.action)
            if isinstance(event, Proposed) and approved_at is not None:
                approve_waits.append(time.perf_counter() - approved_at)
                approved_at = None
            if isinstance(event, AwaitingDecision):
                if answered_at is not None:
                    waiting += time.perf_counter() - answered_at
                decision = supervisor.decide(event)
                answered_at = time.perf_counter()
                approved_at = answered_at if decision.kind is DecisionKind.APPROVE else None
                event = gen.send(decision)
                continue
            if isinstance(event, Finished):
                finished = event
            event = next(gen)
    except StopIteration:
        pass
    finally:
        gen.close()
    if answered_at is not None and finished is not None:
        waiting += time.perf_counter() - answered_at
    episode = finished.episode if finished is not None else None
    steps = episode.steps if episode is not None else ()
    model_ms = sum(c.latency_ms for s in steps if s.proposal is not None for c in s.proposal.llm_calls)
    cost = run_cost(episode) if episode is not None else None
    edits = sum(1 for s in steps if s.decision is not None and s.decision.kind is DecisionKind.EDIT)
    status = finished.status if finished is not None else EpisodeStatus.ERROR
    return SupervisedResult(
        task_id=task.id, wording=wording, language=language, goal=goal, completed=status in (EpisodeStatus.SUCCEEDED, EpisodeStatus.IMPOSSIBLE) and bool(
            task.is_success(phone, steps[-1].executed if steps else None)),
        status=status.value, note=finished.note if finished is not None else "no Finished event",
        approvals=supervisor.approvals, rejections=supervisor.rejections, edits=edits,
        demonstrations=supervisor.demonstrations, proposed_again=supervisor.proposed_again, steps=len(steps),
        model_s=round(model_ms / 1000.0, 2), waiting_s=round(waiting, 2), approve_to_next_s=tuple(approve_waits),
        model_calls=cost.model_calls if cost is not None else 0, wall_s=round(time.perf_counter() - started, 2),
        origins=cost.origins if cost is not None else (), intervened=tuple(supervisor.intervened))


@dataclass(frozen=True, slots=True)
class Summary:
    tasks: int
    completed: int
    mean_interventions: float
    proposed_again: int
    approve_to_next_median_s: float | None
    model_s: float
    waiting_s: float
    mean_model_calls: float = 0.0
    model_calls: int = 0
    wall_s: float = 0.0


def summarise(results: Iterable[SupervisedResult]) -> Summary:
    rs = list(results)
    waits = [w for r in rs for w in r.approve_to_next_s]
    return Summary(
        tasks=len(rs), completed=sum(r.completed for r in rs),
        mean_interventions=round(statistics.fmean([r.interventions for r in rs]), 2) if rs else 0.0,
        proposed_again=sum(r.proposed_again for r in rs),
        approve_to_next_median_s=round(statistics.median(waits), 2) if waits else None,
        model_s=round(sum(r.model_s for r in rs), 1), waiting_s=round(sum(r.waiting_s for r in rs), 1),
        mean_model_calls=round(statistics.fmean([r.model_calls for r in rs]), 2) if rs else 0.0,
        model_calls=sum(r.model_calls for r in rs), wall_s=round(sum(r.wall_s for r in rs), 1))


# ---- a scripted model that listens ------------------------------------------------------

_GOAL = re.compile(r"on their Android phone: (.+)")
_LINE = re.compile(r"^\s*\[(\w+)\] ([a-z_ ]+?)(?: \"([^\"]+)\")?(?: \(([^)·]+)[^)]*\))?\s*$", re.M)
_TURNED_DOWN = re.compile(r"rejected \"tap ([^\"]+)\"|\"tap ([^\"]+)\" was rejected|instead of \"tap ([^\"]+)\"")
_DONE = re.compile(r"^\d+\) tap (.+?)(?: \(done by the user\))?$", re.M)


def listening_model(prompt: str) -> str:
    """A scripted stand-in for a small model on free-text "Next action:" prompts: it taps
    the listed element whose words best match the goal, skipping what the notes say the
    user rejected (a model that follows its notes) and what it already tapped.  Without
    notes it repeats itself, as small models do.  Deterministic; no LLM."""
    goal_m = _GOAL.search(prompt)
    screen = prompt.split("<screen>")[-1].split("</screen>")[0] if "<screen>" in prompt else ""
    if goal_m is None or not screen:
        return "wait"
    goal = simplify(goal_m.group(1))
    skip = {simplify(next(g for g in m.groups() if g)) for m in _TURNED_DOWN.finditer(prompt)}
    skip |= {simplify(m.group(1)) for m in _DONE.finditer(prompt)}
    best: tuple[float, str] | None = None
    for m in _LINE.finditer(screen):
        words = (m.group(3) or m.group(4) or "").strip()
        if not words or "text field" in m.group(2) or simplify(words) in skip:
            continue
        score = max(lcs_similarity(goal, simplify(words)), *(lcs_similarity(w, simplify(words))
                                                            for w in goal.split() if len(w) > 3), 0.0)
        if best is None or score > best[0]:
            best = (score, words)
    return f"tap {best[1]}" if best is not None else "go back"
