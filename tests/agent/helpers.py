"""Shared helpers for runner tests: a recording step sink and a run driver."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from agent.events import AwaitingDecision, RunSettings
from agent.planners import make_planner
from agent.runner import drive, run_episode
from agent.types import Decision, DecisionKind, Episode, Step
from vision.config import PipelineConfig
from vision.pipeline import ScreenParser

TREE = ScreenParser(PipelineConfig(mode="tree"))


@dataclass
class RecordingSink:
    episodes: list[Episode] = field(default_factory=list)
    steps: list[tuple[str, Step, bool]] = field(default_factory=list)
    finished: list[tuple[str, str, str]] = field(default_factory=list)

    def begin_episode(self, episode: Episode) -> None:
        self.episodes.append(episode)

    def append_step(self, episode_id: str, step: Step, screen=None) -> Step:
        self.steps.append((episode_id, step, screen is not None))
        return step

    def finish_episode(self, episode_id: str, status, note: str = "") -> None:
        self.finished.append((episode_id, str(getattr(status, "value", status)), note))


def run(goal, phone, client, planner="zeroshot-", *, decide: Callable[[AwaitingDecision], Decision] | None = None,
        store=None, **settings):
    settings.setdefault("mode", "auto")
    settings.setdefault("max_wait_s", 0.0)
    extra = settings.pop("_extra", {})  # run_episode's own keywords (judge, estimator ...)
    gen = run_episode(goal, phone, TREE, make_planner(planner, client, samples=3), store,
                      settings=RunSettings(**settings), **extra)
    return list(drive(gen, decide or (lambda ev: Decision(DecisionKind.APPROVE))))


def kinds(events) -> list[str]:
    return [type(e).__name__ for e in events]
