"""The events ``run_episode`` yields, the settings it takes and the ``StepSink`` it writes to.

All events are frozen; the GUI, the CLI and the tests consume the same stream and
dispatch on these classes (``match event: case Executed(record=step): ...``), never on
attribute names.  Every step the runner stores arrives as exactly one *step event*
carrying the stored ``Step`` in ``record`` (see ``StepEvent``): ``Executed`` (executed or
finishing steps), ``Rejected``, ``Aborted`` and ``ErrorEvent`` (failed steps; its
``record`` is None only for events built outside the runner).  ``StepSink`` is the
persistence contract (``app.storage.Store`` satisfies it), declared here so the agent
never imports the application layer.  No I/O here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from agent.types import Action, Autonomy, Episode, EpisodeStatus, LatentState, LLMCall, Proposal, Step
from vision.types import Screen, ScreenParse

__all__ = [
    "Aborted", "Amended", "Autonomy", "AwaitingDecision", "ErrorEvent", "Estimated", "Event", "Executed", "Finished",
    "Observed", "Parsed", "Proposed", "Rejected", "RunSettings", "StepEvent", "StepSink", "Working",
]


@runtime_checkable
class StepSink(Protocol):
    def begin_episode(self, episode: Episode) -> None: ...

    def append_step(self, episode_id: str, step: Step, screen: Screen | None = None) -> object: ...

    def finish_episode(self, episode_id: str, status: EpisodeStatus | str, note: str = "") -> None: ...


@dataclass(frozen=True, slots=True)
class RunSettings:
    mode: Autonomy = Autonomy.APPROVE
    max_steps: int = 15
    max_repeats: int = 3
    allow_sensitive: bool = False  # the user turned off approval of sensitive actions for this task
    confidence_threshold: float = 0.6
    max_consecutive_errors: int = 3
    max_replans: int = 2  # grounding misses sent back to the planner per step
    settle_ms: int = 0  # pause after each action before the next screenshot
    max_wait_s: float = 2.0
    examples: tuple[str, ...] = ()  # demonstrations for planners that use examples
    send_screenshot: bool = False  # attach the screenshot to planner prompts (vision-language models)
    model: str = ""
    #: A step that fails after its screenshot but before the user could decide (a screen
    #: that could not be parsed, an unreadable reply, no groundable action) waits for the
    #: user (``AwaitingDecision`` with ``failed=True``): Edit or Demonstrate performs the
    #: user's action as the next step, Approve or Reject lets the agent try again, Abort stops.
    ask_on_error: bool = False
    #: Rejections are remembered per screen, kept out of the next replies and told to the
    #: planner; False runs the same loop without that feedback (the benchmark's baseline).
    feedback: bool = True
    #: When the agent says the task is done (or the run stops without a verdict from the
    #: phone), ask the user "Is the task done?" (``AwaitingDecision.confirm_done``).
    confirm_done: bool = False
    #: At the end of a run, how long the record of the run may take to see what the last
    #: action made flash (a toast lasts up to 3.5 s); never spent on a step's path.
    record_settle_s: float = 5.0

    def __post_init__(self) -> None:
        if not isinstance(self.mode, Autonomy):
            object.__setattr__(self, "mode", Autonomy(self.mode))
        if self.max_steps < 1:
            raise ValueError("max_steps must be at least 1")
        if self.max_repeats < 2:
            raise ValueError("max_repeats must be at least 2")


@dataclass(frozen=True, slots=True)
class Observed:
    step: int
    screen: Screen


@dataclass(frozen=True, slots=True)
class Parsed:
    step: int
    parse: ScreenParse


@dataclass(frozen=True, slots=True)
class Estimated:
    step: int
    latent: LatentState
    calls: tuple[LLMCall, ...] = ()


@dataclass(frozen=True, slots=True)
class Proposed:
    step: int
    proposal: Proposal


@dataclass(frozen=True, slots=True)
class AwaitingDecision:
    """Send a ``Decision`` back with ``generator.send(decision)``.

    ``failed`` is True when the step failed and the runner asks the user to perform it
    (``RunSettings.ask_on_error``); ``proposal`` is then a placeholder (a wait action).
    """

    step: int
    proposal: Proposal
    reason: str
    failed: bool = False
    #: Other actions the user may pick in one click (after repeated rejections on a screen).
    alternatives: tuple[Action, ...] = ()
    #: The question is "Is the task done?": Approve answers yes, Reject answers no.
    confirm_done: bool = False


@dataclass(frozen=True, slots=True)
class Working:
    """The loop began a stage of a step (``stage`` in words: "reading the screen",
    "estimating progress", "planning the next action"); ``call`` of ``calls`` is the model
    call this stage makes among those the step expects (0 when it calls no model);
    ``started`` is the wall-clock time it began (``time.time()``)."""

    step: int
    stage: str
    call: int = 0
    calls: int = 0
    started: float = 0.0


@dataclass(frozen=True, slots=True)
class Executed:
    """A step whose action reached the phone, or that finished the episode; ``record``
    is the step as stored."""

    step: int
    action: Action
    record: Step


@dataclass(frozen=True, slots=True)
class Rejected:
    """The user rejected the proposal (the feedback goes to the planner); ``record`` is
    the stored step (outcome ``REJECTED``)."""

    step: int
    record: Step


@dataclass(frozen=True, slots=True)
class Aborted:
    """The user stopped the run at this step; ``record`` is the stored step (outcome
    ``ABORTED``).  A ``Finished`` event follows."""

    step: int
    record: Step


@dataclass(frozen=True, slots=True)
class Amended:
    """A step stored earlier gained what flashed on the screen after its action (toasts,
    snackbars, short dialogs: ``record.transients``); ``record`` is the step as stored now.
    Not a step event: the step was announced when it was stored first."""

    step: int
    record: Step


@dataclass(frozen=True, slots=True)
class Finished:
    status: EpisodeStatus
    note: str
    episode: Episode


@dataclass(frozen=True, slots=True)
class ErrorEvent:
    """A step failed (``fatal``: the device is gone and a ``Finished`` follows); ``calls``
    are the LLM requests the step made, ``record`` the step as stored."""

    step: int
    message: str
    fatal: bool = False
    calls: tuple[LLMCall, ...] = ()
    record: Step | None = None


#: The events that carry a stored step: exactly one per step the runner records.
StepEvent = Executed | Rejected | Aborted | ErrorEvent

Event = (Observed | Parsed | Working | Estimated | Proposed | AwaitingDecision | Executed | Rejected | Aborted | Finished
         | ErrorEvent | Amended)
