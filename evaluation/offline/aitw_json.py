"""Read AITW / AITZ-format episodes with screenshots: JSON or JSON Lines step records.

The gold actions and annotation boxes come from ``evaluation.loaders`` (the same reading
as ``tapwise bench aitw``); this module adds each step's screenshot, named by the record's
``image_path`` (AITZ), ``image``, ``screenshot`` or ``img_filename`` key and looked up
beside the JSON file (or in the folders above it, where AITZ keeps its images).  The
recordings have no view tree, so the screenshot is parsed from pixels alone when the step
is replayed.  Reads files only (image headers for the screen size).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evaluation.aitw import Trajectory
from evaluation.loaders import LoadError, trajectories_from_data
from evaluation.offline.reading import image_size, screenshot_step
from evaluation.offline.types import DatasetError, Format, OfflineTask

IMAGE_KEYS = ("image_path", "image", "screenshot", "img_filename", "img_path")


def _read(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(f"{path}: cannot read it: {exc}") from None
    try:
        if path.suffix == ".jsonl":
            return [json.loads(line) for line in text.splitlines() if line.strip()]
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{path}: not valid JSON ({exc.msg}, line {exc.lineno})") from None


def _records_by_episode(data: Any) -> dict[str, list[dict[str, Any]]]:
    """The step records of each episode in the order ``evaluation.loaders`` reads them."""
    if isinstance(data, dict) and isinstance(data.get("episodes"), list):
        return {str(e.get("episode_id", e.get("id", f"episode-{i}"))): list(e.get("steps", []))
                for i, e in enumerate(data["episodes"]) if isinstance(e, dict)}
    if isinstance(data, dict) and isinstance(data.get("steps"), list):
        return {str(data.get("episode_id", data.get("id", "episode-0"))): list(data["steps"])}
    grouped: dict[str, list[tuple[int, int, dict[str, Any]]]] = {}
    for n, rec in enumerate(data if isinstance(data, list) else []):
        if isinstance(rec, dict):
            try:
                order = int(rec.get("step_id", rec.get("step", n)) or 0)
            except (TypeError, ValueError):
                order = n
            grouped.setdefault(str(rec.get("episode_id", "episode")), []).append((order, n, rec))
    return {eid: [r for _o, _n, r in sorted(items, key=lambda t: (t[0], t[1]))] for eid, items in grouped.items()}


def find_image(name: str, base: Path) -> Path | None:
    """``name`` relative to ``base`` or any folder above it (AITZ paths start at the data root)."""
    p = Path(name)
    if p.is_absolute():
        return p if p.is_file() else None
    for folder in (base, *base.parents):
        if (folder / p).is_file():
            return folder / p
    return None


def _task(traj: Trajectory, records: list[dict[str, Any]], path: Path) -> OfflineTask:
    if len(records) != len(traj.steps):
        raise DatasetError(f"{path}: episode {traj.episode_id!r}: {len(records)} records for {len(traj.steps)} steps")
    steps = []
    for i, (step, rec) in enumerate(zip(traj.steps, records, strict=True)):
        name = next((str(rec[k]) for k in IMAGE_KEYS if rec.get(k)), "")
        if not name:
            raise DatasetError(f"{path}: episode {traj.episode_id!r} step {i} names no screenshot "
                               f"(one of the keys {', '.join(IMAGE_KEYS)})")
        image = find_image(name, path.parent)
        if image is None:
            raise DatasetError(f"{path}: episode {traj.episode_id!r} step {i}: screenshot {name!r} not found "
                               f"beside the file or in the folders above it")
        size = image_size(image)
        app = str(rec.get("app") or rec.get("package") or "") or None
        steps.append(screenshot_step(i, step.action, image, size, step.boxes, foreground=app))
    app = str(records[0].get("subset") or records[0].get("category") or path.stem) if records else path.stem
    return OfflineTask(traj.episode_id, traj.goal, app, tuple(steps), Format.AITW, str(path))


def looks_like(path: Path) -> bool:
    return path.is_file() and path.suffix in (".json", ".jsonl") or path.is_dir() and any(
        f.suffix in (".json", ".jsonl") for f in path.rglob("*") if f.is_file())


def load(path: str | Path) -> tuple[list[OfflineTask], list[tuple[str, str]]]:
    """Every episode in a JSON(L) file or in the JSON(L) files under a folder, and the
    files or episodes that could not be read (source, message)."""
    root = Path(path)
    files = sorted(f for f in root.rglob("*") if f.suffix in (".json", ".jsonl") and f.is_file()) if root.is_dir() \
        else [root]
    tasks: list[OfflineTask] = []
    problems: list[tuple[str, str]] = []
    for f in files:
        try:
            data = _read(f)
            trajectories = trajectories_from_data(data, str(f))
        except (DatasetError, LoadError) as exc:
            problems.append((str(f), str(exc)))
            continue
        records = _records_by_episode(data)
        for t in trajectories:
            try:
                tasks.append(_task(t, records.get(t.episode_id, []), f))
            except DatasetError as exc:
                problems.append((f"{f}#{t.episode_id}", str(exc)))
    return tasks, problems
