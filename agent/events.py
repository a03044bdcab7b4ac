"""The events ``run_episode`` yields, the settings it takes and the ``StepSink`` it writes to.

All events are frozen; the GUI, the CLI and the tests consume the same stream.
``StepSink`` is the persistence contract (``app.storage.Store`` satisfies it), declared
here so the agent never imports the application layer.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Protocol, runtime_checkable

from agent.types import Action, Episode, EpisodeStatus, LatentState, LLMCall, Proposal, Step
from vision.types import Screen, ScreenParse


class Autonomy(str, Enum):
    APPROVE = "approve"  # every step waits for the user
    CONFIDENT = "confident"  # ask only when unconfident or sensitive
    AUTO = "auto"  # never ask (sensitive actions still ask unless allowed)


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
    """Send a ``Decision`` back with ``generator.send(decision)``."""

    step: int
    proposal: Proposal
    reason: str


@dataclass(frozen=True, slots=True)
class Executed:
    step: int
    action: Action
    record: Step


@dataclass(frozen=True, slots=True)
class Finished:
    status: EpisodeStatus
    note: str
    episode: Episode


@dataclass(frozen=True, slots=True)
class ErrorEvent:
    step: int
    message: str
    fatal: bool = False
    calls: tuple[LLMCall, ...] = ()


Event = Observed | Parsed | Estimated | Proposed | AwaitingDecision | Executed | Finished | ErrorEvent
