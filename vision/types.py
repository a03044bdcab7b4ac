"""Frozen data types describing a captured screen and what was understood of it.

Everything here is plain data: it crosses threads and processes and is stored by the
codec (``agent.codec``).  No image processing, no I/O, no Qt.  Coordinates are device
pixels unless a field name says otherwise (``_norm``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from enum import Enum

import numpy as np

from vision.geometry import Rect, Size


class ElementKind(str, Enum):
    """Widget classes: VisionTasker's twelve, plus text, container and unknown."""

    STATUS_BAR = "status_bar"
    NAVIGATION_BAR = "navigation_bar"
    BUTTON = "button"
    EDIT_TEXT = "edit_text"
    IMAGE = "image"
    PAGE_INDICATOR = "page_indicator"
    SEEK_BAR = "seek_bar"
    RATING_BAR = "rating_bar"
    CHECK_BOX = "check_box"
    RADIO_GROUP = "radio_group"
    SPINNER = "spinner"
    SWITCH = "switch"
    TEXT = "text"
    CONTAINER = "container"
    UNKNOWN = "unknown"


#: The detector's label space, in a fixed order (class index = position).
DETECTOR_CLASSES: tuple[ElementKind, ...] = (
    ElementKind.STATUS_BAR,
    ElementKind.NAVIGATION_BAR,
    ElementKind.BUTTON,
    ElementKind.EDIT_TEXT,
    ElementKind.IMAGE,
    ElementKind.PAGE_INDICATOR,
    ElementKind.SEEK_BAR,
    ElementKind.RATING_BAR,
    ElementKind.CHECK_BOX,
    ElementKind.RADIO_GROUP,
    ElementKind.SPINNER,
    ElementKind.SWITCH,
)


class ElementSource(str, Enum):
    """Where an element came from."""

    HIERARCHY = "hierarchy"
    DETECTOR = "detector"
    OCR = "ocr"
    FUSED = "fused"


@dataclass(frozen=True, slots=True, eq=False)
class Screen:
    """One observation of a device screen.

    ``image`` is an ``H x W x 3`` RGB ``uint8`` array, made read-only on construction.
    ``hierarchy_xml`` is the raw tree text when one was captured: a ``uiautomator dump``, an
    Appium page source, or Rico / DroidBot JSON (``vision.hierarchy.detect_format``).
    """

    image: np.ndarray
    captured_at: float = field(default_factory=time.time)
    hierarchy_xml: str | None = None
    foreground_package: str | None = None
    foreground_activity: str | None = None
    density_dpi: int | None = None
    device: str | None = None
    #: How long each part of taking this observation took, as (name, milliseconds) pairs;
    #: a real device fills "frame" and "hierarchy".  Empty when nobody measured.
    timings_ms: tuple[tuple[str, float], ...] = ()

    def __post_init__(self) -> None:
        img = self.image
        if not isinstance(img, np.ndarray):
            raise TypeError(f"Screen.image must be a numpy array, got {type(img).__name__}")
        if img.ndim != 3 or img.shape[2] != 3 or img.dtype != np.uint8:
            raise ValueError(
                f"Screen.image must be HxWx3 uint8 RGB, got shape {img.shape} {img.dtype}"
            )
        if img.shape[0] == 0 or img.shape[1] == 0:
            raise ValueError("Screen.image is empty")
        if img.flags.writeable:
            view = img.view()
            view.setflags(write=False)
            object.__setattr__(self, "image", view)

    @property
    def size(self) -> Size:
        return Size(int(self.image.shape[1]), int(self.image.shape[0]))


@dataclass(frozen=True, slots=True)
class TextSpan:
    """A run of text read by OCR (or taken from the hierarchy)."""

    text: str
    rect: Rect
    confidence: float = 1.0


@dataclass(frozen=True, slots=True)
class Element:
    """One UI element in a parse.  ``id`` is unique within its ``ScreenParse``."""

    id: str
    kind: ElementKind
    rect: Rect
    text: str = ""
    label: str = ""
    resource_id: str = ""
    class_name: str = ""
    clickable: bool = False
    checkable: bool = False
    checked: bool | None = None
    selected: bool = False
    enabled: bool = True
    focused: bool = False
    scrollable: bool = False
    password: bool = False
    source: ElementSource = ElementSource.HIERARCHY
    confidence: float = 1.0
    covered: bool = False  # drawn, but under a dialog, sheet or menu: a tap would not reach it

    @property
    def display_name(self) -> str:
        """The best human-readable name: text, else label, else resource id."""
        if self.text:
            return self.text
        if self.label:
            return self.label
        if self.resource_id:
            return self.resource_id.rsplit("/", 1)[-1].replace("_", " ")
        return ""


#: The role of the block that holds a soft keyboard's keys (``vision.keyboard``).
KEYBOARD_ROLE = "keyboard"


@dataclass(frozen=True, slots=True)
class Block:
    """A semantic block: a region of the screen holding related elements."""

    id: str
    role: str
    rect: Rect
    caption: str = ""
    element_ids: tuple[str, ...] = ()
    active_child: str | None = None


@dataclass(frozen=True, slots=True)
class StageTiming:
    """How long one pipeline stage took, in milliseconds."""

    stage: str
    ms: float


@dataclass(frozen=True, slots=True)
class Disagreement:
    """A place where the accessibility tree and the pixels tell different stories."""

    kind: str
    rect: Rect
    detail: str
    element_id: str | None = None


@dataclass(frozen=True, slots=True)
class ScreenParse:
    """Everything understood about one screen: the single output of the vision layer."""

    screen_size: Size
    elements: tuple[Element, ...] = ()
    blocks: tuple[Block, ...] = ()
    text_spans: tuple[TextSpan, ...] = ()
    timings: tuple[StageTiming, ...] = ()
    description: str = ""
    disagreements: tuple[Disagreement, ...] = ()
    warnings: tuple[str, ...] = ()
    occluder: Rect | None = None  # the top dialog / sheet / menu panel, when one covers the screen

    def __post_init__(self) -> None:
        ids = [e.id for e in self.elements]
        if len(ids) != len(set(ids)):
            raise ValueError("element ids must be unique within a parse")

    def element(self, element_id: str) -> Element | None:
        for e in self.elements:
            if e.id == element_id:
                return e
        return None

    def block_of(self, element_id: str) -> Block | None:
        for b in self.blocks:
            if element_id in b.element_ids:
                return b
        return None

    def elements_at(self, x: int, y: int) -> list[Element]:
        """Elements whose box contains the point, smallest first."""
        hits = [e for e in self.elements if e.rect.left <= x < e.rect.right and e.rect.top <= y < e.rect.bottom]
        return sorted(hits, key=lambda e: e.rect.area)

    def uncovered(self) -> tuple[Element, ...]:
        """The elements a person can see and reach: everything not under a dialog, sheet or menu.

        Planners, grounders and descriptions take their candidates from here.
        """
        return tuple(e for e in self.elements if not e.covered)

    @property
    def covered_ids(self) -> frozenset[str]:
        return frozenset(e.id for e in self.elements if e.covered)

    @property
    def total_ms(self) -> float:
        """Wall time of the whole parse: the pipeline's own ``total`` stage when it recorded
        one (stages nest inside it), else the sum of the stages."""
        for t in self.timings:
            if t.stage == "total":
                return t.ms
        return sum(t.ms for t in self.timings)
