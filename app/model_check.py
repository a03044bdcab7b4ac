"""Calibrate a model on the virtual phone: "tap the X" prompts on real app screens, each
run as one agent step (parse, plan, ground) and scored against the phone's ground truth.

``grounding_prompts(n)`` picks ``n`` distinct tappable elements over several apps
(deterministically); ``run_check`` asks the model once per prompt through the normal
agent loop, stops before anything is executed, and reports the share of taps that land
inside the named element, the share of replies the agent could read, and seconds per
LLM call.  It tells a user in a minute whether a model (and which adapter or planner)
is usable.  No Qt; it neither starts servers nor prints.
"""

from __future__ import annotations

import logging
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from agent.types import ActionType

log = logging.getLogger(__name__)

#: Screens the prompts are drawn from: (app to open, or "" for the home screen).
SCREENS: tuple[str, ...] = ("", "Settings", "Clock", "Notes", "Shop", "Contacts", "Messages", "Calendar")


@dataclass(frozen=True)
class GroundingPrompt:
    """Tap ``name`` on the screen reached by opening ``app`` ("" = home screen)."""

    app: str
    name: str
    element_id: str


@dataclass(frozen=True)
class PromptResult:
    prompt: GroundingPrompt
    readable: bool
    hit: bool
    proposed: str = ""
    error: str = ""
    call_s: tuple[float, ...] = ()


@dataclass(frozen=True)
class CheckReport:
    model: str
    planner: str
    results: tuple[PromptResult, ...] = field(default_factory=tuple)
    wall_s: float = 0.0

    @property
    def n(self) -> int:
        return len(self.results)

    @property
    def accuracy(self) -> float:
        return sum(r.hit for r in self.results) / self.n if self.n else 0.0

    @property
    def parseable(self) -> float:
        return sum(r.readable for r in self.results) / self.n if self.n else 0.0

    @property
    def seconds_per_call(self) -> float:
        calls = [s for r in self.results for s in r.call_s]
        return statistics.fmean(calls) if calls else 0.0

    @property
    def calls(self) -> int:
        return sum(len(r.call_s) for r in self.results)


def _name(el, truth) -> str:  # type: ignore[no-untyped-def]
    """What a person calls a tappable element: its text or label, else the first text inside it."""
    if el.text or el.label:
        return str(el.text or el.label)
    inner = [e for e in truth.elements if e is not el and (e.text or e.label) and el.rect.contains_rect(e.rect)]
    if inner:
        first = min(inner, key=lambda e: (e.rect.top, e.rect.left))
        return str(first.text or first.label)
    return ""


def _open(phone, app: str) -> None:  # type: ignore[no-untyped-def]
    phone.reset({})
    if app:
        phone.open_app(app)


def _candidates(phone, app: str) -> list[GroundingPrompt]:  # type: ignore[no-untyped-def]
    _open(phone, app)
    truth = phone.ground_truth()
    named = [(e, _name(e, truth)) for e in truth.elements if e.clickable and not getattr(e, "covered", False)]
    counts: dict[str, int] = {}
    for _, n in named:
        counts[n.lower()] = counts.get(n.lower(), 0) + 1
    out = []
    for e, n in named:
        if 2 <= len(n) <= 40 and counts[n.lower()] == 1 and e.rect.width >= 20 and e.rect.height >= 20:
            out.append(GroundingPrompt(app, n, e.id))
    return out


def grounding_prompts(n: int = 30) -> list[GroundingPrompt]:
    """``n`` distinct prompts spread over ``SCREENS``: round-robin over the screens, taking
    each screen's candidates evenly spaced through the list."""
    from phone.virtual.phone import VirtualPhone

    phone = VirtualPhone(seed=0)
    try:
        pools = [_candidates(phone, app) for app in SCREENS]
    finally:
        phone.close()
    picked: list[GroundingPrompt] = []
    per_screen = [p[:: max(1, len(p) // max(1, -(-n // len(SCREENS))))] for p in pools]
    i = 0
    while len(picked) < n and any(per_screen):
        pool = per_screen[i % len(per_screen)]
        if pool:
            picked.append(pool.pop(0))
        i += 1
    if len(picked) < n:
        rest = [p for pool in pools for p in pool if p not in picked]
        picked += rest[: n - len(picked)]
    return picked[:n]


Progress = Callable[[int, int, PromptResult], None]


def run_check(client, planner_name: str, prompts: list[GroundingPrompt], *, send_screenshot: bool = False,  # type: ignore[no-untyped-def]
              progress: Progress | None = None, constrained: bool = True) -> CheckReport:
    """One agent step per prompt with ``planner_name``; nothing is executed on the phone.
    ``constrained``: structured replies where the server enforces schemas (as a run does by default)."""
    from agent.events import AwaitingDecision, ErrorEvent, Proposed, RunSettings
    from agent.planners import make_planner
    from agent.runner import drive, run_episode
    from agent.types import Decision, DecisionKind
    from app.compose import app_names
    from phone.virtual.phone import VirtualPhone
    from vision.pipeline import PipelineConfig, ScreenParser

    parser = ScreenParser(PipelineConfig(mode="tree"))
    phone = VirtualPhone(seed=0)
    planner = make_planner(planner_name, client, constrained=constrained, apps=app_names(phone))
    settings = RunSettings(max_steps=1, max_wait_s=0.0, send_screenshot=send_screenshot, max_replans=0,
                           max_consecutive_errors=1, model=str(getattr(client, "model", "")))
    results: list[PromptResult] = []
    t0 = time.perf_counter()
    try:
        for i, gp in enumerate(prompts):
            _open(phone, gp.app)
            truth = phone.ground_truth()
            target = next((e for e in truth.elements if e.id == gp.element_id), None)
            goal = f"Tap {gp.name}" if gp.name[:1].isupper() or gp.name[:1].isdigit() else f"Tap the {gp.name}"
            proposal = None
            error = ""
            calls: list[float] = []
            for ev in drive(run_episode(goal, phone, parser, planner, None, settings=settings),
                            lambda ev: Decision(DecisionKind.ABORT)):
                if isinstance(ev, Proposed):
                    proposal = ev.proposal
                    calls += [c.latency_ms / 1000 for c in ev.proposal.llm_calls]
                elif isinstance(ev, ErrorEvent):
                    error = ev.message
                    calls += [c.latency_ms / 1000 for c in ev.calls]
                elif isinstance(ev, AwaitingDecision):
                    pass
            hit = False
            described = ""
            if proposal is not None:
                described = proposal.action.describe()
                touch = proposal.action.touch
                if proposal.action.type in (ActionType.TAP, ActionType.LONG_PRESS) and touch is not None and target:
                    r = target.rect
                    hit = r.left <= touch.x < r.right and r.top <= touch.y < r.bottom
            result = PromptResult(gp, proposal is not None, hit, described, error, tuple(calls))
            results.append(result)
            if progress:
                progress(i + 1, len(prompts), result)
    finally:
        phone.close()
    return CheckReport(str(getattr(client, "model", "")), planner_name, tuple(results), time.perf_counter() - t0)
