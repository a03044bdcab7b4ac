"""Geometry primitives with named coordinate spaces.

Device pixels are the default space: ``Rect``, ``Point`` and ``Size`` hold integer
device pixels.  Normalised coordinates (0..1, AITW order ``[y, x]``) only exist as
``NormPoint`` so a value's space is always visible in its type.  This module knows
nothing about images, Qt or LLMs.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Size:
    """Width and height in device pixels."""

    width: int
    height: int

    def __post_init__(self) -> None:
        if self.width < 0 or self.height < 0:
            raise ValueError(f"size must be non-negative, got {self.width}x{self.height}")

    @property
    def area(self) -> int:
        return self.width * self.height

    def __str__(self) -> str:
        return f"{self.width}x{self.height}"


@dataclass(frozen=True, slots=True)
class Point:
    """A point in device pixels (x to the right, y down)."""

    x: int
    y: int

    def to_norm(self, screen: Size) -> NormPoint:
        """Normalise against ``screen``; the result is clamped to [0, 1]."""
        if screen.width <= 0 or screen.height <= 0:
            raise ValueError("cannot normalise against an empty screen")
        return NormPoint(
            y=_clamp01(self.y / screen.height), x=_clamp01(self.x / screen.width)
        )

    def distance_to(self, other: Point) -> float:
        return float(((self.x - other.x) ** 2 + (self.y - other.y) ** 2) ** 0.5)


@dataclass(frozen=True, slots=True)
class NormPoint:
    """A point normalised to the screen, stored in AITW order: ``y`` then ``x``."""

    y: float
    x: float

    def __post_init__(self) -> None:
        if not (0.0 <= self.y <= 1.0 and 0.0 <= self.x <= 1.0):
            raise ValueError(f"normalised point out of range: [{self.y}, {self.x}]")

    def to_px(self, screen: Size) -> Point:
        x = min(screen.width - 1, max(0, round(self.x * screen.width)))
        y = min(screen.height - 1, max(0, round(self.y * screen.height)))
        return Point(x=x, y=y)

    def as_yx(self) -> list[float]:
        return [round(self.y, 4), round(self.x, 4)]

    @classmethod
    def from_yx(cls, yx: list[float] | tuple[float, float]) -> NormPoint:
        if len(yx) != 2:
            raise ValueError(f"expected [y, x], got {yx!r}")
        return cls(y=float(yx[0]), x=float(yx[1]))


@dataclass(frozen=True, slots=True)
class Rect:
    """An axis-aligned box in device pixels: ``left, top`` inclusive, ``right, bottom`` exclusive."""

    left: int
    top: int
    right: int
    bottom: int

    def __post_init__(self) -> None:
        if self.right < self.left or self.bottom < self.top:
            raise ValueError(
                f"invalid rect [{self.left},{self.top}][{self.right},{self.bottom}]"
            )

    @classmethod
    def from_xywh(cls, x: int, y: int, w: int, h: int) -> Rect:
        return cls(x, y, x + w, y + h)

    @classmethod
    def from_bounds_string(cls, text: str) -> Rect:
        """Parse uiautomator's ``[l,t][r,b]`` form."""
        cleaned = text.replace("][", ",").strip("[]")
        parts = cleaned.split(",")
        if len(parts) != 4:
            raise ValueError(f"not a bounds string: {text!r}")
        left, top, right, bottom = (int(p) for p in parts)
        return cls(left, top, max(left, right), max(top, bottom))

    def to_bounds_string(self) -> str:
        return f"[{self.left},{self.top}][{self.right},{self.bottom}]"

    @property
    def width(self) -> int:
        return self.right - self.left

    @property
    def height(self) -> int:
        return self.bottom - self.top

    @property
    def size(self) -> Size:
        return Size(self.width, self.height)

    @property
    def area(self) -> int:
        return self.width * self.height

    @property
    def center(self) -> Point:
        return Point((self.left + self.right) // 2, (self.top + self.bottom) // 2)

    def is_empty(self) -> bool:
        return self.width == 0 or self.height == 0

    def contains(self, p: Point) -> bool:
        return self.left <= p.x < self.right and self.top <= p.y < self.bottom

    def contains_rect(self, other: Rect) -> bool:
        return (
            self.left <= other.left
            and self.top <= other.top
            and other.right <= self.right
            and other.bottom <= self.bottom
        )

    def intersection(self, other: Rect) -> Rect | None:
        left, top = max(self.left, other.left), max(self.top, other.top)
        right, bottom = min(self.right, other.right), min(self.bottom, other.bottom)
        if right <= left or bottom <= top:
            return None
        return Rect(left, top, right, bottom)

    def union(self, other: Rect) -> Rect:
        return Rect(
            min(self.left, other.left),
            min(self.top, other.top),
            max(self.right, other.right),
            max(self.bottom, other.bottom),
        )

    def iou(self, other: Rect) -> float:
        inter = self.intersection(other)
        if inter is None:
            return 0.0
        union = self.area + other.area - inter.area
        return inter.area / union if union else 0.0

    def clamp(self, screen: Size) -> Rect:
        """The part of this rect inside ``screen`` (possibly empty)."""
        left = min(max(self.left, 0), screen.width)
        top = min(max(self.top, 0), screen.height)
        right = min(max(self.right, left), screen.width)
        bottom = min(max(self.bottom, top), screen.height)
        return Rect(left, top, right, bottom)

    def expand(self, factor: float) -> Rect:
        """Scale width and height by ``factor`` around the centre (not clamped)."""
        cx, cy = (self.left + self.right) / 2, (self.top + self.bottom) / 2
        hw, hh = self.width * factor / 2, self.height * factor / 2
        return Rect(round(cx - hw), round(cy - hh), round(cx + hw), round(cy + hh))

    def translate(self, dx: int, dy: int) -> Rect:
        return Rect(self.left + dx, self.top + dy, self.right + dx, self.bottom + dy)

    def scale(self, sx: float, sy: float) -> Rect:
        return Rect(
            round(self.left * sx),
            round(self.top * sy),
            round(self.right * sx),
            round(self.bottom * sy),
        )

    def as_tuple(self) -> tuple[int, int, int, int]:
        return (self.left, self.top, self.right, self.bottom)


def _clamp01(v: float) -> float:
    return 0.0 if v < 0.0 else 1.0 if v > 1.0 else v
