"""Frozen data types for the agent: actions, targets, latent state, proposals,
decisions, steps and episodes (macros: ``agent.macros.types``).

``Action`` validates itself on construction and converts to and from the
Android-in-the-Wild / Auto-UI JSON form (``to_aitw`` / ``from_aitw``).  Nothing here
talks to a device, an LLM or a database; serialisation lives in ``agent.codec``.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field, replace
from enum import Enum, IntEnum, StrEnum
from typing import Any

from agent.transient import Transient
from vision.geometry import NormPoint, Point, Size
from vision.types import ScreenParse


class ActionType(str, Enum):
    TAP = "tap"
    LONG_PRESS = "long_press"
    SWIPE = "swipe"
    TYPE = "type"
    BACK = "back"
    HOME = "home"
    ENTER = "enter"
    OPEN_APP = "open_app"
    WAIT = "wait"
    COMPLETE = "complete"
    IMPOSSIBLE = "impossible"


class AitwActionType(IntEnum):
    """Action type ids used by Android-in-the-Wild and Auto-UI."""

    TYPE = 3
    DUAL_POINT = 4
    PRESS_BACK = 5
    PRESS_HOME = 6
    PRESS_ENTER = 7
    STATUS_TASK_COMPLETE = 10
    STATUS_TASK_IMPOSSIBLE = 11


class Direction(str, Enum):
    """A finger's direction of travel on the glass (not the content's)."""

    UP = "up"
    DOWN = "down"
    LEFT = "left"
    RIGHT = "right"

    @property
    def opposite(self) -> Direction:
        return {
            Direction.UP: Direction.DOWN,
            Direction.DOWN: Direction.UP,
            Direction.LEFT: Direction.RIGHT,
            Direction.RIGHT: Direction.LEFT,
        }[self]


#: Auto-UI's canonical touch/lift points for a swipe, keyed by finger direction, in [y, x].
CANONICAL_SWIPES: dict[Direction, tuple[tuple[float, float], tuple[float, float]]] = {
    Direction.UP: ((0.8, 0.5), (0.2, 0.5)),
    Direction.DOWN: ((0.2, 0.5), (0.8, 0.5)),
    Direction.LEFT: ((0.5, 0.8), (0.5, 0.2)),
    Direction.RIGHT: ((0.5, 0.2), (0.5, 0.8)),
}

#: A dual-point gesture whose two points are closer than this (normalised) is a tap.
TAP_DISTANCE_NORM = 0.04

_NO_POINT = [-1.0, -1.0]
_GESTURES = {ActionType.TAP, ActionType.LONG_PRESS, ActionType.SWIPE}
_SIMPLE_AITW = {
    ActionType.BACK: AitwActionType.PRESS_BACK,
    ActionType.HOME: AitwActionType.PRESS_HOME,
    ActionType.ENTER: AitwActionType.PRESS_ENTER,
    ActionType.COMPLETE: AitwActionType.STATUS_TASK_COMPLETE,
    ActionType.IMPOSSIBLE: AitwActionType.STATUS_TASK_IMPOSSIBLE,
}


class NotRepresentable(ValueError):
    """The action has no form in the requested representation."""


@dataclass(frozen=True, slots=True)
class Fingerprint:
    """What identifies an element again on a changed screen (layout, size, language)."""

    text: str = ""
    label: str = ""
    resource_id: str = ""
    class_name: str = ""
    kind: str = ""
    block_caption: str = ""
    block_role: str = ""
    rel_x: float | None = None
    rel_y: float | None = None
    crop_hash: str = ""
    index_in_block: int | None = None  # ordinal among same-kind elements of its block, reading order


@dataclass(frozen=True, slots=True)
class Target:
    """What an action is aimed at: an element of the parse, a point, or words."""

    element_id: str | None = None
    point: Point | None = None
    description: str = ""
    fingerprint: Fingerprint | None = None


@dataclass(frozen=True, slots=True)
class Action:
    """One thing to do on the phone.  Invalid combinations raise ``ValueError``.

    Gestures (tap, long press, swipe) carry device-pixel points once grounded; before
    grounding a tap may carry only a ``target``.  ``direction`` on a swipe is the
    finger's direction of travel (AITW's convention): to reveal content further down a
    list the finger moves ``UP``.
    """

    type: ActionType
    touch: Point | None = None
    lift: Point | None = None
    direction: Direction | None = None
    text: str | None = None
    app: str | None = None
    target: Target | None = None
    duration_ms: int | None = None

    def __post_init__(self) -> None:
        t = self.type
        if not isinstance(t, ActionType):
            object.__setattr__(self, "type", ActionType(t))
            t = self.type
        if t in (ActionType.TAP, ActionType.LONG_PRESS):
            if self.touch is None and self.target is None:
                raise ValueError(f"{t.value} needs a touch point or a target")
            if self.lift is not None and self.lift != self.touch:
                raise ValueError(f"{t.value} cannot have a lift point different from its touch point")
        elif t is ActionType.SWIPE:
            if self.direction is None and (self.touch is None or self.lift is None):
                raise ValueError("swipe needs touch and lift points or a direction")
            if self.touch is not None and self.touch == self.lift:
                raise ValueError("swipe needs distinct touch and lift points (that would be a tap)")
        else:
            if self.touch is not None or self.lift is not None:
                raise ValueError(f"{t.value} takes no touch or lift point")
        if t is ActionType.TYPE:
            if self.text is None or self.text == "":
                raise ValueError("type needs non-empty text")
        elif self.text is not None and t is not ActionType.OPEN_APP:
            raise ValueError(f"{t.value} takes no text")
        if t is ActionType.OPEN_APP and not (self.app or "").strip():
            raise ValueError("open_app needs an app name or package")
        if self.duration_ms is not None and self.duration_ms < 0:
            raise ValueError("duration_ms must be non-negative")

    # ---- constructors -------------------------------------------------------------
    @classmethod
    def tap(cls, x: int, y: int, target: Target | None = None) -> Action:
        return cls(ActionType.TAP, touch=Point(x, y), target=target)

    @classmethod
    def long_press(cls, x: int, y: int, duration_ms: int = 800) -> Action:
        return cls(ActionType.LONG_PRESS, touch=Point(x, y), duration_ms=duration_ms)

    @classmethod
    def swipe(cls, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 300) -> Action:
        return cls(ActionType.SWIPE, touch=Point(x1, y1), lift=Point(x2, y2), duration_ms=duration_ms)

    @classmethod
    def scroll(cls, content: Direction | str, screen: Size | None = None) -> Action:
        """Scroll so that content from ``content``'s side comes into view.

        "scroll down" (see more below) is a finger moving up.  With ``screen`` the
        swipe gets Auto-UI's canonical points; without, only a direction.
        """
        finger = Direction(content).opposite
        if screen is None:
            return cls(ActionType.SWIPE, direction=finger)
        (ty, tx), (ly, lx) = CANONICAL_SWIPES[finger]
        return cls(
            ActionType.SWIPE,
            touch=NormPoint(ty, tx).to_px(screen),
            lift=NormPoint(ly, lx).to_px(screen),
            direction=finger,
            duration_ms=300,
        )

    @classmethod
    def type_text(cls, text: str, target: Target | None = None) -> Action:
        return cls(ActionType.TYPE, text=text, target=target)

    @classmethod
    def simple(cls, kind: ActionType | str) -> Action:
        return cls(ActionType(kind))

    @classmethod
    def open_app(cls, app: str) -> Action:
        return cls(ActionType.OPEN_APP, app=app)

    # ---- queries ------------------------------------------------------------------
    @property
    def is_gesture(self) -> bool:
        return self.type in _GESTURES

    @property
    def is_terminal(self) -> bool:
        return self.type in (ActionType.COMPLETE, ActionType.IMPOSSIBLE)

    @property
    def is_grounded(self) -> bool:
        """True when the action can be executed without further grounding."""
        if self.type in (ActionType.TAP, ActionType.LONG_PRESS):
            return self.touch is not None
        if self.type is ActionType.SWIPE:
            return self.touch is not None or self.direction is not None
        return True

    def finger_direction(self) -> Direction | None:
        """The swipe's main axis and sense, from its points or its direction."""
        if self.type is not ActionType.SWIPE:
            return None
        if self.touch is not None and self.lift is not None:
            dx, dy = self.lift.x - self.touch.x, self.lift.y - self.touch.y
            if abs(dy) >= abs(dx):
                return Direction.DOWN if dy > 0 else Direction.UP
            return Direction.RIGHT if dx > 0 else Direction.LEFT
        return self.direction

    def with_target(self, target: Target) -> Action:
        return replace(self, target=target)

    def describe(self) -> str:
        """A short, human-readable description of the action."""
        name = ""
        if self.target is not None:
            name = self.target.description or (self.target.element_id or "")
        t = self.type
        if t is ActionType.TAP:
            return f"tap {name}".strip() if name else f"tap at ({self.touch.x}, {self.touch.y})"  # type: ignore[union-attr]
        if t is ActionType.LONG_PRESS:
            return f"long-press {name}".strip() if name else f"long-press at ({self.touch.x}, {self.touch.y})"  # type: ignore[union-attr]
        if t is ActionType.SWIPE:
            d = self.finger_direction()
            content = d.opposite.value if d else "?"
            return f"scroll {content} (swipe {d.value if d else '?'})"
        if t is ActionType.TYPE:
            where = f" into {name}" if name else ""
            return f"type {self.text!r}{where}"
        if t is ActionType.OPEN_APP:
            return f"open {self.app}"
        return {
            ActionType.BACK: "go back",
            ActionType.HOME: "go home",
            ActionType.ENTER: "press enter",
            ActionType.WAIT: "wait",
            ActionType.COMPLETE: "task complete",
            ActionType.IMPOSSIBLE: "task impossible",
        }[t]

    # ---- AITW / Auto-UI form ------------------------------------------------------
    def to_aitw(self, screen: Size, *, canonical_scroll: bool = True) -> dict[str, Any]:
        """The AITW JSON form: ``action_type`` id, ``[y, x]`` points, ``typed_text``.

        Taps keep four decimals; swipes become Auto-UI's canonical directional points
        when ``canonical_scroll``.  A long press becomes a dual-point gesture (AITW has
        no separate type).  ``open_app`` and ``wait`` have no AITW form.
        """
        t = self.type
        if t in _GESTURES:
            if t is ActionType.SWIPE:
                d = self.finger_direction()
                if canonical_scroll or self.touch is None or self.lift is None:
                    assert d is not None
                    touch_yx, lift_yx = (list(p) for p in CANONICAL_SWIPES[d])
                else:
                    touch_yx = self.touch.to_norm(screen).as_yx()
                    lift_yx = self.lift.to_norm(screen).as_yx()
            else:
                if self.touch is None:
                    raise NotRepresentable(f"{t.value} has no point yet: ground it first")
                touch_yx = self.touch.to_norm(screen).as_yx()
                lift_yx = list(touch_yx)
            return {
                "action_type": int(AitwActionType.DUAL_POINT),
                "touch_point": touch_yx,
                "lift_point": lift_yx,
                "typed_text": "",
            }
        if t is ActionType.TYPE:
            return {
                "action_type": int(AitwActionType.TYPE),
                "touch_point": list(_NO_POINT),
                "lift_point": list(_NO_POINT),
                "typed_text": self.text or "",
            }
        if t in _SIMPLE_AITW:
            return {
                "action_type": int(_SIMPLE_AITW[t]),
                "touch_point": list(_NO_POINT),
                "lift_point": list(_NO_POINT),
                "typed_text": "",
            }
        raise NotRepresentable(f"{t.value} has no Android-in-the-Wild form")

    @classmethod
    def from_aitw(cls, data: dict[str, Any], screen: Size) -> Action:
        """Build an action from the AITW JSON form (``action_type`` may be an id or a name)."""
        raw = data.get("action_type")
        try:
            if isinstance(raw, str) and not raw.strip().lstrip("-").isdigit():
                kind = AitwActionType[raw.strip().upper()]
            else:
                kind = AitwActionType(int(raw))  # type: ignore[arg-type]
        except (KeyError, ValueError, TypeError):
            raise ValueError(f"unknown AITW action_type {raw!r}") from None
        if kind is AitwActionType.DUAL_POINT:
            touch = NormPoint.from_yx(_point_list(data.get("touch_point"), "touch_point"))
            lift = NormPoint.from_yx(_point_list(data.get("lift_point", data.get("touch_point")), "lift_point"))
            dist = ((touch.y - lift.y) ** 2 + (touch.x - lift.x) ** 2) ** 0.5
            if dist < TAP_DISTANCE_NORM:
                return cls(ActionType.TAP, touch=touch.to_px(screen))
            p1, p2 = touch.to_px(screen), lift.to_px(screen)
            swipe = cls(ActionType.SWIPE, touch=p1, lift=p2) if p1 != p2 else None
            if swipe is None:
                return cls(ActionType.TAP, touch=p1)
            return replace(swipe, direction=swipe.finger_direction())
        if kind is AitwActionType.TYPE:
            return cls(ActionType.TYPE, text=str(data.get("typed_text", "")))
        inverse = {v: k for k, v in _SIMPLE_AITW.items()}
        return cls(inverse[kind])


def _point_list(value: Any, name: str) -> list[float]:
    if isinstance(value, str):
        value = [float(v) for v in value.strip("[] ").split(",")]
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        raise ValueError(f"{name} must be [y, x], got {value!r}")
    return [float(value[0]), float(value[1])]


# ---- latent state, proposals, decisions --------------------------------------------


@dataclass(frozen=True, slots=True)
class LatentState:
    """The five latent aspects estimated each step, plus an overall confidence."""

    performed_action: str = ""
    screen_summary: str = ""
    progression: str = ""
    mistakes: str = ""
    completion: bool | None = None
    completion_reason: str = ""
    confidence: float | None = None

    ASPECTS = ("performed_action", "screen_summary", "progression", "mistakes", "completion")

    def changed_aspects(self, previous: LatentState | None) -> tuple[str, ...]:
        if previous is None:
            return tuple(a for a in self.ASPECTS if getattr(self, a) not in ("", None))
        return tuple(a for a in self.ASPECTS if getattr(self, a) != getattr(previous, a))


@dataclass(frozen=True, slots=True)
class LLMCall:
    """Accounting for one LLM request, kept with the step that made it."""

    purpose: str
    model: str
    prompt: str
    reply: str = ""
    latency_ms: float = 0.0
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    error: str | None = None
    attempt: int = 1
    #: Values replaced before the request left the machine ("<phone-1> phone number"); the
    #: prompt above is then the one sent, with the placeholders (``agent.privacy``).
    redacted: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class RiskSignal:
    """The model's own judgement that a proposed step is risky, when its adapter can say so.

    ``category`` names what the step would do (``deleting``, ``sending``, ``paying``,
    ``installing``, ``security``) or is empty; ``score`` is in [0, 1] when the model gives
    one.  ``agent.safety`` turns it into one of the signals behind a gate; it can only add
    a reason to ask, never remove one.
    """

    risky: bool
    category: str = ""
    reason: str = ""
    score: float | None = None

    def __post_init__(self) -> None:
        if self.score is not None and not 0.0 <= self.score <= 1.0:
            raise ValueError(f"risk score must be in [0, 1], got {self.score}")


@dataclass(frozen=True, slots=True)
class Proposal:
    """What the agent wants to do next, and why."""

    action: Action
    rationale: str = ""
    latent: LatentState | None = None
    evidence: tuple[str, ...] = ()
    confidence: float | None = None
    plan: tuple[str, ...] = ()
    planner: str = ""
    sensitive: bool = False
    llm_calls: tuple[LLMCall, ...] = ()
    risk: RiskSignal | None = None  # the model's own risk signal (see ``RiskSignal``)
    #: The model that proposed the step, where a run can ask more than one (escalation).
    model: str = ""
    #: Why this step went to the bigger model ("" when it did not; ``agent.planners.escalate``).
    escalated: str = ""

    @property
    def source(self) -> str:
        """Where the step came from when no model chose it: "map" (the app maps) or "screen"
        (the screen's evidence), as ``agent.knowledge.guided`` marks the planner's name
        ("zeroshot-+map"); "" for a model's step."""
        head, sep, tail = self.planner.rpartition("+")
        return tail if sep and head and tail in ("map", "screen") else ""


class DecisionKind(str, Enum):
    APPROVE = "approve"
    EDIT = "edit"
    REJECT = "reject"
    DEMONSTRATE = "demonstrate"
    ABORT = "abort"
    ESCALATE = "escalate"  # "Ask the bigger model": the same step is proposed again by the bigger model


@dataclass(frozen=True, slots=True)
class Decision:
    """The user's answer to a proposal."""

    kind: DecisionKind
    action: Action | None = None
    feedback: str = ""
    decided_by: str = "user"

    def __post_init__(self) -> None:
        if not isinstance(self.kind, DecisionKind):
            object.__setattr__(self, "kind", DecisionKind(self.kind))
        if self.kind in (DecisionKind.EDIT, DecisionKind.DEMONSTRATE) and self.action is None:
            raise ValueError(f"a {self.kind.value} decision needs the action to perform")
        if self.kind is DecisionKind.REJECT and not self.feedback.strip():
            raise ValueError("a reject decision needs feedback for the planner")

    @property
    def executes(self) -> Action | None:
        """The action that will reach the phone because of this decision, if any."""
        return self.action if self.kind in (DecisionKind.EDIT, DecisionKind.DEMONSTRATE) else None


@dataclass(frozen=True, slots=True)
class ImageRef:
    """A screenshot stored beside the database: a relative path and its SHA-256."""

    path: str
    sha256: str
    width: int
    height: int


class Autonomy(StrEnum):
    """When a run asks the user before acting.

    Older settings files and stored episodes say ``approve_all`` for ``approve``; both
    read as ``APPROVE`` (``Autonomy("approve_all") is Autonomy.APPROVE``).
    """

    APPROVE = "approve"  # every step waits for the user
    CONFIDENT = "confident"  # ask only when unconfident or sensitive
    AUTO = "auto"  # never ask (sensitive actions still ask unless allowed)

    @classmethod
    def _missing_(cls, value: object) -> Autonomy | None:
        if isinstance(value, str) and value.strip().lower() in ("approve_all", "approve-all", "approve all"):
            return cls.APPROVE
        return None


class StepOutcome(str, Enum):
    EXECUTED = "executed"
    REJECTED = "rejected"
    ABORTED = "aborted"
    FINISHED = "finished"
    ERROR = "error"


@dataclass(frozen=True, slots=True)
class Step:
    """One turn of the loop: what was seen, proposed, decided and done."""

    index: int
    screenshot: ImageRef | None = None
    parse: ScreenParse | None = None
    proposal: Proposal | None = None
    decision: Decision | None = None
    executed: Action | None = None
    outcome: StepOutcome = StepOutcome.EXECUTED
    error: str | None = None
    foreground_package: str | None = None
    started_at: float = field(default_factory=time.time)
    finished_at: float | None = None
    #: Where the step's time went, in order: ``(stage, milliseconds)`` pairs such as
    #: ``frame``, ``hierarchy`` (from the device), ``parse``, ``llm`` and ``execute``.
    timings_ms: tuple[tuple[str, float], ...] = ()
    #: What flashed on the screen after the step's action (toasts, snackbars, short dialogs).
    transients: tuple[Transient, ...] = ()

    def timing(self, stage: str) -> float | None:
        """Milliseconds spent in ``stage`` (summed if it occurs twice), or None if not timed."""
        values = [ms for name, ms in self.timings_ms if name == stage]
        return sum(values) if values else None


class EpisodeStatus(str, Enum):
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    IMPOSSIBLE = "impossible"
    ABORTED = "aborted"
    ERROR = "error"
    INTERRUPTED = "interrupted"  # the process ended mid-run (killed, Ctrl-C, input closed)


def new_id() -> str:
    return uuid.uuid4().hex[:16]


@dataclass(frozen=True, slots=True)
class Episode:
    """A run of the agent (or a user) towards one goal."""

    goal: str
    id: str = field(default_factory=new_id)
    planner: str = ""
    model: str = ""
    device: str = ""
    autonomy: Autonomy = Autonomy.APPROVE
    status: EpisodeStatus = EpisodeStatus.RUNNING
    steps: tuple[Step, ...] = ()
    started_at: float = field(default_factory=time.time)
    finished_at: float | None = None
    note: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.autonomy, Autonomy):
            object.__setattr__(self, "autonomy", Autonomy(self.autonomy))

    def with_step(self, step: Step) -> Episode:
        return replace(self, steps=(*self.steps, step))
