"""Data types of the accumulated knowledge (Prompt2Task §4.2): instructions, the
instruction table, step-description → instruction mappings, task records (task
repository entries and demonstrations).  Plain frozen data; no I/O, no LLM.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from enum import StrEnum

from agent.types import Action, new_id


class Op(StrEnum):
    """Prompt2Task's instruction operations (Table 2)."""

    OPEN = "open"
    CLICK = "click"
    LONG_CLICK = "long_click"
    SWITCH = "switch"
    EDIT = "edit"
    SCROLL = "scroll"
    BACK = "back"


#: Words people (and LLMs) use for each operation.
OP_SYNONYMS: dict[str, Op] = {
    "open": Op.OPEN, "launch": Op.OPEN, "start": Op.OPEN, "open_app": Op.OPEN,
    "click": Op.CLICK, "tap": Op.CLICK, "press": Op.CLICK, "select": Op.CLICK, "choose": Op.CLICK,
    "touch": Op.CLICK, "hit": Op.CLICK,
    "long_click": Op.LONG_CLICK, "longclick": Op.LONG_CLICK, "long click": Op.LONG_CLICK,
    "long_press": Op.LONG_CLICK, "long press": Op.LONG_CLICK, "long-press": Op.LONG_CLICK, "hold": Op.LONG_CLICK,
    "switch": Op.SWITCH, "toggle": Op.SWITCH, "turn": Op.SWITCH, "enable": Op.SWITCH, "disable": Op.SWITCH,
    "edit": Op.EDIT, "type": Op.EDIT, "input": Op.EDIT, "enter": Op.EDIT, "write": Op.EDIT, "fill": Op.EDIT,
    "scroll": Op.SCROLL, "swipe": Op.SCROLL,
    "back": Op.BACK, "return": Op.BACK, "go back": Op.BACK, "home": Op.BACK,
}


def to_op(word: str) -> Op:
    """The operation a word names; raises ``ValueError`` naming the allowed ones."""
    w = word.strip().lower().replace("-", "_")
    if w in OP_SYNONYMS:
        return OP_SYNONYMS[w]
    w2 = w.replace("_", " ")
    if w2 in OP_SYNONYMS:
        return OP_SYNONYMS[w2]
    raise ValueError(f"unknown operation {word!r}: use one of {', '.join(o.value for o in Op)}")


@dataclass(frozen=True, slots=True)
class Instruction:
    """``<operation, parameter, object>``: e.g. ``<switch, on, 'Wi-Fi' switch>``."""

    op: Op
    param: str = ""
    object: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.op, Op):
            object.__setattr__(self, "op", to_op(str(self.op)))

    def __str__(self) -> str:
        return f"<{self.op.value}, {self.param or '-'}, {self.object or '-'}>"

    def in_words(self) -> str:
        """A plain-language step description for this instruction."""
        o, p = self.object, self.param
        match self.op:
            case Op.OPEN:
                return f"open the {p or o} app"
            case Op.CLICK:
                return f"tap {o}" + (f" {p} times" if p not in ("", "1") else "")
            case Op.LONG_CLICK:
                return f"long-press {o}"
            case Op.SWITCH:
                return f"turn {'on' if p.lower() in ('on', 'true', '1') else 'off'} {o}"
            case Op.EDIT:
                return f"type '{p}'" + (f" into {o}" if o else "")
            case Op.SCROLL:
                return f"scroll {p or 'down'}" + (f" in {o}" if o else "")
            case Op.BACK:
                return "go to the home screen" if p == "homepage" else "go back"
        return str(self)  # pragma: no cover


@dataclass(frozen=True, slots=True)
class InstructionMapping:
    """One entry of the instruction set: a step description and what it parses into.

    ``compound`` marks a user-confirmed decomposition of one step into several."""

    description: str
    instructions: tuple[Instruction, ...]
    compound: bool = False
    source: str = "episode"  # episode | demonstration | user | parser
    updated_at: float = field(default_factory=time.time)


@dataclass(frozen=True, slots=True)
class TaskRecord:
    """A solved task: the goal (function description), its step descriptions, the
    instructions reverse-engineered from the operations, and the operations themselves
    (with targets and fingerprints).  Both task-repository entries and PBD
    demonstrations are task records (``source`` tells which)."""

    goal: str
    steps: tuple[str, ...]
    instructions: tuple[Instruction, ...] = ()
    actions: tuple[Action, ...] = ()
    app: str | None = None
    source: str = "episode"  # episode | demonstration | macro
    episode_id: str | None = None
    id: str = field(default_factory=new_id)
    created_at: float = field(default_factory=time.time)
    uses: int = 0

    def __post_init__(self) -> None:
        if not self.goal.strip():
            raise ValueError("a task record needs a goal")

    def solution_text(self) -> str:
        """The steps as one line, the way PBD examples are shown to a planner."""
        return " -> ".join(self.steps)


@dataclass(frozen=True, slots=True)
class GraphPage:
    """One page of the interaction graph as a view shows it."""

    id: str
    app: str
    summary: str
    visits: int


@dataclass(frozen=True, slots=True)
class GraphEdge:
    """Acting on ``element`` on page ``src`` led to page ``dst``, ``count`` times."""

    src: str
    element: str
    dst: str
    count: int


@dataclass(frozen=True, slots=True)
class GraphPicture:
    """A frozen snapshot of the interaction graph for views (``InteractionGraph.picture``),
    so a window never holds the live graph."""

    pages: tuple[GraphPage, ...] = ()
    edges: tuple[GraphEdge, ...] = ()


@dataclass(frozen=True, slots=True)
class MapElementView:
    """One element of an app-map screen as a view shows it."""

    key: str
    name: str
    kind: str
    status: str  # untried | tried | skipped
    reason: str = ""  # why it was not tried
    leads_to: str = ""  # in words ("opens 'Internet'")
    bounds: tuple[int, int, int, int] = (0, 0, 0, 0)


@dataclass(frozen=True, slots=True)
class MapScreenView:
    """One screen of an app map: its thumbnail and its elements."""

    key: str
    title: str
    texts: tuple[str, ...] = ()
    thumbnail_png: bytes = b""
    size: tuple[int, int] = (0, 0)
    elements: tuple[MapElementView, ...] = ()
    is_root: bool = False
    unreachable: str = ""


@dataclass(frozen=True, slots=True)
class MapEdgeView:
    """Tapping ``element`` (named ``name``) on screen ``src`` led to ``dst``."""

    src: str
    element: str
    name: str
    dst: str
    count: int = 1
    source: str = "explore"


@dataclass(frozen=True, slots=True)
class MapPicture:
    """A frozen snapshot of one app's map for views (``AppMap.picture``)."""

    package: str
    label: str = ""
    app_version: str = ""
    screens: tuple[MapScreenView, ...] = ()
    edges: tuple[MapEdgeView, ...] = ()
    coverage: dict[str, int] = field(default_factory=dict)
    not_tried: tuple[tuple[str, int], ...] = ()  # (reason, count)
    steps_used: int = 0
    seconds_used: float = 0.0
    complete: bool = False
    language: str = ""  # the UI language the map was made in ("" unknown)
