"""One planner proposal per recorded step, with nothing executed.

``StepReplayer`` gives the planner what ``agent.runner`` gives it on a live phone: the
goal, the screen as a ``ScreenParse`` and its fenced description (``agent.screen_text``),
the actions so far as ``Turn``s (here the recording's gold actions), and, for planners
that use latent state, the estimator's view first (the runner's stop rule included: a
completion estimate ends the task, but not on its first screen).  The planner's action
then goes through the bundle's grounder, and a grounding miss is sent back to the planner
as a note, as the runner does.  What comes back is a ``Prediction``: the grounded action
or the reason there is none.  Recorded screenshots are parsed by the vision pipeline
(the view tree when the recording has one, pixels otherwise).  No device, no Qt.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, replace
from typing import Protocol

from agent.grounding.base import GroundContext, GroundingError
from agent.latent import LatentInput
from agent.llm.base import LLMError
from agent.planners.base import PlanContext, PlanError, Turn
from agent.planners.registry import PlannerBundle
from agent.screen_text import description, fenced
from agent.types import Action, ActionType, LLMCall, Proposal
from evaluation.offline.types import Gold, RecordedScreen
from vision.types import Screen, ScreenParse

log = logging.getLogger(__name__)


class ScreenParserLike(Protocol):
    def parse(self, screen: Screen) -> ScreenParse: ...


@dataclass(frozen=True, slots=True)
class Observation:
    """A recorded screen as the planners see it."""

    parse: ScreenParse
    text: str  # fenced description


@dataclass(frozen=True, slots=True)
class Prediction:
    """What the planner proposed for one step: ``action`` (grounded) or ``error``."""

    action: Action | None
    proposal: Proposal | None = None
    error: str | None = None
    calls: tuple[LLMCall, ...] = ()
    ms: float = 0.0


def gold_turn(gold: Gold, screen_text: str) -> Turn:
    """A gold step as the next steps' history shows it."""
    return Turn(gold.action.describe(), gold.action, screen_text)


class StepReplayer:
    """Asks one planner bundle for the next action on recorded screens."""

    def __init__(self, bundle: PlannerBundle, parser: ScreenParserLike | None = None, *, max_replans: int = 2,
                 examples: tuple[str, ...] = ()) -> None:
        self.bundle = bundle
        self.parser = parser
        self.max_replans = max_replans
        self.examples = examples

    def observe(self, rec: RecordedScreen) -> Observation:
        """The recorded screen parsed and described (``ValueError`` when it cannot be read)."""
        parse = rec.parse
        if parse is None:
            if self.parser is None:
                raise ValueError("this recording holds screenshots: a screen parser is needed")
            from vision.imageio import load_rgb

            assert rec.image is not None
            xml = rec.tree.read_text(encoding="utf-8", errors="replace") if rec.tree is not None else None
            parse = self.parser.parse(Screen(load_rgb(rec.image), hierarchy_xml=xml, foreground_package=rec.foreground))
        return Observation(parse, fenced(description(parse, app=rec.foreground)))

    def predict(self, goal: str, obs: Observation, history: tuple[Turn, ...], step_index: int) -> Prediction:
        """The planner's grounded action for this screen, or why there is none."""
        t0 = time.perf_counter()
        calls: list[LLMCall] = []
        try:
            proposal = self._propose(goal, obs, history, step_index, calls)
        except (PlanError, _Failed) as exc:
            calls.extend(exc.calls)
            return Prediction(None, None, exc.message, tuple(calls), (time.perf_counter() - t0) * 1000)
        except LLMError as exc:
            calls.extend(exc.calls)
            return Prediction(None, None, f"LLM: {exc}", tuple(calls), (time.perf_counter() - t0) * 1000)
        return Prediction(proposal.action, proposal, None, tuple(calls), (time.perf_counter() - t0) * 1000)

    # ---- the runner's propose phase, without a device -----------------------------------
    def _propose(self, goal: str, obs: Observation, history: tuple[Turn, ...], step_index: int,
                 calls: list[LLMCall]) -> Proposal:
        est = self.bundle.estimator
        planner = self.bundle.planner
        if not (planner.uses_latent and est is not None):
            return self._plan_and_ground(goal, obs, history, step_index, None, calls)
        commands = tuple(t.command for t in history)
        linput = LatentInput(goal=goal, screen=obs.text, previous_screen=history[-1].screen if history else "",
                             commanded=commands[-1] if commands else "", commanded_history=commands,
                             performed_history=commands[:-1])
        first = not history
        e = est.estimate(linput, None)
        calls.extend(e.calls)
        if e.complete and not first:
            return Proposal(Action.simple(ActionType.COMPLETE), rationale=e.latent.completion_reason,
                            latent=e.latent, planner=planner.name)
        proposal = self._plan_and_ground(goal, obs, history, step_index, e.latent, calls)
        comp = est.completion(linput, e.latent, proposal.action.describe(), None)
        calls.extend(comp.calls)
        if comp.complete and not first:
            return replace(proposal, action=Action.simple(ActionType.COMPLETE), latent=comp.latent)
        return replace(proposal, latent=comp.latent)

    def _plan_and_ground(self, goal: str, obs: Observation, history: tuple[Turn, ...], step_index: int,
                         latent: object, calls: list[LLMCall]) -> Proposal:
        notes: list[str] = []
        evidence: list[str] = []
        for attempt in range(self.max_replans + 1):
            ctx = PlanContext(goal=goal, parse=obs.parse, screen=obs.text, history=history,
                              latent=latent,  # type: ignore[arg-type]
                              notes=tuple(notes), examples=self.examples, step_index=step_index)
            proposal = self.bundle.planner.propose(ctx)
            calls.extend(proposal.llm_calls)
            evidence.extend(proposal.evidence)
            if proposal.action.is_terminal:
                return replace(proposal, evidence=tuple(evidence))
            try:
                g = self.bundle.grounder.ground(proposal.action, GroundContext(
                    goal, obs.parse, tuple(t.command for t in history), None))
            except GroundingError as exc:
                calls.extend(exc.calls)
                if exc.blocked:
                    raise _Failed(f"blocked: {exc.message}") from None
                evidence.append(f"re-plan {attempt + 1}: {exc.message}")
                notes.append(f"\"{proposal.action.describe()}\" is not possible: {exc.message}. "
                             f"Elements available on this screen:\n{exc.available}")
                continue
            calls.extend(g.calls)
            return replace(proposal, action=g.action, evidence=(*evidence, *g.evidence))
        raise _Failed(f"no groundable action after {self.max_replans} re-plans ({evidence[-1]})")


class _Failed(Exception):
    def __init__(self, message: str, calls: tuple[LLMCall, ...] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.calls = calls


class RecordingParser:
    """The vision pipeline for recorded screenshots: the view tree when the step has one
    (``tree``: the tree alone, as the online benchmark; ``fusion``: tree + OCR + detector),
    pixels alone (OCR, detector, icons) when it has none.  Pipelines are built on first use."""

    def __init__(self, mode: str = "tree") -> None:
        if mode not in ("tree", "fusion"):
            raise ValueError(f"parse mode must be 'tree' or 'fusion', got {mode!r}")
        self.mode = mode
        self._tree: ScreenParserLike | None = None
        self._pixels: ScreenParserLike | None = None

    def parse(self, screen: Screen) -> ScreenParse:
        from vision.config import PipelineConfig
        from vision.pipeline import ScreenParser

        if screen.hierarchy_xml:
            if self._tree is None:
                tree = self.mode == "tree"
                self._tree = ScreenParser(PipelineConfig(mode=self.mode,  # type: ignore[arg-type]
                                                         ocr="none" if tree else "rapidocr",
                                                         detector="none" if tree else "auto",
                                                         icons="none" if tree else "auto"))
            return self._tree.parse(screen)
        if self._pixels is None:
            self._pixels = ScreenParser(PipelineConfig(mode="vision"))
        return self._pixels.parse(screen)
