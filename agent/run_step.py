"""The pieces of one step of ``agent.runner``'s loop: the step being built (``StepWork``),
what the loop carries from step to step (``RunMemory``), the propose phase's result
(``Offer``), the one exception a failing phase raises (``StepFailed``), and the small
helpers every phase uses (waiting for a decision, calling a model, storing, the screenshot
sent to a model).  Plain data and functions: no loop, no I/O beyond the sink it is given.
"""

from __future__ import annotations

import io
import logging
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any, Protocol

from agent.events import AwaitingDecision, Event, StepSink
from agent.feedback import Feedback
from agent.grounding.assessment import Assessor
from agent.latent import LatentEstimator
from agent.llm.base import LLMError
from agent.planners.base import Planner, Turn
from agent.sink import StepNotStored
from agent.types import (
    Action,
    ActionType,
    Decision,
    Episode,
    LatentState,
    LLMCall,
    Proposal,
    Step,
    StepOutcome,
)
from vision.types import Screen, ScreenParse

log = logging.getLogger(__name__)

RunGenerator = Generator[Event, Decision | None, Episode]
#: The stages a step's time is split into (``Step.timings_ms``), in the order they happen.
STAGES = ("frame", "hierarchy", "parse", "llm", "decide", "execute", "record")
Phase = Generator[Event, Decision | None, Any]


#: The task's oracle: called with the final action (or None after an ordinary step).
Judge = Callable[[Action | None], bool | None]


class ScreenParserLike(Protocol):
    def parse(self, screen: Screen) -> ScreenParse: ...


class LookAgain(Protocol):
    """A second, closer reading of a screen for the goal's words (``agent.look_again.SecondLook``):
    ``needed`` says whether the first parse lacks them (cheap), the call returns the parse to
    use and what it did, in words for the step's evidence."""

    def needed(self, goal: str, parse: ScreenParse) -> bool: ...

    def __call__(self, goal: str, screen: Screen, parse: ScreenParse) -> tuple[ScreenParse, tuple[str, ...]]: ...


class StepFailed(Exception):
    """A step could not go on.  ``fatal``: the device is gone.  ``refused``: the phone
    refused this action (the planner hears about it on this screen)."""

    def __init__(self, message: str, calls: tuple[LLMCall, ...] = (), *, fatal: bool = False,
                 refused: Action | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.calls = calls
        self.fatal = fatal
        self.refused = refused


@dataclass
class RunMemory:
    """What the loop carries from one step to the next."""

    history: list[Turn] = field(default_factory=list)
    performed: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # for the current screen
    failed: list[Action] = field(default_factory=list)  # options rejected on the current screen
    prev_screen_text: str = ""
    prev_parse: ScreenParse | None = None  # the screen the last executed action was taken on
    last_screen_key: str = ""
    errors_in_row: int = 0
    feedback: Feedback = field(default_factory=Feedback)
    corrections: list[str] = field(default_factory=list)  # told to the planner on the next screen
    unchanged: list[str] = field(default_factory=list)  # keys of the agent's own actions that changed nothing, in a row


@dataclass
class StepWork:
    """One step while it is being built; ``stored`` turns it into the ``Step`` to record."""

    index: int
    started: float = field(default_factory=time.time)
    screen: Screen | None = None
    parse: ScreenParse | None = None
    screen_id: str = ""
    foreground: str | None = None
    screen_text: str = ""
    looked_again: tuple[str, ...] = ()  # what a second look at the screen found (step evidence)
    images: tuple[bytes, ...] = ()
    calls: list[LLMCall] = field(default_factory=list)
    latent: LatentState | None = None
    proposal: Proposal | None = None
    decision: Decision | None = None
    timings: list[tuple[str, float]] = field(default_factory=list)

    def time(self, stage: str, since: float) -> None:
        self.timings.append((stage, (time.perf_counter() - since) * 1000.0))

    def add(self, stage: str, ms: float) -> None:
        """``ms`` more spent in ``stage`` (one entry per stage)."""
        for i, (name, before) in enumerate(self.timings):
            if name == stage:
                self.timings[i] = (stage, before + ms)
                return
        self.timings.append((stage, ms))

    def stored(self, outcome: StepOutcome, *, executed: Action | None = None, error: str | None = None,
               proposal: Proposal | None = None) -> Step:
        timings = list(self.timings)
        if self.calls:
            timings.append(("llm", sum(c.latency_ms for c in self.calls)))
        timings.sort(key=lambda t: STAGES.index(t[0]) if t[0] in STAGES else len(STAGES))
        return Step(self.index, parse=self.parse, proposal=proposal or self.proposal, decision=self.decision,
                    executed=executed, outcome=outcome, error=error, foreground_package=self.foreground,
                    started_at=self.started, finished_at=time.time(), timings_ms=tuple(timings))


@dataclass(frozen=True, slots=True)
class Offer:
    """The propose phase's result: the proposal and why the user may need to be asked."""

    proposal: Proposal
    confidence: float | None
    ask_reason: str = ""  # from the assessment
    blocked: bool = False
    sensitive: str | None = None  # why the action is sensitive


def await_decision(question: AwaitingDecision) -> Generator[Event, Decision | None, Decision]:
    """Yield ``question`` until a ``Decision`` is sent back."""
    decision = yield question
    while not isinstance(decision, Decision):
        decision = yield question
    return decision


def call_model(fn: Callable[..., Any], *args: Any) -> Any:
    """Call an estimator or the assessor; an LLM failure fails the step (its calls kept)."""
    try:
        return fn(*args)
    except LLMError as exc:
        raise StepFailed(str(exc), exc.calls) from None


def screen_png(screen: Screen, max_side: int = 1024) -> bytes:
    """The screenshot as PNG, downscaled so its longer side is at most ``max_side``, with its
    password fields painted over (a model never sees a password)."""
    from PIL import Image

    from vision.secret_mask import mask_password_fields

    img = Image.fromarray(mask_password_fields(screen).image)
    scale = max_side / max(img.size)
    if scale < 1:
        img = img.resize((round(img.width * scale), round(img.height * scale)))
    buf = io.BytesIO()
    img.save(buf, format="PNG", optimize=False)
    return buf.getvalue()


def error_proposal(planner: str, latent: LatentState | None, calls: tuple[LLMCall, ...]) -> Proposal | None:
    """Keep the failed step's LLM calls (prompts and replies) with the stored step."""
    if not calls:
        return None
    return Proposal(Action.simple(ActionType.WAIT), rationale="(no usable proposal)", latent=latent,
                    planner=planner, llm_calls=calls)


def to_sink(store: StepSink | None, method: str, *args: Any) -> Any:
    if store is None:
        return None
    try:
        return getattr(store, method)(*args)
    except StepNotStored:  # the sink gave up after retrying: stop, never report an unstored step
        raise
    except Exception:  # other storage trouble is logged, the run goes on
        log.exception("storing %s failed", method)
        return None


def calls_per_step(planner: Planner, estimator: LatentEstimator | None, assessor: Assessor | None) -> int:
    """How many model calls a step usually makes (for "call k of n")."""
    n = 1
    if planner.uses_latent and estimator is not None:
        n += getattr(estimator, "calls_per_step", 2)
    if assessor is not None:
        n += 1
    return n
