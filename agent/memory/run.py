"""One run's side of the decision memory: ``MemorySession`` keeps what the run needs to
find remembered steps (the app in front, how many steps were taken on each screen, the
goals equivalent to this one) and ``remembering`` feeds it the run's events:

* each step the user approved, edited or demonstrated is remembered (with the screen's
  identity, the app and its version, the visit and the goal); a step approved
  automatically (autonomy) is not a decision of the user's and is not kept; a remembered
  step approved again gets today's date;
* on the first screen of the run where only other goals were taught, the model may be
  asked once whether this goal is one of them in other words (``agent.memory.same_task``);
  its call is put on the step's proposal so that it is counted like any model call;
* a remembered step the user rejects is retired when it was remembered for this very
  goal; remembered for an *equivalent* goal, that goal stops counting as equivalent for
  the rest of the run (the other goal's own memory stays as it was).

Memory never breaks a run: a failure to remember is logged and the run goes on.  Reads
the app's version through the device (``agent.knowledge.explore.app_version``) once per
app and run; no Qt.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from dataclasses import replace
from typing import Any

from agent.effects import screen_identity
from agent.events import Event, Executed, Observed, Rejected
from agent.llm.base import CancelToken
from agent.macros.recorder import Observation, make_step
from agent.macros.words import level_words
from agent.memory.memory import DecisionMemory
from agent.memory.same_task import SameTask
from agent.memory.types import MEMORY, How, Recall, Remembered, when
from agent.relay import relay
from agent.runner import RunGenerator
from agent.types import Action, DecisionKind, LLMCall, Proposal, Step
from vision.types import ElementKind, ScreenParse

log = logging.getLogger(__name__)

_HOW = {DecisionKind.APPROVE: How.APPROVED, DecisionKind.EDIT: How.EDITED, DecisionKind.DEMONSTRATE: How.DEMONSTRATED}


def screen_words(parse: ScreenParse, limit: int = 3) -> str:
    """A few of the screen's words without digits (no clock or date), top first: the
    Knowledge tab's name for a screen."""
    bars = (ElementKind.STATUS_BAR, ElementKind.NAVIGATION_BAR)
    shown: list[str] = []
    for e in sorted(parse.elements, key=lambda e: (e.rect.top, e.rect.left)):
        words = " ".join((e.text or e.label).split())
        if e.kind in bars or not words or words in shown or len(words) > 40 or any(c.isdigit() for c in words):
            continue
        shown.append(words)
        if len(shown) == limit:
            break
    return " · ".join(shown)


class MemorySession:
    """The decision memory as one run sees it (see the module docstring)."""

    def __init__(self, memory: DecisionMemory, goal: str, device: Any = None, same_task: SameTask | None = None,
                 cancel: CancelToken | None = None) -> None:
        self.memory, self.goal, self.device = memory, goal, device
        self.same_task, self.cancel = same_task, cancel
        self.asked_model = False  # the model is asked at most once per run (``SameTask``)
        self.calls: list[LLMCall] = []  # model calls made for the memory, not yet on a step
        try:
            self.equivalent: tuple[str, ...] = memory.goals_like(goal)
        except Exception:  # a damaged store must not stop the run
            log.warning("decision memory unavailable", exc_info=True)
            self.equivalent = ()
        self.app = ""
        self.image: Any = None
        self.visits: Counter[str] = Counter()
        self.proposed: dict[int, Recall] = {}  # run step -> the remembered step proposed there
        self.remembered = 0  # decisions kept in this run
        self._versions: dict[str, str] = {}
        self.episode_id = ""

    # ---- finding ---------------------------------------------------------------------------
    def version(self, app: str) -> str:
        if not app or self.device is None:
            return ""
        if app not in self._versions:
            from agent.knowledge.explore import app_version

            self._versions[app] = app_version(self.device, app)
        return self._versions[app]

    def recall(self, parse: ScreenParse) -> Recall | None:
        """The remembered step for this screen (a hint when ``Recall.demoted``), or None.
        On the first screen where only other goals were taught, the model is asked once
        whether this goal is one of them in other words (``SameTask``)."""
        screen = screen_identity(parse, self.app or None)
        visit = self.visits[screen]
        try:
            found = self._recall(parse, screen, visit)
            if found is None and self.same_task is not None and not self.asked_model:
                others = self.memory.goals_at(self.app, screen, visit)
                if others:
                    self.asked_model = True
                    picked, calls = self.same_task.pick(self.goal, others, self.cancel)
                    self.calls.extend(calls)
                    if picked is not None:
                        self.equivalent = (*self.equivalent, picked)
                        found = self._recall(parse, screen, visit)
            return found
        except Exception:
            log.warning("decision memory: recall failed", exc_info=True)
            return None

    def _recall(self, parse: ScreenParse, screen: str, visit: int) -> Recall | None:
        return self.memory.recall(self.goal, self.equivalent, parse, app=self.app, screen=screen, visit=visit,
                                  version=self.version(self.app), image=self.image)

    def take_calls(self) -> tuple[LLMCall, ...]:
        """The memory's model calls not yet counted on a step (the caller puts them on one)."""
        calls, self.calls = tuple(self.calls), []
        return calls

    def proposal(self, step: int, recall: Recall) -> Proposal:
        """The remembered step as this run's proposal (the card says whose and when)."""
        self.proposed[step] = recall
        e = recall.entry
        for_goal = f" for “{e.goal}”" if recall.equivalent else ""
        words = f"You {e.how.value} this on {when(e.at)}{for_goal}: {e.step.description or e.action.describe()}"
        return Proposal(recall.action, rationale=words, planner=MEMORY, confidence=1.0,
                        evidence=(f"memory: {e.how.value} this on {when(e.at)}{for_goal}; {level_words(recall.found)}"
                                  f" (no model call) [{e.id}]",))

    def hint(self, recall: Recall) -> str:
        e = recall.entry
        return (f"On this screen the user {e.how.value} \"{e.action.describe()}\" for this task on {when(e.at)}, "
                f"but {recall.demoted}: check that it still fits before choosing it.")

    # ---- hearing the run ---------------------------------------------------------------------
    def heard(self, event: Event) -> None:
        if isinstance(event, Observed):
            self.app = event.screen.foreground_package or ""
            self.image = event.screen.image
        elif isinstance(event, Executed):
            self._executed(event.step, event.record)
        elif isinstance(event, Rejected):
            self._rejected(event.step, event.record)

    def _executed(self, index: int, record: Step) -> None:
        if record.parse is None or record.executed is None:
            return
        screen = screen_identity(record.parse, record.foreground_package)
        visit = self.visits[screen]
        if not record.executed.is_terminal:
            self.visits[screen] += 1
        d = record.decision
        if d is None or d.decided_by == "auto" or d.kind not in _HOW:
            return
        recalled = self.proposed.get(index)
        if recalled is not None and d.kind is DecisionKind.APPROVE and not recalled.equivalent:
            self.memory.confirm(recalled.entry)
            return
        app = record.foreground_package or ""
        step = make_step(_plain(record.executed), Observation(record.parse, self.image, app or None))
        self.memory.remember(Remembered(self.goal, app, screen, step, _HOW[d.kind], self.version(app), visit,
                                        screen_words(record.parse), self.episode_id))
        self.remembered += 1

    def _rejected(self, index: int, record: Step) -> None:
        recalled = self.proposed.pop(index, None)
        if recalled is None or record.proposal is None or record.proposal.planner != MEMORY:
            return
        why = record.decision.feedback if record.decision is not None else ""
        if recalled.equivalent:
            self.equivalent = tuple(g for g in self.equivalent if g != recalled.entry.goal)
            log.info("decision memory: %r is not treated as %r any more in this run", recalled.entry.goal, self.goal)
        else:
            self.memory.retire(recalled.entry, f"rejected on {when(time.time())}" + (f": {why}" if why else ""))


def _plain(action: Action) -> Action:
    """The executed action as the step to remember (its target re-made from the parse)."""
    return replace(action, target=None) if action.touch is not None else action


def remembering(gen: RunGenerator, session: MemorySession) -> RunGenerator:
    """``gen``'s events and decisions unchanged, each event told to ``session`` first."""
    return relay(gen, session.heard, what="the decision memory")
