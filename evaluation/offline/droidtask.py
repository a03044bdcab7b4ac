"""Read DroidTask recordings (AutoDroid's benchmark): ``<app>/task*.yaml`` folders.

Each file holds ``task_name`` and ``records``; a record's ``State`` is the screen as
HTML-like elements (``<button id=3 text='Save'>…</button>``, ``<input>``,
``<checkbox checked=True>``, ``<p>``), ``Choice`` the id acted on (``-1``: the task is
finished) and ``Input`` the text typed (``'null'`` when none).  ``screen_from_state``
turns a state into a ``ScreenParse`` the planners take unchanged: the element ids are
DroidTask's, kinds come from the tags, ``text=`` becomes the label, inner text the text
(its ``<br>`` line breaks become commas).
The recording has no geometry, so elements get stacked rows on a nominal screen in the
order listed (only to place them; no pixels exist).  Reads files only.
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

from agent.types import Action, ActionType, Target
from evaluation.offline.reading import read_each
from evaluation.offline.types import (
    DatasetError,
    Format,
    Gold,
    GoldKind,
    OfflineStep,
    OfflineTask,
    RecordedScreen,
)
from vision.geometry import Rect, Size
from vision.types import Block, Element, ElementKind, ScreenParse

#: The nominal screen the rows are laid out on.
SCREEN = Size(1080, 2400)
_TOP, _BOTTOM, _ROW = 80, 2320, 120

_TAG = re.compile(r"<(?P<tag>[a-zA-Z]+)\s+id=(?P<id>-?\d+)(?P<attrs>[^>]*)>(?P<body>.*?)</(?P=tag)\s*>", re.S)
_ATTR = re.compile(r"""(?P<key>[a-zA-Z_-]+)=(?:'(?P<sq>[^']*)'|"(?P<dq>[^"]*)"|(?P<bare>[^\s>]+))""")
_KINDS = {
    "button": ElementKind.BUTTON,
    "input": ElementKind.EDIT_TEXT,
    "checkbox": ElementKind.CHECK_BOX,
    "p": ElementKind.TEXT,
}
#: DroidTask lists a synthetic element for the system back key.
BACK_WORDS = "go back"


def _attrs(text: str) -> dict[str, str]:
    out = {}
    for m in _ATTR.finditer(text):
        value = m.group("sq") if m.group("sq") is not None else m.group("dq") if m.group("dq") is not None \
            else m.group("bare")
        out[m.group("key").lower()] = html.unescape(value or "")
    return out


_BREAK = re.compile(r"<br\s*/?>", re.I)


def _words(text: str) -> str:
    """Inner text with the recorder's ``<br>`` line breaks as commas and spaces collapsed."""
    return " ".join(html.unescape(_BREAK.sub(", ", text)).split())


def screen_from_state(state: str) -> ScreenParse:
    """A DroidTask ``State`` string -> ``ScreenParse``; ``ValueError`` when it lists no element."""
    found = list(_TAG.finditer(state or ""))
    if not found:
        raise ValueError("the state lists no <tag id=N> elements")
    row = max(24, min(_ROW, (_BOTTOM - _TOP) // len(found)))
    elements = []
    seen: set[str] = set()
    for i, m in enumerate(found):
        eid = m.group("id")
        if eid in seen:
            raise ValueError(f"element id {eid} appears twice")
        seen.add(eid)
        tag = m.group("tag").lower()
        kind = _KINDS.get(tag, ElementKind.UNKNOWN)
        attrs = _attrs(m.group("attrs"))
        checked = attrs.get("checked")
        top = _TOP + i * row
        elements.append(Element(
            id=eid, kind=kind, rect=Rect(40, top, SCREEN.width - 40, top + row - 4),
            text=_words(m.group("body")), label=_words(attrs.get("text", "")), class_name=tag,
            clickable=tag in ("button", "input", "checkbox"), checkable=tag == "checkbox",
            checked=None if checked is None else checked.strip().lower() == "true",
        ))
    block = Block("b0", "content", Rect(0, 0, SCREEN.width, SCREEN.height), element_ids=tuple(e.id for e in elements))
    return ScreenParse(SCREEN, tuple(elements), (block,))


def _input(raw: Any) -> str | None:
    if raw is None:
        return None
    text = str(raw)
    return None if text.strip() in ("", "null", "None") else text


def gold_of(choice: Any, typed: str | None, parse: ScreenParse) -> Gold:
    """The gold step of a record: finish for ``-1``, else a tap on / typing into the element."""
    try:
        cid = int(choice)
    except (TypeError, ValueError):
        raise ValueError(f"Choice must be an element id or -1, got {choice!r}") from None
    if cid == -1:
        return Gold(GoldKind.FINISH, Action.simple(ActionType.COMPLETE))
    el = parse.element(str(cid))
    if el is None:
        raise ValueError(f"Choice {cid} is not an element of the state")
    target = Target(element_id=el.id, point=el.rect.center, description=el.display_name)
    if typed is not None:
        return Gold(GoldKind.ELEMENT, Action.type_text(typed, target), element_id=el.id, text=typed)
    return Gold(GoldKind.ELEMENT, Action.tap(el.rect.center.x, el.rect.center.y, target), element_id=el.id)


def read_task(path: Path, app: str | None = None) -> OfflineTask:
    """One ``task*.yaml`` file; ``DatasetError`` naming the file and record when it is not DroidTask's form."""
    import yaml

    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise DatasetError(f"{path}: cannot read it as YAML: {exc}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("records"), list) or not doc.get("task_name"):
        raise DatasetError(f"{path}: not a DroidTask file (needs task_name and a list of records)")
    app = app or path.parent.name
    steps = []
    for i, rec in enumerate(doc["records"]):
        if not isinstance(rec, dict) or "State" not in rec or "Choice" not in rec:
            raise DatasetError(f"{path}: record {i} needs State and Choice")
        try:
            parse = screen_from_state(str(rec["State"]))
            gold = gold_of(rec["Choice"], _input(rec.get("Input")), parse)
        except ValueError as exc:
            raise DatasetError(f"{path}: record {i}: {exc}") from None
        steps.append(OfflineStep(i, RecordedScreen(parse=parse, foreground=app), gold))
    if not steps:
        raise DatasetError(f"{path}: the task has no records")
    return OfflineTask(f"{app}/{path.stem}", str(doc["task_name"]).strip(), app, tuple(steps), Format.DROIDTASK,
                       str(path))


def _task_number(path: Path) -> tuple[int, str]:
    m = re.search(r"(\d+)$", path.stem)
    return (int(m.group(1)) if m else 10**9, path.stem)


def looks_like(path: Path) -> bool:
    """True for a DroidTask file or a folder holding ``task*.yaml`` files (directly or one level down)."""
    if path.is_file():
        return path.suffix in (".yaml", ".yml")
    return any(path.glob("task*.yaml")) or any(path.glob("*/task*.yaml"))


def load(path: str | Path) -> tuple[list[OfflineTask], list[tuple[str, str]]]:
    """Every task under ``path`` (a file, an app folder or a folder of app folders), in app
    then task-number order, and the files that could not be read (source, message)."""
    root = Path(path)
    if root.is_file():
        return [read_task(root)], []
    if not root.is_dir():
        raise DatasetError(f"{root}: no such file or folder")
    files = sorted(root.glob("task*.yaml"), key=_task_number)
    if not files:
        files = [f for d in sorted(p for p in root.iterdir() if p.is_dir())
                 for f in sorted(d.glob("task*.yaml"), key=_task_number)]
    return read_each(files, read_task)
