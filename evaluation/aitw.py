"""Android-in-the-Wild (AITW) action matching, as used by Auto-UI §4.3.

Works on ``AitwAction`` — an action in AITW's normalised form (``action_type`` id,
``[y, x]`` touch and lift points in 0..1, typed text) — and on annotation boxes
``(y, x, height, width)``, also normalised.  The rule:

* a dual-point gesture is a *tap* when its touch and lift points are at most
  ``SWIPE_DISTANCE`` (0.04) apart, otherwise a *swipe*;
* a tap never matches a swipe;
* two taps match when their touch points are within ``TAP_DISTANCE`` (0.14) of each
  other (Euclidean distance in normalised ``[y, x]``), or when both fall inside the
  same annotation box after it is enlarged by ``BOX_AUGMENT`` (1.4) times its size —
  0.7 of its height above and below, 0.7 of its width left and right — and clamped
  to the screen;
* two swipes match when their main axis (vertical or horizontal) is the same; the
  sense (up/down, left/right) is ignored;
* every other action matches on type alone (typed text is scored separately).

Tapwise extensions, absent from AITW: ``open_app`` (id 100, matches only the same app,
case-insensitively) and ``wait`` (id 101).  This module is pure computation: no I/O, no
device, no LLM.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from agent.types import Action, ActionType, AitwActionType, NotRepresentable
from vision.geometry import Rect, Size

#: Two tap points closer than this (normalised screen distance) match.
TAP_DISTANCE = 0.14
#: Annotation boxes grow by this fraction of their size (split over both sides).
BOX_AUGMENT = 1.4
#: A dual-point gesture whose points are at most this far apart is a tap.
SWIPE_DISTANCE = 0.04

#: Tapwise-only action ids (not part of AITW) so project episodes can be scored.
OPEN_APP_ID = 100
WAIT_ID = 101

_NO_POINT = (-1.0, -1.0)
#: Tolerance for threshold comparisons, so 4-decimal inputs are not split by float error.
_EPS = 1e-9

Box = tuple[float, float, float, float]
"""An annotation box ``(y, x, height, width)`` in normalised screen units."""


class Category(str, Enum):
    """The categories Auto-UI reports accuracies for (a dual-point gesture splits in two)."""

    CLICK = "click"
    SCROLL = "scroll"
    TYPE = "type"
    BACK = "back"
    HOME = "home"
    ENTER = "enter"
    COMPLETE = "complete"
    IMPOSSIBLE = "impossible"
    OPEN_APP = "open_app"
    WAIT = "wait"


_ID_CATEGORY = {
    int(AitwActionType.TYPE): Category.TYPE,
    int(AitwActionType.PRESS_BACK): Category.BACK,
    int(AitwActionType.PRESS_HOME): Category.HOME,
    int(AitwActionType.PRESS_ENTER): Category.ENTER,
    int(AitwActionType.STATUS_TASK_COMPLETE): Category.COMPLETE,
    int(AitwActionType.STATUS_TASK_IMPOSSIBLE): Category.IMPOSSIBLE,
    OPEN_APP_ID: Category.OPEN_APP,
    WAIT_ID: Category.WAIT,
}

_NAMED_IDS = {
    "dual_point": int(AitwActionType.DUAL_POINT),
    "click": int(AitwActionType.DUAL_POINT),
    "tap": int(AitwActionType.DUAL_POINT),
    "scroll": int(AitwActionType.DUAL_POINT),
    "swipe": int(AitwActionType.DUAL_POINT),
    "type": int(AitwActionType.TYPE),
    "press_back": int(AitwActionType.PRESS_BACK),
    "back": int(AitwActionType.PRESS_BACK),
    "press_home": int(AitwActionType.PRESS_HOME),
    "home": int(AitwActionType.PRESS_HOME),
    "press_enter": int(AitwActionType.PRESS_ENTER),
    "enter": int(AitwActionType.PRESS_ENTER),
    "status_task_complete": int(AitwActionType.STATUS_TASK_COMPLETE),
    "complete": int(AitwActionType.STATUS_TASK_COMPLETE),
    "status_task_impossible": int(AitwActionType.STATUS_TASK_IMPOSSIBLE),
    "impossible": int(AitwActionType.STATUS_TASK_IMPOSSIBLE),
    "open_app": OPEN_APP_ID,
    "wait": WAIT_ID,
}

_KNOWN_IDS = set(_ID_CATEGORY) | {int(AitwActionType.DUAL_POINT)}


def parse_action_type(raw: Any) -> int:
    """An AITW ``action_type`` given as an id (``4``, ``"4"``) or a name (``"DUAL_POINT"``)."""
    if isinstance(raw, bool):
        raise ValueError(f"unknown AITW action_type {raw!r}")
    if isinstance(raw, (int, float)) and not isinstance(raw, bool):
        value = int(raw)
    elif isinstance(raw, str) and raw.strip().lstrip("-").isdigit():
        value = int(raw.strip())
    elif isinstance(raw, str) and raw.strip().lower() in _NAMED_IDS:
        value = _NAMED_IDS[raw.strip().lower()]
    else:
        raise ValueError(
            f"unknown AITW action_type {raw!r}: use an id (3 type, 4 dual point, 5 back, 6 home, "
            "7 enter, 10 complete, 11 impossible) or its name"
        )
    if value not in _KNOWN_IDS:
        raise ValueError(f"unknown AITW action_type id {value}")
    return value


def parse_point(value: Any, name: str = "point") -> tuple[float, float]:
    """A ``[y, x]`` point from a list, a tuple or a string like ``"[0.5, 0.3]"``."""
    if value is None:
        return _NO_POINT
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return _NO_POINT
        try:
            value = [float(v) for v in text.strip("[]() ").split(",")]
        except ValueError:
            raise ValueError(f"{name} must be [y, x], got {text!r}") from None
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        raise ValueError(f"{name} must be [y, x], got {value!r}")
    try:
        y, x = float(value[0]), float(value[1])
    except (TypeError, ValueError):
        raise ValueError(f"{name} must hold two numbers, got {value!r}") from None
    if (y, x) != _NO_POINT and not (-1e-6 <= y <= 1 + 1e-6 and -1e-6 <= x <= 1 + 1e-6):
        raise ValueError(f"{name} {[y, x]} is not normalised to 0..1 (is it in pixels?)")
    return (y, x)


@dataclass(frozen=True, slots=True)
class AitwAction:
    """One action in AITW's normalised form."""

    action_type: int
    touch_yx: tuple[float, float] = _NO_POINT
    lift_yx: tuple[float, float] = _NO_POINT
    typed_text: str = ""

    def __post_init__(self) -> None:
        if self.action_type not in _KNOWN_IDS:
            raise ValueError(f"unknown AITW action_type id {self.action_type}")
        if self.is_dual_point and (self.touch_yx == _NO_POINT or self.lift_yx == _NO_POINT):
            raise ValueError("a dual-point gesture needs a touch and a lift point")

    @property
    def is_dual_point(self) -> bool:
        return self.action_type == int(AitwActionType.DUAL_POINT)

    @property
    def is_tap(self) -> bool:
        return self.is_dual_point and _dist(self.touch_yx, self.lift_yx) <= SWIPE_DISTANCE + _EPS

    @property
    def is_swipe(self) -> bool:
        return self.is_dual_point and not self.is_tap

    @property
    def category(self) -> Category:
        if self.is_dual_point:
            return Category.CLICK if self.is_tap else Category.SCROLL
        return _ID_CATEGORY[self.action_type]

    def main_axis(self) -> str | None:
        """``"vertical"`` or ``"horizontal"`` for a swipe (a tie counts as vertical)."""
        if not self.is_swipe:
            return None
        dy = abs(self.lift_yx[0] - self.touch_yx[0])
        dx = abs(self.lift_yx[1] - self.touch_yx[1])
        return "vertical" if dy >= dx else "horizontal"

    def to_dict(self) -> dict[str, Any]:
        return {
            "action_type": self.action_type,
            "touch_point": [round(self.touch_yx[0], 4), round(self.touch_yx[1], 4)],
            "lift_point": [round(self.lift_yx[0], 4), round(self.lift_yx[1], 4)],
            "typed_text": self.typed_text,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AitwAction:
        """Read Auto-UI keys (``touch_point``) or AITZ keys (``result_touch_yx``)."""
        if not isinstance(data, dict):
            raise ValueError(f"an AITW action must be a JSON object, got {type(data).__name__}")
        raw_type = _first(data, "action_type", "result_action_type")
        if raw_type is None:
            raise ValueError("AITW action has no action_type (or result_action_type)")
        kind = parse_action_type(raw_type)
        touch = parse_point(_first(data, "touch_point", "result_touch_yx", "touch_yx"), "touch_point")
        lift_raw = _first(data, "lift_point", "result_lift_yx", "lift_yx")
        lift = parse_point(lift_raw, "lift_point") if lift_raw is not None else touch
        text = _first(data, "typed_text", "result_action_text", "text")
        if kind == OPEN_APP_ID:
            text = _first(data, "app", "result_action_app_name", "typed_text", "result_action_text")
        if kind != int(AitwActionType.DUAL_POINT):
            touch = lift = _NO_POINT
        return cls(kind, touch, lift, str(text or ""))

    @classmethod
    def from_action(cls, action: Action, screen: Size) -> AitwAction:
        """Convert a project ``Action`` (device pixels) via ``Action.to_aitw``.

        Swipes keep their real points (not Auto-UI's canonical ones): only the main
        axis matters to the matcher, and real points make reports easier to read.
        """
        if action.type is ActionType.OPEN_APP:
            return cls(OPEN_APP_ID, typed_text=action.app or "")
        if action.type is ActionType.WAIT:
            return cls(WAIT_ID)
        try:
            data = action.to_aitw(screen, canonical_scroll=False)
        except NotRepresentable as exc:
            raise ValueError(f"cannot score {action.describe()!r}: {exc}") from exc
        return cls.from_dict(data)


def _first(data: dict[str, Any], *keys: str) -> Any:
    for key in keys:
        if key in data and data[key] is not None:
            return data[key]
    return None


def _dist(a: Sequence[float], b: Sequence[float]) -> float:
    return math.hypot(a[0] - b[0], a[1] - b[1])


# ---- annotation boxes ----------------------------------------------------------------


def enlarge_box(box: Box, factor: float = BOX_AUGMENT, *, clamp: str = "edges") -> tuple[float, float, float, float]:
    """The box grown by ``factor`` times its size, as ``(top, left, bottom, right)``.

    ``clamp="edges"`` clips every edge to the screen (0..1).  ``clamp="reference"``
    reproduces the AITW reference code, which clips the top/left edge at 0 and the
    grown *size* at 1 — so a box near the top or left edge keeps its full grown size
    and reaches further down or right than the geometric clip.  Use it to reproduce
    published numbers exactly.
    """
    y, x, h, w = box
    dh, dw = factor * h, factor * w
    if clamp == "reference":
        top, left = max(0.0, y - dh / 2), max(0.0, x - dw / 2)
        return (top, left, top + min(1.0, h + dh), left + min(1.0, w + dw))
    if clamp != "edges":
        raise ValueError(f"clamp must be 'edges' or 'reference', not {clamp!r}")
    return (
        max(0.0, y - dh / 2),
        max(0.0, x - dw / 2),
        min(1.0, y + h + dh / 2),
        min(1.0, x + w + dw / 2),
    )


def _inside(yx: tuple[float, float], edges: tuple[float, float, float, float]) -> bool:
    top, left, bottom, right = edges
    return top - _EPS <= yx[0] <= bottom + _EPS and left - _EPS <= yx[1] <= right + _EPS


def boxes_from_rects(rects: Sequence[Rect], screen: Size) -> tuple[Box, ...]:
    """Normalised ``(y, x, h, w)`` annotation boxes from device-pixel rects."""
    if screen.width <= 0 or screen.height <= 0:
        raise ValueError("cannot normalise boxes against an empty screen")
    return tuple(
        (r.top / screen.height, r.left / screen.width, r.height / screen.height, r.width / screen.width)
        for r in rects
        if not r.is_empty()
    )


# ---- matching --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MatchResult:
    """Whether two actions match, and the rule that decided it."""

    matched: bool
    rule: str


def taps_match(
    a: tuple[float, float], b: tuple[float, float], boxes: Sequence[Box] = (), *, clamp: str = "edges"
) -> MatchResult:
    """Two tap points match when close enough or inside the same enlarged box."""
    d = _dist(a, b)
    if d <= TAP_DISTANCE + _EPS:
        return MatchResult(True, f"taps {d:.3f} apart (<= {TAP_DISTANCE})")
    for i, box in enumerate(boxes):
        edges = enlarge_box(box, clamp=clamp)
        if _inside(a, edges) and _inside(b, edges):
            return MatchResult(True, f"taps {d:.3f} apart but both in annotation box {i}")
    where = "no annotation box holds both" if boxes else "no annotation boxes"
    return MatchResult(False, f"taps {d:.3f} apart (> {TAP_DISTANCE}) and {where}")


def match(
    gold: AitwAction,
    pred: AitwAction,
    boxes: Sequence[Box] = (),
    *,
    clamp: str = "edges",
    require_text: bool = False,
) -> MatchResult:
    """Apply the AITW rule to a predicted action against the gold one.

    ``boxes`` are the gold screen's annotation boxes (empty: only the distance rule).
    With ``require_text`` a ``type`` action also needs matching text (off by default,
    as in AITW, where typed text is scored separately).
    """
    if gold.is_dual_point and pred.is_dual_point:
        if gold.is_tap and pred.is_tap:
            return taps_match(gold.touch_yx, pred.touch_yx, boxes, clamp=clamp)
        if gold.is_swipe and pred.is_swipe:
            ga, pa = gold.main_axis(), pred.main_axis()
            if ga == pa:
                return MatchResult(True, f"swipes share the {ga} axis")
            return MatchResult(False, f"swipe axes differ ({ga} vs {pa})")
        return MatchResult(False, f"a {gold.category.value} never matches a {pred.category.value}")
    if gold.action_type != pred.action_type:
        return MatchResult(False, f"types differ ({gold.category.value} vs {pred.category.value})")
    if gold.action_type == OPEN_APP_ID and _norm_text(gold.typed_text) != _norm_text(pred.typed_text):
        return MatchResult(False, f"different apps ({gold.typed_text!r} vs {pred.typed_text!r})")
    if require_text and gold.category is Category.TYPE and not text_matches(gold.typed_text, pred.typed_text):
        return MatchResult(False, "typed text differs")
    return MatchResult(True, f"both {gold.category.value}")


_SPACE = re.compile(r"\s+")


def _norm_text(text: str) -> str:
    return _SPACE.sub(" ", text.casefold()).strip().strip("'\"")


def text_matches(gold: str, pred: str) -> bool:
    """Typed-text agreement: equal after case-folding and collapsing spaces, or one
    contained in the other (the lenient reading used by AITW evaluations).  An empty
    prediction never matches a non-empty gold text."""
    g, p = _norm_text(gold), _norm_text(pred)
    if not g or not p:
        return g == p
    return g == p or g in p or p in g


# ---- trajectories and scores -----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AitwStep:
    """One gold or predicted step: the action and (for gold) the screen's annotation boxes."""

    action: AitwAction
    boxes: tuple[Box, ...] = ()
    instruction: str = ""


@dataclass(frozen=True, slots=True)
class Trajectory:
    """A sequence of steps towards one goal, keyed by ``episode_id`` for pairing."""

    episode_id: str
    goal: str = ""
    steps: tuple[AitwStep, ...] = ()
    source: str = ""


@dataclass(frozen=True, slots=True)
class StepScore:
    episode_id: str
    index: int
    gold: Category
    pred: Category | None
    matched: bool
    rule: str
    type_correct: bool
    text_correct: bool | None = None


@dataclass(frozen=True, slots=True)
class CategoryScore:
    correct: int = 0
    total: int = 0

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.total if self.total else None


@dataclass(frozen=True)
class AitwScores:
    """Auto-UI's measures over a set of paired trajectories."""

    steps: tuple[StepScore, ...]
    episodes: int
    episode_scores: dict[str, float]
    unmatched_gold: tuple[str, ...] = ()
    unmatched_pred: tuple[str, ...] = ()
    extra_pred_steps: int = 0
    per_category: dict[str, CategoryScore] = field(default_factory=dict)

    @property
    def step_accuracy(self) -> float | None:
        """Matched steps over all gold steps (all episodes pooled)."""
        return _ratio(sum(s.matched for s in self.steps), len(self.steps))

    @property
    def episode_mean(self) -> float | None:
        """Mean over episodes of (matched steps / episode length): the screen-wise score."""
        vals = list(self.episode_scores.values())
        return sum(vals) / len(vals) if vals else None

    @property
    def episodes_all_correct(self) -> float | None:
        vals = list(self.episode_scores.values())
        return _ratio(sum(v == 1.0 for v in vals), len(vals))

    @property
    def click_accuracy(self) -> float | None:
        return self.per_category.get(Category.CLICK.value, CategoryScore()).accuracy

    @property
    def scroll_accuracy(self) -> float | None:
        return self.per_category.get(Category.SCROLL.value, CategoryScore()).accuracy

    @property
    def type_accuracy(self) -> float | None:
        """Action-type accuracy: predicted category equals the gold category."""
        return _ratio(sum(s.type_correct for s in self.steps), len(self.steps))

    @property
    def text_accuracy(self) -> float | None:
        """Over gold ``type`` steps the prediction also typed: does the text agree?"""
        judged = [s.text_correct for s in self.steps if s.text_correct is not None]
        return _ratio(sum(judged), len(judged))

    def summary(self) -> dict[str, Any]:
        return {
            "episodes": self.episodes,
            "steps": len(self.steps),
            "action_matching": self.step_accuracy,
            "episode_mean": self.episode_mean,
            "episodes_all_correct": self.episodes_all_correct,
            "click_region": self.click_accuracy,
            "scroll_direction": self.scroll_accuracy,
            "action_type": self.type_accuracy,
            "typed_text": self.text_accuracy,
            "per_category": {k: [v.correct, v.total] for k, v in sorted(self.per_category.items())},
            "unmatched_gold_episodes": list(self.unmatched_gold),
            "unmatched_pred_episodes": list(self.unmatched_pred),
            "extra_pred_steps": self.extra_pred_steps,
        }


def _ratio(n: int, d: int) -> float | None:
    return n / d if d else None


def score_episode(
    gold: Trajectory, pred: Trajectory | None, *, clamp: str = "edges", require_text: bool = False
) -> list[StepScore]:
    """Score step ``i`` of ``pred`` against step ``i`` of ``gold``; a missing predicted
    step counts as wrong.  Boxes come from the gold step (or the predicted one when
    the gold step has none)."""
    out: list[StepScore] = []
    pred_steps = pred.steps if pred is not None else ()
    for i, g in enumerate(gold.steps):
        if i >= len(pred_steps):
            out.append(StepScore(gold.episode_id, i, g.action.category, None, False, "no predicted step", False))
            continue
        p = pred_steps[i]
        boxes = g.boxes or p.boxes
        result = match(g.action, p.action, boxes, clamp=clamp, require_text=require_text)
        text_ok: bool | None = None
        if g.action.category is Category.TYPE and p.action.category is Category.TYPE:
            text_ok = text_matches(g.action.typed_text, p.action.typed_text)
        out.append(
            StepScore(
                gold.episode_id,
                i,
                g.action.category,
                p.action.category,
                result.matched,
                result.rule,
                g.action.category is p.action.category,
                text_ok,
            )
        )
    return out


def score(
    gold: Sequence[Trajectory],
    pred: Sequence[Trajectory],
    *,
    clamp: str = "edges",
    require_text: bool = False,
) -> AitwScores:
    """Pair trajectories by ``episode_id`` and compute Auto-UI's measures.

    With one gold and one predicted trajectory of different ids, the two are paired
    anyway (scoring one recording against one reference is the common case).
    Gold episodes without a prediction score zero on every step.
    """
    gold_by_id: dict[str, Trajectory] = {}
    for g in gold:
        if g.episode_id in gold_by_id:
            raise ValueError(f"gold episode id {g.episode_id!r} appears twice")
        gold_by_id[g.episode_id] = g
    pred_by_id = {p.episode_id: p for p in pred}
    if len(gold_by_id) == 1 and len(pred_by_id) == 1 and set(gold_by_id) != set(pred_by_id):
        only = next(iter(pred_by_id.values()))
        pred_by_id = {next(iter(gold_by_id)): only}
    steps: list[StepScore] = []
    per_episode: dict[str, float] = {}
    extra = 0
    for eid, g in gold_by_id.items():
        p = pred_by_id.get(eid)
        scored = score_episode(g, p, clamp=clamp, require_text=require_text)
        steps.extend(scored)
        if scored:
            per_episode[eid] = sum(s.matched for s in scored) / len(scored)
        if p is not None:
            extra += max(0, len(p.steps) - len(g.steps))
    cats: dict[str, list[int]] = {}
    for s in steps:
        c = cats.setdefault(s.gold.value, [0, 0])
        c[0] += int(s.matched)
        c[1] += 1
    return AitwScores(
        steps=tuple(steps),
        episodes=len(gold_by_id),
        episode_scores=per_episode,
        unmatched_gold=tuple(sorted(set(gold_by_id) - set(pred_by_id))),
        unmatched_pred=tuple(sorted(set(pred_by_id) - set(gold_by_id))),
        extra_pred_steps=extra,
        per_category={k: CategoryScore(v[0], v[1]) for k, v in cats.items()},
    )
