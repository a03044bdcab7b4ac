"""Read and write trajectories for AITW action matching.

Accepted inputs (``load_trajectories`` detects which):

* AITW / AITZ-style step records: a JSON list (or JSON Lines) of step objects with
  ``episode_id``, ``step_id``, ``result_action_type``, ``result_touch_yx``,
  ``result_lift_yx``, ``result_action_text`` and ``ui_positions`` (``[[y, x, h, w], …]``,
  normalised; a string of that list is fine).  Auto-UI's keys (``action_type``,
  ``touch_point``, ``lift_point``, ``typed_text``) are read too.
* The nested form this module writes: ``{"format": "aitw", "episodes": [{"episode_id",
  "goal", "steps": [{action…, "ui_positions"}]}]}`` (also a single episode object).
* Tapwise documents (``agent.codec`` envelopes): an episode, a macro, or a list of them.
  Episodes take their screen size from their screenshots or parses; macros need
  ``screen`` (their steps hold device pixels).
* A folder: every ``*.json`` / ``*.jsonl`` file inside it, recursively.

Only file reading happens here; matching lives in ``evaluation.aitw``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from agent import codec
from agent.macros.types import Macro
from agent.types import Action, Episode, Step, StepOutcome
from evaluation.aitw import AitwAction, AitwStep, Box, Trajectory, boxes_from_rects
from vision.geometry import Size
from vision.types import ElementKind

log = logging.getLogger(__name__)

FORMAT = "aitw"


class LoadError(ValueError):
    """A trajectory file could not be read; the message names the file and the step."""


# ---- AITW-format records ---------------------------------------------------------------


def parse_boxes(raw: Any, step: dict[str, Any] | None = None) -> tuple[Box, ...]:
    """``ui_positions`` as normalised ``(y, x, h, w)`` boxes.

    Pixel boxes (any value above 1) are normalised with the step's ``image_height`` /
    ``image_width``; without them that is an error rather than a silent mismatch.
    """
    if raw is None or raw == "":
        return ()
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError:
            raise ValueError(f"ui_positions is not a JSON list: {raw[:80]!r}") from None
    if not isinstance(raw, (list, tuple)):
        raise ValueError(f"ui_positions must be a list of [y, x, h, w], got {type(raw).__name__}")
    boxes: list[tuple[float, float, float, float]] = []
    for item in raw:
        if not isinstance(item, (list, tuple)) or len(item) != 4:
            raise ValueError(f"each ui_positions entry must be [y, x, h, w], got {item!r}")
        boxes.append(tuple(float(v) for v in item))  # type: ignore[arg-type]
    if any(v > 1.0 + 1e-6 for b in boxes for v in b):
        h = (step or {}).get("image_height")
        w = (step or {}).get("image_width")
        if not h or not w:
            raise ValueError(
                "ui_positions look like pixels (values above 1) but the step has no "
                "image_height/image_width to normalise them"
            )
        h, w = float(h), float(w)
        boxes = [(y / h, x / w, bh / h, bw / w) for y, x, bh, bw in boxes]
    return tuple(boxes)


def _step_from_record(rec: dict[str, Any]) -> AitwStep:
    action = AitwAction.from_dict(rec)
    boxes = parse_boxes(rec.get("ui_positions", rec.get("annotation_positions")), rec)
    instruction = str(rec.get("coat_action_desc") or rec.get("low_instruction") or "")
    return AitwStep(action, boxes, instruction)


def _goal_of(rec: dict[str, Any]) -> str:
    return str(rec.get("instruction") or rec.get("goal") or rec.get("goal_info") or "")


def trajectories_from_records(records: Sequence[Any], source: str = "") -> list[Trajectory]:
    """Group flat AITW step records by ``episode_id`` and order them by ``step_id``."""
    grouped: dict[str, list[tuple[int, int, dict[str, Any]]]] = {}
    goals: dict[str, str] = {}
    for n, rec in enumerate(records):
        if not isinstance(rec, dict):
            raise LoadError(f"{source}: record {n} is not a JSON object")
        eid = str(rec.get("episode_id", "episode"))
        try:
            order = int(rec.get("step_id", rec.get("step", n)) or 0)
        except (TypeError, ValueError):
            raise LoadError(f"{source}: record {n} has a non-numeric step_id {rec.get('step_id')!r}") from None
        grouped.setdefault(eid, []).append((order, n, rec))
        goals.setdefault(eid, _goal_of(rec))
    out = []
    for eid, items in grouped.items():
        steps = []
        for order, _n, rec in sorted(items, key=lambda t: (t[0], t[1])):
            try:
                steps.append(_step_from_record(rec))
            except ValueError as exc:
                raise LoadError(f"{source}: episode {eid!r} step {order}: {exc}") from exc
        out.append(Trajectory(eid, goals[eid], tuple(steps), source))
    return out


def _trajectory_from_nested(doc: dict[str, Any], source: str, n: int = 0) -> Trajectory:
    eid = str(doc.get("episode_id", doc.get("id", f"episode-{n}")))
    steps = []
    for i, rec in enumerate(doc.get("steps", [])):
        try:
            steps.append(_step_from_record(rec))
        except ValueError as exc:
            raise LoadError(f"{source}: episode {eid!r} step {i}: {exc}") from exc
    return Trajectory(eid, _goal_of(doc), tuple(steps), source)


# ---- Tapwise episodes and macros -------------------------------------------------------

_NOT_TARGETS = {ElementKind.CONTAINER, ElementKind.STATUS_BAR, ElementKind.NAVIGATION_BAR}


def _step_action(step: Step) -> Action | None:
    if step.executed is not None:
        return step.executed
    if step.decision is not None and step.decision.executes is not None:
        return step.decision.executes
    if step.outcome is StepOutcome.FINISHED and step.proposal is not None and step.proposal.action.is_terminal:
        return step.proposal.action
    return None


def _step_size(step: Step, fallback: Size | None) -> Size | None:
    if step.screenshot is not None and step.screenshot.width and step.screenshot.height:
        return Size(step.screenshot.width, step.screenshot.height)
    if step.parse is not None and step.parse.screen_size.area:
        return step.parse.screen_size
    return fallback


def trajectory_from_episode(episode: Episode, screen: Size | None = None) -> Trajectory:
    """The actions that reached the phone (plus a final complete/impossible), in order.

    Rejected and aborted proposals are skipped: they never happened.  Annotation boxes
    come from the step's screen parse (every element except containers and system bars).
    """
    steps: list[AitwStep] = []
    for step in episode.steps:
        action = _step_action(step)
        if action is None:
            continue
        size = _step_size(step, screen)
        if size is None and (action.is_gesture):
            raise LoadError(
                f"episode {episode.id} step {step.index}: no screen size (no screenshot or parse); "
                "pass the screen size (e.g. --screen 1080x2400)"
            )
        try:
            aitw = AitwAction.from_action(action, size or Size(1, 1))
        except ValueError as exc:
            raise LoadError(f"episode {episode.id} step {step.index}: {exc}") from exc
        boxes: tuple[Box, ...] = ()
        if step.parse is not None and size is not None:
            rects = [e.rect for e in step.parse.elements if e.kind not in _NOT_TARGETS]
            boxes = boxes_from_rects(rects, size)
        steps.append(AitwStep(aitw, boxes, action.describe()))
    return Trajectory(episode.id, episode.goal, tuple(steps), f"episode:{episode.id}")


def trajectory_from_macro(macro: Macro, screen: Size | None) -> Trajectory:
    """A macro's recorded steps; gestures need the recording's screen size."""
    steps: list[AitwStep] = []
    for i, ms in enumerate(macro.steps):
        if ms.action.is_gesture and screen is None:
            raise LoadError(
                f"macro {macro.name!r} step {i} is a gesture in device pixels: pass the screen size "
                "it was recorded at (e.g. --screen 1080x2400)"
            )
        try:
            aitw = AitwAction.from_action(ms.action, screen or Size(1, 1))
        except ValueError as exc:
            raise LoadError(f"macro {macro.name!r} step {i}: {exc}") from exc
        steps.append(AitwStep(aitw, (), ms.description or ms.action.describe()))
    return Trajectory(macro.id, macro.description or macro.name, tuple(steps), f"macro:{macro.name}")


# ---- entry points ----------------------------------------------------------------------


def parse_size(text: str | None) -> Size | None:
    """``"1080x2400"`` → ``Size(1080, 2400)``."""
    if not text:
        return None
    try:
        w, h = (int(v) for v in text.lower().replace("*", "x").split("x"))
    except ValueError:
        raise ValueError(f"screen size must look like 1080x2400, got {text!r}") from None
    if w <= 0 or h <= 0:
        raise ValueError(f"screen size must be positive, got {text!r}")
    return Size(w, h)


def _read_json(path: Path) -> Any:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        out = []
        for n, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise LoadError(f"{path}:{n}: not valid JSON: {exc.msg}") from None
        return out
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise LoadError(f"{path}: not valid JSON (line {exc.lineno}: {exc.msg})") from None


def trajectories_from_data(data: Any, source: str = "", screen: Size | None = None) -> list[Trajectory]:
    """Interpret already-parsed JSON (see the module docstring for the forms)."""
    if isinstance(data, dict) and "schema" in data and "data" in data:
        data = [data]
    if isinstance(data, list) and data and all(isinstance(d, dict) and "schema" in d for d in data):
        out = []
        for doc in data:
            try:
                obj = codec.decode(doc)
            except codec.CodecError as exc:
                raise LoadError(f"{source}: {exc}") from exc
            if isinstance(obj, Episode):
                out.append(trajectory_from_episode(obj, screen))
            elif isinstance(obj, Macro):
                out.append(trajectory_from_macro(obj, screen))
            else:
                raise LoadError(f"{source}: a {doc['schema']} document holds no trajectory")
        return out
    if isinstance(data, dict) and isinstance(data.get("episodes"), list):
        return [_trajectory_from_nested(e, source, i) for i, e in enumerate(data["episodes"])]
    if isinstance(data, dict) and isinstance(data.get("steps"), list):
        return [_trajectory_from_nested(data, source)]
    if isinstance(data, list):
        return trajectories_from_records(data, source)
    raise LoadError(
        f"{source}: not a trajectory file (expected AITW step records, an 'episodes' list, or "
        "Tapwise episode/macro documents)"
    )


def load_trajectories(path: str | Path, screen: Size | None = None) -> list[Trajectory]:
    """Read every trajectory in a file or a folder (recursively)."""
    p = Path(path)
    if not p.exists():
        raise LoadError(f"{p}: no such file or folder")
    files: Iterable[Path]
    if p.is_dir():
        files = sorted(f for f in p.rglob("*") if f.suffix in (".json", ".jsonl") and f.is_file())
    else:
        files = [p]
    out: list[Trajectory] = []
    seen: set[str] = set()
    for f in files:
        for t in trajectories_from_data(_read_json(f), str(f), screen):
            if t.episode_id in seen:
                raise LoadError(f"{f}: episode id {t.episode_id!r} appears in more than one place")
            seen.add(t.episode_id)
            out.append(t)
    if not out:
        raise LoadError(f"{p}: no trajectories found")
    return out


def trajectory_to_dict(t: Trajectory) -> dict[str, Any]:
    steps = []
    for s in t.steps:
        rec = s.action.to_dict()
        if s.boxes:
            rec["ui_positions"] = [[round(v, 4) for v in b] for b in s.boxes]
        if s.instruction:
            rec["low_instruction"] = s.instruction
        steps.append(rec)
    return {"episode_id": t.episode_id, "goal": t.goal, "steps": steps}


def dump_trajectories(trajectories: Sequence[Trajectory]) -> str:
    """The nested AITW form (``{"format": "aitw", "episodes": [...]}``) as JSON text."""
    doc = {"format": FORMAT, "episodes": [trajectory_to_dict(t) for t in trajectories]}
    return json.dumps(doc, ensure_ascii=False)
