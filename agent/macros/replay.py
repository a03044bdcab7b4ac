"""Replaying macros robustly, as a two-way generator.

``Replayer.run(macro, params)`` yields events and receives answers through
``send()`` (the same protocol as the agent runner):

* ``AppMissing`` — the macro's app is not installed (checked before any step); final.
* ``NeedApproval`` (only with ``approve_each``) — send a ``Decision``: approve, edit
  (run ``decision.action`` instead; it becomes the step's repair), demonstrate, reject
  (skip the step) or abort.
* ``NeedDemonstration`` — the element could not be found or the step's effect was
  wrong: send the user's ``Action`` (or a list of actions, or a demonstrate
  ``Decision``); it is executed and recorded in place of the step.  Send ``None`` or an
  abort decision to give up.
* ``StepDone`` — informational; send ``None``.

The generator returns (``StopIteration.value``) a ``ReplayResult``; when steps were
repaired its ``macro`` is the next version.  ``run_unattended`` drives a replay without
a user.  The replayer talks to the device only through ``agent.device.Device``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from agent.device import Device, DeviceError, Key
from agent.execute import execute as run_action
from agent.macros.describe import toggle_inside
from agent.macros.editing import fill_parameters, next_version
from agent.macros.fingerprint import compare_signatures, id_overlap, same_screen
from agent.macros.recorder import Observation, element_under, make_step
from agent.macros.reidentify import Grounder, Match, MatchLevel, Thresholds, reidentify
from agent.types import Action, ActionType, Decision, DecisionKind, Direction, Macro, MacroStep
from vision.geometry import NormPoint, Point, Size

log = logging.getLogger(__name__)

Observe = Callable[[], Observation]


# ---- events -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AppMissing:
    app: str
    message: str


@dataclass(frozen=True, slots=True, eq=False)
class NeedApproval:
    index: int
    step: MacroStep
    action: Action
    match: Match


@dataclass(frozen=True, slots=True, eq=False)
class NeedDemonstration:
    index: int
    step: MacroStep
    reason: str
    observation: Observation


@dataclass(frozen=True, slots=True)
class EffectCheck:
    ok: bool
    verdict: str  # confirmed | plausible | unchecked | wrong_app | no_change | wrong_screen
    detail: str = ""


@dataclass(frozen=True, slots=True)
class StepReport:
    index: int
    description: str
    level: str
    element_id: str | None = None
    score: float = 0.0
    effect: str = "unchecked"
    repaired: bool = False
    skipped: bool = False


@dataclass(frozen=True, slots=True, eq=False)
class StepDone:
    report: StepReport
    action: Action | None


@dataclass(frozen=True, slots=True)
class ReplayResult:
    status: str  # succeeded | failed | aborted | app_missing
    macro: Macro
    steps: tuple[StepReport, ...] = ()
    repaired: bool = False
    message: str = ""

    @property
    def succeeded(self) -> bool:
        return self.status == "succeeded"

    @property
    def levels(self) -> tuple[str, ...]:
        return tuple(s.level for s in self.steps)


ReplayEvent = AppMissing | NeedApproval | NeedDemonstration | StepDone


# ---- helpers -------------------------------------------------------------------------------


def check_effect(step: MacroStep, before: Observation, after: Observation) -> EffectCheck:
    """Did the step do on this screen what it did when it was recorded?

    Lenient where layouts legitimately differ: a scroll may move nothing on a bigger
    screen, and a bigger screen shows more ids.  Strict where they do not: the wrong
    app in front, nothing happening where something did, or a step that started on
    the recorded screen and ended on a clearly different one.
    """
    if step.expected_package and after.package and after.package != step.expected_package:
        return EffectCheck(False, "wrong_app",
                           f"expected {step.expected_package} in front, found {after.package}")
    if not step.screen_after:
        return EffectCheck(True, "unchecked", "the recording has no after-screen")
    if step.action.type in (ActionType.SWIPE, ActionType.TYPE, ActionType.WAIT):
        return EffectCheck(True, "unchecked", f"a {step.action.type.value} step may legitimately change nothing")
    # "Nothing happened" is only trusted on structural evidence (resource ids, kinds of
    # elements): OCR'd text alone differs between two shots of the same screen.
    rec_cmp = compare_signatures(step.screen_before, step.screen_after)
    recorded_changed = rec_cmp.get("ids") is False or rec_cmp.get("kinds") is False
    now_cmp = compare_signatures(before.signature, after.signature)
    now_same = all(now_cmp.get(k) is not False for k in ("ids", "txt", "kinds")) and now_cmp.get("txt") is True
    if recorded_changed and now_same:
        return EffectCheck(False, "no_change", "the step changed the screen when recorded, but nothing changed now")
    start = id_overlap(step.screen_before, before.signature)
    end = id_overlap(step.screen_after, after.signature)
    if start is not None and start >= 0.8 and end is not None and end < 0.5:
        return EffectCheck(False, "wrong_screen",
                           "the step started on the recorded screen but led to a different one")
    cmp = compare_signatures(step.screen_after, after.signature)
    if cmp.get("txt") is True or (end is not None and end >= 0.999 and cmp.get("kinds") is True):
        return EffectCheck(True, "confirmed", "the screen matches the recorded after-screen")
    return EffectCheck(True, "plausible", "the screen differs from the recording, as expected on another layout")


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


def execute(device: Device, action: Action) -> None:
    """Perform a grounded action on a device (the agent's one executor)."""
    run_action(action, device)


def app_available(device: Device, app: str) -> bool | None:
    """Whether ``app`` (package or name) is installed; ``None`` if the device cannot tell."""
    lister = getattr(device, "installed_apps", None)
    if not callable(lister):
        return None
    try:
        apps = lister()
    except DeviceError as exc:
        log.warning("could not list installed apps: %s", exc)
        return None
    want = app.casefold()
    names: list[str] = []
    for a in apps:
        if isinstance(a, str):
            names.append(a)
        elif isinstance(a, (tuple, list)):
            names.extend(str(x) for x in a)
        else:  # objects with package/label attributes
            names.extend(str(getattr(a, k)) for k in ("package", "label", "name") if getattr(a, k, None))
    return any(n.casefold() == want for n in names)


def _unfill(action: Action, params: dict[str, str]) -> Action:
    """Put ``{name}`` back where a demonstrated text equals a parameter's value."""
    if action.type is ActionType.TYPE and action.text:
        for k, v in params.items():
            if v and action.text == v:
                return replace(action, text=f"{{{k}}}")
    return action


# ---- the replayer -----------------------------------------------------------------------------


@dataclass
class Replayer:
    """Replays macros on ``device``, observing screens through ``observe``."""

    device: Device
    observe: Observe
    grounder: Grounder | None = None
    approve_each: bool = False
    check_effects: bool = True
    recorded_size: Size | None = None  # for scaling raw points when no element was recorded
    settle: Callable[[], None] = field(default=lambda: None)
    thresholds: Thresholds = field(default_factory=Thresholds)
    start_in_app: bool = True
    after_scroll_layout_weight: float = 0.25
    skip_levels: tuple[MatchLevel, ...] = ()  # cascade levels not to use (ablations)

    def run(self, macro: Macro, params: dict[str, str] | None = None
            ) -> Generator[ReplayEvent, Any, ReplayResult]:
        params = dict(params or {})
        concrete = fill_parameters(macro, params)  # raises MissingParameter before anything runs
        return self._run(macro, concrete, params)

    # The generator proper (``run`` validates eagerly, then hands this out).
    def _run(self, macro: Macro, concrete: Macro, params: dict[str, str]
             ) -> Generator[ReplayEvent, Any, ReplayResult]:
        reports: list[StepReport] = []
        new_steps: list[MacroStep] = []
        repaired = False
        self._scrolled = False

        # the app must be there before any step runs
        if macro.app:
            ok = app_available(self.device, macro.app)
            msg = ""
            if ok is False:
                msg = f"the macro's app {macro.app!r} is not installed on this device: install it or pick another macro"
            first = concrete.steps[0].action if concrete.steps else None
            if not msg and self.start_in_app and not (first is not None and first.type is ActionType.OPEN_APP):
                try:
                    self.device.open_app(macro.app)
                    self.settle()
                except DeviceError as exc:
                    msg = f"the macro's app {macro.app!r} could not be opened ({exc.message}); is it installed?"
            if msg:
                yield AppMissing(macro.app, msg)
                return ReplayResult("app_missing", macro, message=msg)

        for i, (orig, step) in enumerate(zip(macro.steps, concrete.steps, strict=True)):
            before = self.observe()
            match, action = self._resolve(step, before)
            self._scrolled = step.action.type is ActionType.SWIPE
            # checked before asking: approval is never asked for a step that is then skipped
            if step.expect_checked is not None and match.element is not None:
                toggle = toggle_inside(match.element, before.parse)
                if toggle is not None and toggle.checked == step.expect_checked:
                    # "turn on X" when X is already on: done, and tapping would undo it
                    reports.append(StepReport(i, step.description, match.level.value, match.element.id,
                                              match.score, "already_set"))
                    new_steps.append(orig)
                    yield StepDone(reports[-1], None)
                    continue
            decision: Decision | None = None
            if action is not None and self.approve_each:
                decision = yield NeedApproval(i, step, action, match)
                if decision is None:
                    decision = Decision(DecisionKind.APPROVE)
                if decision.kind is DecisionKind.ABORT:
                    return self._finish("aborted", macro, new_steps, i, reports, repaired, "aborted by the user")
                if decision.kind is DecisionKind.REJECT:
                    reports.append(StepReport(i, step.description, "skipped", skipped=True))
                    new_steps.append(orig)
                    yield StepDone(reports[-1], None)
                    continue
                if decision.kind in (DecisionKind.EDIT, DecisionKind.DEMONSTRATE):
                    demo = [decision.action] if decision.action is not None else []
                    outcome = yield from self._apply_demo(i, step, before, demo, params, reports, new_steps)
                    repaired = repaired or outcome
                    continue

            if action is None:
                reason = f"could not find {step.description!r} on this screen ({match.evidence})"
                answer = yield NeedDemonstration(i, step, reason, before)
                demo = self._demo_actions(answer)
                if not demo:
                    return self._finish("failed", macro, new_steps, i, reports, repaired, reason)
                yield from self._apply_demo(i, step, before, demo, params, reports, new_steps)
                repaired = True
                continue

            execute(self.device, action)
            self.settle()
            after = self.observe()
            effect = check_effect(step, before, after) if self.check_effects else EffectCheck(True, "unchecked")
            if not effect.ok:
                restored = self._try_undo(before, after)
                now = self.observe() if restored else after
                reason = f"{step.description!r} had the wrong effect: {effect.detail}"
                if restored:
                    reason += " (undone with back)"
                answer = yield NeedDemonstration(i, step, reason, now)
                demo = self._demo_actions(answer)
                if not demo:
                    reports.append(StepReport(i, step.description, match.level.value,
                                              match.element.id if match.element else None, match.score, effect.verdict))
                    return self._finish("failed", macro, new_steps, i, reports, repaired, reason)
                yield from self._apply_demo(i, step, now, demo, params, reports, new_steps)
                repaired = True
                continue
            reports.append(StepReport(i, step.description, match.level.value,
                                      match.element.id if match.element else None, match.score, effect.verdict))
            new_steps.append(orig)
            yield StepDone(reports[-1], action)

        return self._finish("succeeded", macro, new_steps, len(macro.steps), reports, repaired, "")

    # ---- pieces ---------------------------------------------------------------------------------

    _scrolled: bool = False  # the previous step was a scroll: positions say less

    def _resolve(self, step: MacroStep, obs: Observation) -> tuple[Match, Action | None]:
        """Find the step's element and build the concrete action, or (no match, None)."""
        a = step.action
        t = a.type
        if t not in (ActionType.TAP, ActionType.LONG_PRESS, ActionType.SWIPE):
            return Match(None, MatchLevel.NOT_NEEDED, 1.0, "no element needed"), a
        size = obs.parse.screen_size
        has_fp = step.target is not None and step.target.fingerprint is not None
        if t is ActionType.SWIPE:
            d = a.finger_direction() or Direction.UP
            if has_fp:
                m = reidentify(step.target, obs.parse, obs.image, None, description=step.description,
                               thresholds=self.thresholds, skip=self.skip_levels)
                if m.element is not None:
                    r = m.element.rect
                    return m, _swipe_in(r.left, r.top, r.right, r.bottom, d)
            return Match(None, MatchLevel.COORDINATES, 0.0, "swipe on the screen"), Action.scroll(d.opposite, size)
        if not has_fp:
            if a.touch is None:
                return Match(None, MatchLevel.NONE, 0.0, "no point and no element recorded"), None
            p = _scaled_point(a.touch, self.recorded_size, size)
            return Match(None, MatchLevel.COORDINATES, 0.0, "no element was recorded"), replace(
                a, touch=p, lift=None if a.lift is None else p)
        m = reidentify(step.target, obs.parse, obs.image, self.grounder, description=step.description,
                       thresholds=self.thresholds, skip=self.skip_levels,
                       layout_weight=self.after_scroll_layout_weight if self._scrolled else 1.0)
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

    @staticmethod
    def _demo_actions(answer: Any) -> list[Action]:
        if answer is None:
            return []
        if isinstance(answer, Action):
            return [answer]
        if isinstance(answer, Decision):
            if answer.kind in (DecisionKind.DEMONSTRATE, DecisionKind.EDIT) and answer.action is not None:
                return [answer.action]
            return []
        if isinstance(answer, Sequence) and not isinstance(answer, str):
            return [a for a in answer if isinstance(a, Action)]
        raise TypeError(f"a demonstration must be an Action, a list of actions or a Decision, got {type(answer).__name__}")

    def _apply_demo(self, i: int, step: MacroStep, before: Observation, demo: list[Action],
                    params: dict[str, str], reports: list[StepReport], new_steps: list[MacroStep]
                    ) -> Generator[ReplayEvent, Any, bool]:
        """Execute the user's actions and record them in place of step ``i``."""
        obs = before
        for k, act in enumerate(demo):
            execute(self.device, act)
            self.settle()
            after = self.observe()
            new = make_step(_unfill(act, params), obs, after)
            if k == 0 and len(demo) == 1 and step.description and new.target is None:
                new = replace(new, description=step.description)
            new_steps.append(new)
            obs = after
        reports.append(StepReport(i, step.description, "demonstrated", repaired=True))
        yield StepDone(reports[-1], demo[-1])
        return True

    def _try_undo(self, before: Observation, after: Observation) -> bool:
        """After a wrong effect, press back once if that returns to the step's screen."""
        if same_screen(before.signature, after.signature) is not False:
            return False
        try:
            self.device.key(Key.BACK)
            self.settle()
        except DeviceError:
            return False
        return same_screen(before.signature, self.observe().signature) is True

    def _finish(self, status: str, macro: Macro, new_steps: list[MacroStep], upto: int,
                reports: list[StepReport], repaired: bool, message: str) -> ReplayResult:
        result_macro = macro
        if repaired:
            steps = tuple(new_steps + list(macro.steps[upto:]))
            result_macro = next_version(macro, steps)
        return ReplayResult(status, result_macro, tuple(reports), repaired, message)


def run_unattended(replayer: Replayer, macro: Macro, params: dict[str, str] | None = None,
                   demonstrate: Callable[[NeedDemonstration], Any] | None = None,
                   approve: Callable[[NeedApproval], Decision] | None = None) -> ReplayResult:
    """Drive a replay to its end: approve everything, and answer demonstration requests
    with ``demonstrate`` (``None`` gives up, as a user who is away would)."""
    gen = replayer.run(macro, params)
    reply: Any = None
    try:
        while True:
            ev = gen.send(reply)
            reply = None
            if isinstance(ev, NeedDemonstration):
                reply = demonstrate(ev) if demonstrate is not None else None
            elif isinstance(ev, NeedApproval):
                reply = approve(ev) if approve is not None else Decision(DecisionKind.APPROVE)
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]
