"""What every GUI-model adapter shares: coordinate conventions, image-size rules, the
parsed reply, and the base class the families fill in.

A GUI model (UI-TARS, AutoGLM, Qwen3-VL ...) was trained on one prompt layout, one reply
grammar and one coordinate convention; reading its reply with another family's rules is
the commonest cause of a model that "clicks nowhere".  An ``Adapter`` holds those three
facts for one family: ``system_prompt``/``user_prompt`` lay the request out,
``parse`` reads a reply into an ``AdapterReply`` (intent + action in device pixels), and
``coords`` converts between the model's numbers and device pixels.  Adapters are pure:
no I/O, no LLM calls, no Qt.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum

from agent.types import Action, ActionType, Direction, Point
from vision.geometry import Size


class AdapterError(ValueError):
    """A reply does not follow the family's documented grammar; the message says why."""


class CoordSpace(str, Enum):
    """How a family writes a screen position."""

    NORM_1000 = "0-1000"  # x/1000 of the width (AutoGLM, AgentCPM-GUI, GELab)
    NORM_999 = "0-999"  # x/999 of the width (Qwen3-VL, MAI-UI, UI-Venus)
    RESIZED_PX = "resized-pixels"  # pixels of the image after the processor's resize (Qwen2.5-VL based)
    UNIT = "0-1"  # fractions of the width and height
    SCREEN_PX = "screen-pixels"  # device pixels


@dataclass(frozen=True)
class ImageRule:
    """How the model's image processor resizes a screenshot: both sides become multiples
    of ``factor`` and the pixel count is kept within [min_pixels, max_pixels], the aspect
    ratio as close as possible (the Qwen-VL "smart resize" rule)."""

    factor: int = 28
    min_pixels: int = 4 * 28 * 28
    max_pixels: int = 16384 * 28 * 28

    def resized(self, size: Size) -> Size:
        h, w, f = size.height, size.width, self.factor
        if h <= 0 or w <= 0:
            raise ValueError("cannot resize an empty image")
        hb = max(f, round(h / f) * f)
        wb = max(f, round(w / f) * f)
        if hb * wb > self.max_pixels:
            beta = math.sqrt(h * w / self.max_pixels)
            hb = max(f, math.floor(h / beta / f) * f)
            wb = max(f, math.floor(w / beta / f) * f)
        elif hb * wb < self.min_pixels:
            beta = math.sqrt(self.min_pixels / (h * w))
            hb = math.ceil(h * beta / f) * f
            wb = math.ceil(w * beta / f) * f
        return Size(wb, hb)


@dataclass(frozen=True)
class Coords:
    """A family's coordinate convention, with the image rule when it counts resized pixels."""

    space: CoordSpace
    image: ImageRule | None = None

    def _scale(self, screen: Size) -> tuple[float, float]:
        """Model units per device pixel, along x and y."""
        if self.space is CoordSpace.NORM_1000:
            return 1000 / screen.width, 1000 / screen.height
        if self.space is CoordSpace.NORM_999:
            return 999 / screen.width, 999 / screen.height
        if self.space is CoordSpace.UNIT:
            return 1 / screen.width, 1 / screen.height
        if self.space is CoordSpace.RESIZED_PX:
            r = (self.image or ImageRule()).resized(screen)
            return r.width / screen.width, r.height / screen.height
        return 1.0, 1.0

    def to_screen(self, x: float, y: float, screen: Size) -> Point:
        """Device pixel for the model's (x, y), clamped onto the screen."""
        sx, sy = self._scale(screen)
        px = min(max(0, round(x / sx)), screen.width - 1)
        py = min(max(0, round(y / sy)), screen.height - 1)
        return Point(px, py)

    def from_screen(self, p: Point, screen: Size) -> tuple[float, float]:
        """The model's numbers for a device pixel (what it should answer to hit ``p``)."""
        sx, sy = self._scale(screen)
        if self.space is CoordSpace.UNIT:
            return round(p.x * sx, 3), round(p.y * sy, 3)
        return float(round(p.x * sx)), float(round(p.y * sy))

    def describe(self, screen: Size | None = None) -> str:
        if self.space is CoordSpace.RESIZED_PX and screen is not None:
            r = (self.image or ImageRule()).resized(screen)
            return f"pixels of the {r.width}x{r.height} resized screenshot"
        return {
            CoordSpace.NORM_1000: "0-1000 of the width and height",
            CoordSpace.NORM_999: "0-999 of the width and height",
            CoordSpace.RESIZED_PX: "pixels of the resized screenshot",
            CoordSpace.UNIT: "fractions (0-1) of the width and height",
            CoordSpace.SCREEN_PX: "screen pixels",
        }[self.space]


class Intent(str, Enum):
    """What the model wants: act on the phone, or hand over to the user."""

    ACT = "act"
    ASK_USER = "ask_user"  # a question for the user; nothing happens on the phone
    TAKE_OVER = "take_over"  # the user must do something by hand (login, captcha)
    DONE = "done"
    IMPOSSIBLE = "impossible"


@dataclass(frozen=True)
class AdapterReply:
    """A parsed reply: the intent, the action in device pixels, the model's reasoning and
    the exact action text it wrote (shown in the step details)."""

    intent: Intent
    action: Action
    thought: str = ""
    raw_action: str = ""
    message: str = ""  # the question, the hand-over request or the final answer
    sensitive: str = ""  # the model's own "this needs confirmation" note, if its grammar has one


@dataclass(frozen=True)
class Replying:
    """Makes the replies to one model answer: each carries the answer's reasoning and the
    action text as the model wrote it."""

    thought: str
    raw: str

    def __call__(self, action: Action, intent: Intent = Intent.ACT, message: str = "",
                 sensitive: str = "") -> AdapterReply:
        return AdapterReply(intent, action, self.thought, self.raw, message, sensitive)


@dataclass(frozen=True)
class PromptLayout:
    """How the request is laid out for the family (shown to the user, used by the planner)."""

    image_position: str = "after_text"  # after_text | before_text | none
    max_tokens: int = 256


def stop_action(intent: Intent) -> Action:
    """The action carried by a reply that does not touch the phone."""
    if intent is Intent.DONE:
        return Action(ActionType.COMPLETE)
    if intent is Intent.IMPOSSIBLE:
        return Action(ActionType.IMPOSSIBLE)
    return Action(ActionType.WAIT)


def swipe_between(a: Point, b: Point, name: str) -> Action:
    """A swipe from ``a`` to ``b``; the same point twice is a misread reply, not a swipe."""
    if a == b:
        raise AdapterError(f"{name} from and to the same point")
    return Action.swipe(a.x, a.y, b.x, b.y)


def typing(text: object, needs: str) -> Action:
    """Typing ``text``; nothing to type is an error that says what the reply lacked (``needs``)."""
    text = str(text)
    if not text:
        raise AdapterError(needs)
    return Action.type_text(text)


def launch(app: object) -> Action:
    """Opening the app the reply names ("?" when it names none: the user sees the step fail)."""
    return Action.open_app(str(app or "").strip() or "?")


def swipe_toward(direction: str, screen: Size, at: Point | None = None, *, finger: bool) -> Action:
    """A quarter-screen swipe from ``at`` (default: the centre).  With ``finger`` the
    direction is where the finger moves ("swipe up"); without, where the content comes
    from ("scroll down" reveals what is below: the finger moves up)."""
    d = Direction(direction.strip().lower())
    moves = d if finger else d.opposite
    c = at or Point(screen.width // 2, screen.height // 2)
    dx = {"left": -1, "right": 1}.get(moves.value, 0) * (screen.width // 4)
    dy = {"up": -1, "down": 1}.get(moves.value, 0) * (screen.height // 4)
    end = Point(min(max(0, c.x + dx), screen.width - 1), min(max(0, c.y + dy), screen.height - 1))
    if end == c:  # at the edge already: move the start instead
        c = Point(min(max(0, c.x - dx), screen.width - 1), min(max(0, c.y - dy), screen.height - 1))
    return Action(ActionType.SWIPE, touch=c, lift=end, direction=moves, duration_ms=300)


_NUM = r"-?\d+(?:\.\d+)?"


def numbers(text: str) -> list[float]:
    return [float(n) for n in re.findall(_NUM, text)]


def point_of(value: object, what: str) -> tuple[float, float]:
    """(x, y) from ``[x, y]``, ``(x, y)``, ``"x,y"``, ``"x y"`` or a 4-number box (its centre)."""
    if isinstance(value, (list, tuple)):
        nums = [float(v) for v in value if isinstance(v, (int, float)) or str(v).strip()]
    else:
        nums = numbers(str(value))
    if len(nums) == 2:
        return nums[0], nums[1]
    if len(nums) == 4:
        return (nums[0] + nums[2]) / 2, (nums[1] + nums[3]) / 2
    raise AdapterError(f"{what}: expected a point [x, y], got {value!r}")


@dataclass(frozen=True)
class Adapter:
    """One GUI-model family.  Subclasses implement ``system_prompt``, ``user_prompt`` and ``parse``."""

    name: str  # registry key, e.g. "ui-tars"
    title: str  # what the user reads, e.g. "UI-TARS-1.5"
    coords: Coords
    layout: PromptLayout = field(default_factory=PromptLayout)
    vision: bool = True  # False: the model gets the screen description instead of the image

    def describe(self, screen: Size | None = None) -> str:
        """One line for the step details: family, coordinate convention, image placement."""
        img = "text only" if not self.vision else f"image {self.layout.image_position.replace('_', ' ')}"
        return f"{self.title} adapter; coordinates: {self.coords.describe(screen)}; {img}"

    def system_prompt(self, screen: Size) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def user_prompt(self, goal: str, history: tuple[str, ...], screen: Size, description: str = "") -> str:
        """The family's user turn: the task, the earlier actions (in its own words) and,
        for a text-only model, the screen description with element positions."""
        lines = [f"Task: {goal}"]
        if history:
            lines.append("Actions so far:")
            lines += [f"{i}. {h}" for i, h in enumerate(history, 1)]
        else:
            lines.append("Actions so far: none.")
        if description:
            lines.append("The screen (element positions use the coordinates your actions use):")
            lines.append(description)
        lines.append("Give the next action.")
        return "\n".join(lines)

    def parse(self, reply: str, screen: Size) -> AdapterReply:  # pragma: no cover - abstract
        raise NotImplementedError

    def image_size(self, screen: Size) -> Size:
        """The size to send the screenshot at (the processor's own resize, when it has one)."""
        if self.coords.space is CoordSpace.RESIZED_PX:
            return (self.coords.image or ImageRule()).resized(screen)
        return screen

    def point(self, x: float, y: float, screen: Size) -> Point:
        return self.coords.to_screen(x, y, screen)

    def point_in(self, fields: Mapping[str, object], key: str, screen: Size, needs: str) -> Point:
        """The point a parsed reply gives under ``key``, in screen pixels; the error ``needs``
        (what the reply lacked, in the family's words) when it gives none."""
        if key not in fields:
            raise AdapterError(needs)
        x, y = point_of(fields[key], key)
        return self.point(x, y, screen)
