"""What a recorded trajectory is once read: tasks, steps, the recorded screen and the gold action.

Readers (``evaluation.offline.droidtask``, ``aitw_json``, ``llamatouch``) produce these;
the replay and the scorers consume them.  A recorded screen is either already a
``ScreenParse`` (DroidTask's text-rendered states) or files to parse (a screenshot, with
a uiautomator dump when the recording has one), parsed only when the step is replayed.
Frozen data only: no I/O, no models.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from agent.types import Action
from evaluation.aitw import AitwAction, Box
from vision.types import ScreenParse


class Format(StrEnum):
    DROIDTASK = "droidtask"
    AITW = "aitw"
    LLAMATOUCH = "llamatouch"


class GoldKind(StrEnum):
    """How a gold step is scored: an element of a text-rendered screen (DroidTask), the
    end of the task, or an AITW-form action (AITW/AITZ and LlamaTouch recordings)."""

    ELEMENT = "element"
    FINISH = "finish"
    AITW = "aitw"


@dataclass(frozen=True, slots=True)
class Gold:
    """The recorded action of one step.

    ``action`` is the same step as a project ``Action`` (what the next steps' history
    shows); ``element_id`` / ``text`` are DroidTask's choice and typed input; ``aitw`` and
    ``boxes`` are the AITW-form action and the screen's annotation boxes.
    """

    kind: GoldKind
    action: Action
    element_id: str | None = None
    text: str | None = None
    aitw: AitwAction | None = None
    boxes: tuple[Box, ...] = ()

    def describe(self) -> str:
        if self.kind is GoldKind.ELEMENT:
            what = f"type {self.text!r} into [{self.element_id}]" if self.text else f"tap [{self.element_id}]"
            name = self.action.target.description if self.action.target else ""
            return f"{what} {name!r}" if name else what
        return self.action.describe()


@dataclass(frozen=True, slots=True)
class RecordedScreen:
    """The screen a step was taken on: a ready parse, or files the vision pipeline reads."""

    parse: ScreenParse | None = None
    image: Path | None = None
    tree: Path | None = None
    foreground: str | None = None  # app package or name, when the recording says

    def __post_init__(self) -> None:
        if self.parse is None and self.image is None:
            raise ValueError("a recorded screen needs a parse or a screenshot")


@dataclass(frozen=True, slots=True)
class OfflineStep:
    index: int
    screen: RecordedScreen
    gold: Gold


@dataclass(frozen=True, slots=True)
class OfflineTask:
    """One recorded trajectory: ``task_id`` is unique within a data set (``app/name``)."""

    task_id: str
    goal: str
    app: str
    steps: tuple[OfflineStep, ...]
    format: Format
    source: str = ""


class DatasetError(ValueError):
    """A recording could not be read; the message names the file and says what is wrong."""
