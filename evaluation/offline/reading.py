"""What the offline readers share: a step recorded as a screenshot with an AITW-form gold
action, and the loop that reads every source of a data set.

``aitw_json`` and ``llamatouch`` both record each step as a screenshot whose gold is an
AITW-form action; ``screenshot_step`` builds that step once for both (the gold as a project
``Action`` too, for the history).  ``read_each`` reads source after source and keeps the
ones that raise ``DatasetError`` as (source, message) problems instead of stopping.
Reads image headers only (the screen size); nothing here parses pixels or runs a model.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar

from agent.types import Action, ActionType
from evaluation.aitw import AitwAction, Box
from evaluation.offline.types import DatasetError, Gold, GoldKind, OfflineStep, OfflineTask, RecordedScreen
from vision.geometry import Size

_Source = TypeVar("_Source")


def image_size(path: Path) -> Size:
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path) as im:
            return Size(*im.size)
    except (OSError, UnidentifiedImageError) as exc:
        raise DatasetError(f"{path}: not a readable image: {exc}") from None


def gold_action(aitw: AitwAction, size: Size) -> Action:
    """The AITW action as a project ``Action`` (the history's words); ``wait`` when it has no such form."""
    try:
        return Action.from_aitw(aitw.to_dict(), size)
    except ValueError:
        return Action.simple(ActionType.WAIT)


def screenshot_step(index: int, aitw: AitwAction, image: Path, size: Size, boxes: tuple[Box, ...] = (), *,
                    tree: Path | None = None, foreground: str | None = None) -> OfflineStep:
    """Step ``index``, taken on the screenshot ``image`` (``size`` pixels, with the uiautomator
    dump ``tree`` when the recording has one), whose gold is ``aitw`` scored against ``boxes``."""
    gold = Gold(GoldKind.AITW, gold_action(aitw, size), aitw=aitw, boxes=boxes)
    return OfflineStep(index, RecordedScreen(image=image, tree=tree, foreground=foreground), gold)


def read_each(sources: Iterable[_Source],
              read: Callable[[_Source], OfflineTask]) -> tuple[list[OfflineTask], list[tuple[str, str]]]:
    """The task ``read`` makes of each source, in order, and (source, message) for each
    source it refused with ``DatasetError``."""
    tasks: list[OfflineTask] = []
    problems: list[tuple[str, str]] = []
    for source in sources:
        try:
            tasks.append(read(source))
        except DatasetError as exc:
            problems.append((str(source), str(exc)))
    return tasks, problems
