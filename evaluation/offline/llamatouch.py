"""Read LlamaTouch-format traces: a folder per task with ``N.png`` (screenshot), ``N.xml``
(``uiautomator dump``), optional ``N.activity`` and ``eventStructs.txt`` (the actions).

``eventStructs.txt`` has one action per line: ``【点击事件】`` a tap with the screen size
and touch position in pixels, ``【滑动事件】`` a swipe with start and end positions,
``【键盘输入】`` typed text, ``【Back键】`` / ``【Home键】`` the keys; the task ends with an
implicit "complete" after the last line (the trace's last screen).  ``instruction.txt``
holds the episode id on its first line and the task in words after it.  Gold actions are
AITW-form; a step's annotation boxes are the dump's elements, as for Tapwise's own
episodes.  The closest of the formats to what a real phone gives Tapwise.  Reads files only.
"""

from __future__ import annotations

import re
from pathlib import Path

from agent.types import AitwActionType
from evaluation.aitw import AitwAction, Box, boxes_from_rects
from evaluation.offline.reading import image_size, read_each, screenshot_step
from evaluation.offline.types import DatasetError, Format, OfflineTask
from vision.geometry import Size
from vision.hierarchy import parse_uiautomator
from vision.types import ElementKind

ACTIONS_FILE = "eventStructs.txt"
_KIND = re.compile(r"【(?P<kind>[^】]+)】(?P<rest>.*)")
_SIZE = re.compile(r"w(\d+)\s*[，,]\s*h(\d+)")
_POS = re.compile(r"x(\d+)\s*[，,]\s*y(\d+)")
_NOT_TARGETS = {ElementKind.CONTAINER, ElementKind.STATUS_BAR, ElementKind.NAVIGATION_BAR}


def parse_event(line: str) -> AitwAction:
    """One ``eventStructs.txt`` line -> AITW action; ``ValueError`` saying what is wrong."""
    m = _KIND.search(line)
    if m is None:
        raise ValueError(f"no 【kind】 in {line.strip()[:60]!r}")
    kind, rest = m.group("kind").strip(), m.group("rest")
    if kind in ("点击事件", "滑动事件"):
        size = _SIZE.search(rest)
        points = [(int(x), int(y)) for x, y in _POS.findall(rest)]
        if size is None or not points:
            raise ValueError(f"{kind} without a screen size and a position: {line.strip()[:80]!r}")
        w, h = int(size.group(1)), int(size.group(2))
        if kind == "滑动事件" and len(points) < 2:
            raise ValueError(f"a swipe needs a start and an end position: {line.strip()[:80]!r}")
        (x1, y1), (x2, y2) = points[0], points[-1] if kind == "滑动事件" else points[0]
        return AitwAction(int(AitwActionType.DUAL_POINT), (y1 / h, x1 / w), (y2 / h, x2 / w))
    if kind == "键盘输入":
        return AitwAction(int(AitwActionType.TYPE), typed_text=rest.strip())
    if kind in ("Back键", "Home键"):
        return AitwAction(int(AitwActionType.PRESS_BACK if kind.startswith("Back") else AitwActionType.PRESS_HOME))
    raise ValueError(f"unknown action kind 【{kind}】")


def _boxes(xml: Path, size: Size) -> tuple[Box, ...]:
    try:
        tree = parse_uiautomator(xml.read_text(encoding="utf-8", errors="replace"), size)
    except (OSError, ValueError):
        return ()
    return boxes_from_rects([e.rect for e in tree.elements if e.kind not in _NOT_TARGETS], size)


def _goal(folder: Path) -> tuple[str, str]:
    """(episode id, task words) from ``instruction.txt``; the folder name when it is missing."""
    f = folder / "instruction.txt"
    lines = [ln.strip() for ln in f.read_text(encoding="utf-8").splitlines() if ln.strip()] if f.is_file() else []
    if len(lines) >= 2:
        return lines[0], " ".join(lines[1:])
    return folder.name, (lines[0] if lines else folder.name.replace("_", " "))


def _activity(path: Path) -> str | None:
    if not path.is_file():
        return None
    m = re.search(r"([A-Za-z][\w.]*\.[\w.]+)/", path.read_text(encoding="utf-8", errors="replace"))
    return m.group(1) if m else None


def read_trace(folder: Path, root: Path | None = None) -> OfflineTask:
    """One trace folder; ``DatasetError`` naming the file and line when something is missing."""
    events = folder / ACTIONS_FILE
    if not events.is_file():
        raise DatasetError(f"{folder}: no {ACTIONS_FILE}")
    actions = []
    for n, line in enumerate(events.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                actions.append(parse_event(line))
            except ValueError as exc:
                raise DatasetError(f"{events}:{n}: {exc}") from None
    actions.append(AitwAction(int(AitwActionType.STATUS_TASK_COMPLETE)))  # the trace ends with the task done
    steps = []
    for i, aitw in enumerate(actions):
        image, xml = folder / f"{i}.png", folder / f"{i}.xml"
        if not image.is_file():
            raise DatasetError(f"{folder}: {len(actions) - 1} actions in {ACTIONS_FILE} need screenshots 0.png … "
                               f"{len(actions) - 1}.png; {image.name} is missing")
        size = image_size(image)
        tree = xml if xml.is_file() else None
        boxes = _boxes(xml, size) if tree is not None else ()
        steps.append(screenshot_step(i, aitw, image, size, boxes, tree=tree,
                                     foreground=_activity(folder / f"{i}.activity")))
    episode, goal = _goal(folder)
    rel = folder.relative_to(root).as_posix() if root is not None and folder != root else folder.name
    app = rel.split("/")[0] if "/" in rel else folder.parent.name
    return OfflineTask(rel if root is not None else episode, goal, app, tuple(steps), Format.LLAMATOUCH, str(folder))


def looks_like(path: Path) -> bool:
    return path.is_dir() and ((path / ACTIONS_FILE).is_file() or any(path.rglob(ACTIONS_FILE)))


def load(path: str | Path) -> tuple[list[OfflineTask], list[tuple[str, str]]]:
    """Every trace folder at or under ``path`` and the ones that could not be read."""
    root = Path(path)
    folders = [root] if (root / ACTIONS_FILE).is_file() else sorted(f.parent for f in root.rglob(ACTIONS_FILE))
    return read_each(folders, lambda folder: read_trace(folder, root if folder != root else None))
