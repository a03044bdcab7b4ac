"""A planner whose proposals come from a recorded macro, so a replay is an ordinary run
of ``agent.runner.run_episode``: the same events, approval, safety checks, stored steps.

Each ``propose`` first settles what happened to the previous proposal (the runner's step
events are handed over through ``heard``) and then proposes the next thing to do:

* a *setup* step before the recording starts (open the macro's app, unless the first
  step opens an app or goes home), or an ``impossible`` answer when the app is not there;
* for a step that launches an app fresh (``agent.macros.start``): open it, Back until
  it is left, open it again, so it shows its first screen wherever it was left;
* the next recorded step, its element found again on this screen by the cascade
  (``agent.macros.reidentify``) and its action aimed at it, with no model call; the
  proposal says in words how the element was found;
* where the cascade finds nothing, or finds it ambiguously (``agent.macros.heal.doubt``),
  a *healed* step: one grounding call asks the model for the element (``healer``), and
  the step aimed at it is put to the user whatever the autonomy; approved, and with its
  effect, it goes into the next version with how it was healed (``MacroStep.healed``);
  turned down (or with no healer, or nothing fits), the step needs the user;
* a *back* press after a step whose effect was wrong (the runner executes it like any
  step), then a *needs you* proposal: the runner's "stuck" convention (evidence starting
  with ``blocked``) makes it wait for the user, who demonstrates the step, skips it
  (reject) or aborts; Approve means nothing there and only asks again;
* ``complete`` once every step is settled.

A toggle step whose switch is already in the recorded end state is settled without a
runner step (tapping would undo it); its report says so.  Steps the user demonstrated or
edited replace the recorded ones in the next version of the macro (``result``).

The planner keeps per-replay state, so one object serves one replay.  It never touches
the device: what the screens looked like comes from ``Eyes``, the parser wrapper the
replay hands the runner.  No Qt, no I/O.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace

from agent.cost import HEALED
from agent.events import ErrorEvent as RunError
from agent.events import Event, Executed, Rejected, StepEvent
from agent.grounding.base import aim_at
from agent.macros.describe import toggle_inside
from agent.macros.effects import EffectCheck, StepReport, check_effect
from agent.macros.fingerprint import same_screen
from agent.macros.heal import Healer, doubt
from agent.macros.recorder import Observation, element_under, make_step
from agent.macros.reidentify import Grounder, Match, MatchLevel, Thresholds, reidentify
from agent.macros.start import MAX_BACKS, is_fresh_launch, is_known_start
from agent.macros.types import HealNote, Macro, MacroStep
from agent.macros.words import level_words
from agent.planners.base import ASK_USER, PlanContext
from agent.runner import ScreenParserLike
from agent.types import (
    Action,
    ActionType,
    DecisionKind,
    Direction,
    LLMCall,
    Proposal,
    Target,
)
from vision.geometry import NormPoint, Point, Size
from vision.types import Element, Screen, ScreenParse

log = logging.getLogger(__name__)

NAME = "macro"
#: Evidence prefix the runner reads as "the agent is stuck: ask the user" (see ``agent.runner``).
NEEDS_YOU = "blocked: "


def needs_you(proposal: Proposal | None) -> bool:
    """A macro proposal that waits for the user to demonstrate, skip or abort the step."""
    return (proposal is not None and proposal.planner == NAME
            and any(e.startswith(NEEDS_YOU) for e in proposal.evidence))


@dataclass
class Eyes:
    """The parser handed to the runner: parses, and keeps the last screen's pixels and app
    in front so the planner can compare fingerprints and check effects."""

    parser: ScreenParserLike
    last: Observation | None = None

    def parse(self, screen: Screen) -> ScreenParse:
        parse = self.parser.parse(screen)
        self.last = Observation(parse, screen.image, screen.foreground_package)
        return parse

    def seen(self, parse: ScreenParse) -> Observation:
        last = self.last
        return last if last is not None and last.parse is parse else Observation(parse)


@dataclass
class _Pending:
    """The planner's last proposal and, once heard, what became of it."""

    kind: str  # setup | step | undo | needs_you | finish
    run_step: int
    index: int  # the macro step (setup and finish: -1)
    before: Observation
    match: Match | None = None
    reason: str = ""
    outcome: str = ""  # executed | rejected | error
    decided: DecisionKind | None = None
    action: Action | None = None
    error: str = ""
    heal: HealNote | None = None  # a healed step: how, once the user approves


@dataclass
class MacroPlanner:
    """Proposes a macro's steps one by one (see the module docstring)."""

    macro: Macro  # as stored (parameters as ``{name}``)
    concrete: Macro  # parameters filled in
    eyes: Eyes
    params: dict[str, str] = field(default_factory=dict)
    grounder: Grounder | None = None
    thresholds: Thresholds = field(default_factory=Thresholds)
    check_effects: bool = True
    recorded_size: Size | None = None
    start_in_app: bool = True
    missing_app: str = ""  # set before the run when the app is not installed
    after_scroll_layout_weight: float = 0.25
    skip_levels: tuple[MatchLevel, ...] = ()
    healer: Healer | None = None  # asked when the cascade misses or is unsure (one model call)
    # ---- per-replay state ----
    cursor: int = 0
    reports: list[StepReport] = field(default_factory=list)
    new_steps: list[MacroStep] = field(default_factory=list)
    repaired: bool = False
    failure: str = ""  # why the replay waits for the user (kept when the user gives up)
    asked: dict[int, int] = field(default_factory=dict)  # runner step -> macro step
    _pending: _Pending | None = None
    wrong_effect: StepReport | None = None  # a step with the wrong effect, while the user is asked
    _setup_done: bool = False
    _scrolled: bool = False
    _unwind: int | None = None  # Back presses so far while launching an app fresh
    healed: int = 0  # steps healed and approved in this replay
    _no_heal: set[int] = field(default_factory=set)  # steps whose heal was turned down (or found nothing)
    _calls: tuple[LLMCall, ...] = ()  # a heal's calls that found nothing, for the next proposal

    name = NAME
    uses_latent = False

    # ---- the runner's side -------------------------------------------------------------
    def heard(self, event: Event) -> None:
        """The runner's step events, so the next proposal knows what became of the last."""
        p = self._pending
        if p is None or not isinstance(event, StepEvent) or event.step != p.run_step:
            return
        if isinstance(event, Executed):
            p.outcome, p.action = "executed", event.action
            p.decided = event.record.decision.kind if event.record.decision is not None else DecisionKind.APPROVE
        elif isinstance(event, Rejected):
            p.outcome = "rejected"
        elif isinstance(event, RunError):
            p.outcome, p.error = "error", event.message

    def propose(self, ctx: PlanContext) -> Proposal:
        obs = self.eyes.seen(ctx.parse)
        follow_up = self._settle(obs, ctx.step_index)
        if follow_up is not None:
            return follow_up
        if self.missing_app:
            return self._offer("finish", ctx.step_index, -1, obs, Action.simple(ActionType.IMPOSSIBLE),
                               self.missing_app)
        steps = self.concrete.steps
        if not self._setup_done:
            self._setup_done = True
            first = steps[0].action if steps else None
            known_start = bool(steps) and (first is not None and first.type is ActionType.OPEN_APP
                                           or is_known_start(steps[0]))
            if self.macro.app and self.start_in_app and not known_start:
                return self._offer("setup", ctx.step_index, -1, obs, Action.open_app(self.macro.app),
                                   f"Begin in {self.macro.app}: open the app first")
        while self.cursor < len(steps):
            step = steps[self.cursor]
            if is_fresh_launch(step):
                return self._fresh_launch(step, obs, ctx.step_index)
            match, action = self._resolve(step, obs)
            if self._already_set(step, match, obs):
                continue
            unsure = doubt(step, match, obs, self.thresholds) if action is not None else ""
            if action is None or unsure:
                healed = self._heal(step, obs, ctx, unsure or match.evidence)
                if healed is not None:
                    return healed
                reason = (f"{step.description!r} is {unsure}" if unsure
                          else f"could not find {step.description!r} on this screen ({match.evidence})")
                return self._needs_you(ctx.step_index, obs, reason)
            self._scrolled = step.action.type is ActionType.SWIPE
            found = level_words(match.level.value)
            proposal = self._offer("step", ctx.step_index, self.cursor, obs, action,
                                   f"Step {self.cursor + 1} of {len(steps)}: {step.description} — {found}",
                                   match=match)
            return replace(proposal, confidence=match.score if match.found else 1.0,
                           evidence=(f"re-found by {match.level.value} (score {match.score:.2f}): {match.evidence}",))
        done = f"all {len(steps)} steps of “{self.macro.name}” done"
        return self._offer("finish", ctx.step_index, -1, obs, Action.simple(ActionType.COMPLETE), done)

    def _heal(self, step: MacroStep, obs: Observation, ctx: PlanContext, missed: str) -> Proposal | None:
        """The step aimed at the element the model picks for it, put to the user; None when
        there is no healer, this step's heal was turned down, or the model found nothing."""
        if self.healer is None or step.target is None or step.target.fingerprint is None \
                or self.cursor in self._no_heal:
            return None
        answer = self.healer.heal(step, obs.parse, missed, ctx.cancel)
        if answer.element is None:
            self._no_heal.add(self.cursor)
            self._calls = answer.calls  # counted with the question that follows
            return None
        el = answer.element
        action = _aimed_at(step.action, el, obs.parse, el.display_name or step.description)
        chose = el.display_name or el.kind.value
        match = Match(el, MatchLevel.LLM, 0.5, f"the model chose {chose!r}: {answer.reason}")
        n = len(self.concrete.steps)
        proposal = self._offer("step", ctx.step_index, self.cursor, obs, action,
                               f"Step {self.cursor + 1} of {n}: {step.description} — healed: the model chose "
                               f"“{chose}” ({missed})", match=match)
        assert self._pending is not None
        self._pending.heal = HealNote(missed, chose, answer.model)
        return replace(proposal, confidence=0.5, llm_calls=answer.calls, evidence=(
            f"{HEALED}the recorded element was not found again ({missed}); the model chose “{chose}” "
            f"({answer.reason})",
            f"{ASK_USER}a healed step: check that “{chose}” is the element “{step.description}” means"))

    def _fresh_launch(self, step: MacroStep, obs: Observation, run_step: int) -> Proposal:
        """Open the app, press Back until it is left, open it again: its first screen."""
        app = step.action.app or ""
        n = len(self.concrete.steps)
        if self._unwind is None:
            self._unwind = 0
            return self._offer("setup", run_step, self.cursor, obs, Action.open_app(app),
                               f"Step {self.cursor + 1} of {n}: {step.description} — open it, then leave it with Back")
        if obs.package == app and self._unwind < MAX_BACKS:
            self._unwind += 1
            return self._offer("setup", run_step, self.cursor, obs, Action.simple(ActionType.BACK),
                               f"Step {self.cursor + 1} of {n}: leaving {app} so that it opens on its first screen")
        self._unwind = None
        match = Match(None, MatchLevel.NOT_NEEDED, 1.0, "opened on its first screen")
        return self._offer("step", run_step, self.cursor, obs, Action.open_app(app),
                           f"Step {self.cursor + 1} of {n}: {step.description}", match=match)

    # ---- what became of the last proposal ----------------------------------------------------
    def _settle(self, obs: Observation, run_step: int) -> Proposal | None:
        p, self._pending = self._pending, None
        if p is None:
            return None
        if p.kind == "setup":
            if p.outcome == "error":
                self.missing_app = (f"the macro's app {self.macro.app!r} could not be opened ({p.error}); "
                                    "is it installed?")
            return None
        if p.kind == "undo":
            reason = p.reason + (" (undone with back)" if same_screen(p.before.signature, obs.signature) is True
                                 else "")
            return self._needs_you(run_step, obs, reason)
        if p.outcome == "rejected" and p.heal is not None:  # the model's choice was wrong: the user shows it
            self._no_heal.add(p.index)
            return self._needs_you(run_step, obs, f"the model's choice for {self._words(p.index)!r} "
                                                  f"(“{p.heal.chose}”) was turned down")
        if p.outcome == "rejected":
            self._report(StepReport(p.index, self._words(p.index), "skipped", skipped=True))
            self.new_steps.append(self.macro.steps[p.index])
            self.cursor += 1
            self.failure = ""
            return None
        if p.outcome != "executed" or p.action is None:
            if p.kind == "needs_you":  # asked again (an error, or Approve where nothing can be approved)
                return self._needs_you(run_step, obs, p.reason)
            return None  # an error: the step is proposed again on the screen as it is now
        if p.decided in (DecisionKind.EDIT, DecisionKind.DEMONSTRATE):
            self._repair(p, obs)
            return None
        if p.kind == "needs_you":
            return self._needs_you(run_step, obs, p.reason)
        return self._check(p, obs, run_step)

    def _check(self, p: _Pending, obs: Observation, run_step: int) -> Proposal | None:
        """An executed recorded step: did it do what it did when recorded?"""
        step = self.concrete.steps[p.index]
        effect = check_effect(step, p.before, obs) if self.check_effects else EffectCheck(True, "unchecked")
        m = p.match or Match(None, MatchLevel.NOT_NEEDED, 1.0)
        report = StepReport(p.index, step.description, m.level.value, m.element.id if m.element else None,
                            m.score, effect.verdict, expect_checked=step.expect_checked)
        if effect.ok:
            if p.heal is not None:  # approved and did what the recording did: the next version keeps it
                report = replace(report, level="healed", repaired=True)
                self.new_steps.append(self._healed_step(p, obs))
                self.repaired = True
                self.healed += 1
            else:
                self.new_steps.append(self.macro.steps[p.index])
            self._report(report)
            self.cursor += 1
            return None
        self.wrong_effect = report  # reported only if the user gives up on the step
        reason = f"{step.description!r} had the wrong effect: {effect.detail}"
        if same_screen(p.before.signature, obs.signature) is False:
            return self._offer("undo", run_step, p.index, p.before, Action.simple(ActionType.BACK),
                               f"Step {p.index + 1} had the wrong effect: press Back to undo it", reason=reason)
        return self._needs_you(run_step, obs, reason)

    def _healed_step(self, p: _Pending, obs: Observation) -> MacroStep:
        """The recorded step re-made on the element the model found, saying how it was healed."""
        assert p.action is not None and p.heal is not None
        step = self.macro.steps[p.index]
        new = make_step(_unfill(p.action, self.params), p.before, obs)
        return replace(new, description=step.description or new.description, healed=p.heal,
                       expect_checked=step.expect_checked if step.expect_checked is not None else new.expect_checked)

    def _repair(self, p: _Pending, obs: Observation) -> None:
        """The user edited or demonstrated the step: it replaces the recorded one."""
        assert p.action is not None
        step = self.macro.steps[p.index]
        new = make_step(_unfill(p.action, self.params), p.before, obs)
        if step.description and new.target is None:
            new = replace(new, description=step.description)
        self.new_steps.append(new)
        self._report(StepReport(p.index, step.description, "demonstrated", repaired=True))
        self.repaired = True
        self.failure = ""
        self.cursor += 1

    # ---- building proposals ------------------------------------------------------------------
    def _offer(self, kind: str, run_step: int, index: int, before: Observation, action: Action, words: str,
               *, match: Match | None = None, reason: str = "") -> Proposal:
        self._pending = _Pending(kind, run_step, index, before, match, reason)
        if index >= 0:
            self.asked[run_step] = index
        return Proposal(action, rationale=words, planner=NAME, confidence=1.0)

    def _needs_you(self, run_step: int, obs: Observation, reason: str) -> Proposal:
        self.failure = reason
        index = self.cursor
        proposal = self._offer("needs_you", run_step, index, obs, Action.simple(ActionType.WAIT),
                               f"Step {index + 1} needs you: {reason}. Show the step on the mirror, skip it or abort.",
                               reason=reason)
        calls, self._calls = self._calls, ()
        return replace(proposal, confidence=0.0, evidence=(NEEDS_YOU + reason,), llm_calls=calls)

    def _report(self, report: StepReport) -> None:
        self.reports.append(report)
        self.wrong_effect = None
        log.debug("macro step %d: %s", report.index + 1, report.words)

    def _words(self, index: int) -> str:
        return self.concrete.steps[index].description

    def _already_set(self, step: MacroStep, match: Match, obs: Observation) -> bool:
        """"Turn on X" when X is already on: settled, since tapping would undo it."""
        if step.expect_checked is None or match.element is None:
            return False
        toggle = toggle_inside(match.element, obs.parse)
        if toggle is None or toggle.checked != step.expect_checked:
            return False
        self._report(StepReport(self.cursor, step.description, match.level.value, match.element.id, match.score,
                                "already_set", expect_checked=step.expect_checked))
        self.new_steps.append(self.macro.steps[self.cursor])
        self.cursor += 1
        return True

    def _resolve(self, step: MacroStep, obs: Observation) -> tuple[Match, Action | None]:
        return resolve(step, obs, grounder=self.grounder, thresholds=self.thresholds, skip=self.skip_levels,
                       recorded_size=self.recorded_size,
                       layout_weight=self.after_scroll_layout_weight if self._scrolled else 1.0)


# ---- finding a step's element and aiming its action ------------------------------------------


def resolve(step: MacroStep, obs: Observation, *, grounder: Grounder | None = None,
            thresholds: Thresholds | None = None, skip: tuple[MatchLevel, ...] = (),
            recorded_size: Size | None = None, layout_weight: float = 1.0) -> tuple[Match, Action | None]:
    """Find the step's element on ``obs`` and build the concrete action, or (no match, None)."""
    a = step.action
    t = a.type
    if t not in (ActionType.TAP, ActionType.LONG_PRESS, ActionType.SWIPE):
        if t is ActionType.TYPE and a.target is not None and a.target.point is None:
            a = replace(a, target=None)  # typed into the focused field, as recorded
        return Match(None, MatchLevel.NOT_NEEDED, 1.0, "no element needed"), a
    size = obs.parse.screen_size
    has_fp = step.target is not None and step.target.fingerprint is not None
    if t is ActionType.SWIPE:
        d = a.finger_direction() or Direction.UP
        if has_fp:
            m = reidentify(step.target, obs.parse, obs.image, None, description=step.description,
                           thresholds=thresholds, skip=skip)
            if m.element is not None:
                r = m.element.rect
                return m, _swipe_in(r.left, r.top, r.right, r.bottom, d)
        return Match(None, MatchLevel.COORDINATES, 0.0, "swipe on the screen"), Action.scroll(d.opposite, size)
    if not has_fp:
        if a.touch is None:
            return Match(None, MatchLevel.NONE, 0.0, "no point and no element recorded"), None
        p = _scaled_point(a.touch, recorded_size, size)
        return Match(None, MatchLevel.COORDINATES, 0.0, "no element was recorded"), replace(
            a, touch=p, lift=None if a.lift is None else p)
    m = reidentify(step.target, obs.parse, obs.image, grounder, description=step.description,
                   thresholds=thresholds, skip=skip, layout_weight=layout_weight)
    if m.element is None:
        return m, None
    el = m.element
    if not (el.clickable or el.checkable):
        # a label inside a row: act on (and check the toggle of) the row it belongs to
        c0 = el.rect.center
        holder = element_under(obs.parse, c0.x, c0.y)
        if holder is not None and holder.rect.contains_rect(el.rect):
            el = holder
            m = replace(m, element=holder)
    c = el.rect.center
    return m, replace(a, touch=c, lift=None if a.lift is None else c)


def _scaled_point(p: Point, recorded: Size | None, now: Size) -> Point:
    if recorded is None or recorded.width == 0 or recorded.height == 0:
        return Point(min(p.x, now.width - 1), min(p.y, now.height - 1))
    return NormPoint(y=min(1.0, p.y / recorded.height), x=min(1.0, p.x / recorded.width)).to_px(now)


def _swipe_in(rect_left: int, rect_top: int, rect_right: int, rect_bottom: int, d: Direction) -> Action:
    cx, cy = (rect_left + rect_right) // 2, (rect_top + rect_bottom) // 2
    h, w = rect_bottom - rect_top, rect_right - rect_left
    if d is Direction.UP:
        return Action.swipe(cx, rect_top + int(h * 0.75), cx, rect_top + int(h * 0.25))
    if d is Direction.DOWN:
        return Action.swipe(cx, rect_top + int(h * 0.25), cx, rect_top + int(h * 0.75))
    if d is Direction.LEFT:
        return Action.swipe(rect_left + int(w * 0.75), cy, rect_left + int(w * 0.25), cy)
    return Action.swipe(rect_left + int(w * 0.25), cy, rect_left + int(w * 0.75), cy)


def _aimed_at(action: Action, el: Element, parse: ScreenParse, description: str) -> Action:
    """A healed step's action moved onto ``el``: a tap where taps on it go (``aim_at``), a
    swipe inside its box in the recorded direction (as ``resolve`` aims a re-found swipe)."""
    if action.type is ActionType.SWIPE:
        r = el.rect
        swipe = _swipe_in(r.left, r.top, r.right, r.bottom, action.finger_direction() or Direction.UP)
        return replace(swipe, target=Target(element_id=el.id, point=swipe.touch, description=description))
    aimed = aim_at(replace(action, target=Target(description=description)), el, parse)
    return replace(aimed, lift=None if action.lift is None else aimed.touch)


def _unfill(action: Action, params: dict[str, str]) -> Action:
    """Put ``{name}`` back where a demonstrated text equals a parameter's value."""
    if action.type is ActionType.TYPE and action.text:
        for k, v in params.items():
            if v and action.text == v:
                return replace(action, text=f"{{{k}}}")
    return action

