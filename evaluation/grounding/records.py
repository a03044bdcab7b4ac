"""ScreenSpot-format grounding records: read, checked and split into two halves.

A data set is a folder holding one or more ``*.json`` files (each a list of records) and
an ``images/`` folder, or one such JSON file with ``images/`` beside it.  A record is
``{"img_filename": "mobile/<name>.png", "bbox": [x, y, w, h], "instruction": "...",
"data_type": "text" | "icon"}``; the image is looked up by its base name in ``images/``
(ScreenSpot's own layout keeps a sub-folder per platform, so the folder part is only a
fallback).  The box is in pixels of the image.  Records that cannot be used (no such
image, a box outside the image, no instruction) are reported with the reason, never
silently dropped.  Reads files; decodes no image but to learn its size.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from vision.geometry import Rect

HALVES = ("A", "B")


class RecordsError(ValueError):
    """The data set cannot be read at all (the message says what to fix)."""


@dataclass(frozen=True, slots=True)
class GroundingRecord:
    """One instruction on one screenshot, with the box a tap must land in."""

    key: str  # unique within the data set: "<json file stem>#<index>"
    image: Path
    box: Rect
    instruction: str
    kind: str  # "text" or "icon" (ScreenSpot's data_type)
    half: str = "A"  # which half of the screens the image falls in (``split_halves``)

    @property
    def screen(self) -> str:
        return self.image.name


def _json_files(path: Path) -> tuple[list[Path], Path]:
    if path.is_file():
        return [path], path.parent / "images"
    if path.is_dir():
        files = sorted(p for p in path.glob("*.json"))
        if not files:
            raise RecordsError(f"no *.json records in {path}", "point at a ScreenSpot-format folder or JSON file")
        return files, path / "images"
    raise RecordsError(f"no such data set: {path}", "check the path (e.g. ../shared/real-ui/screenspot-dev)")


def _image_size(path: Path) -> tuple[int, int]:
    from PIL import Image

    with Image.open(path) as im:  # reads the header only: most ScreenSpot .png files are JPEG data
        return im.size


def load_records(path: str | Path) -> tuple[list[GroundingRecord], list[tuple[str, str]]]:
    """Every usable record of the data set at ``path`` (halves assigned), and the
    ``(record key, reason)`` of each one left out."""
    files, images = _json_files(Path(path))
    out: list[GroundingRecord] = []
    problems: list[tuple[str, str]] = []
    sizes: dict[Path, tuple[int, int]] = {}
    for f in files:
        try:
            data = json.loads(f.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise RecordsError(f"{f} is not readable JSON: {exc}", "the file must hold a list of records") from exc
        if not isinstance(data, list):
            raise RecordsError(f"{f} does not hold a list of records", "ScreenSpot files are JSON lists")
        for i, rec in enumerate(data):
            key = f"{f.stem}#{i}"
            try:
                out.append(_record(key, rec, images, sizes))
            except (KeyError, TypeError, ValueError, OSError) as exc:
                problems.append((key, str(exc)))
    return split_halves(out), problems


def _record(key: str, rec: dict, images: Path, sizes: dict[Path, tuple[int, int]]) -> GroundingRecord:
    name = str(rec["img_filename"])
    image = images / Path(name).name
    if not image.is_file():
        image = images / name
    if not image.is_file():
        raise ValueError(f"image {name} not found in {images}")
    x, y, w, h = (float(v) for v in rec["bbox"])
    instruction = " ".join(str(rec.get("instruction", "")).split())
    if not instruction:
        raise ValueError("no instruction")
    if w <= 0 or h <= 0:
        raise ValueError(f"empty box {rec['bbox']}")
    if image not in sizes:
        sizes[image] = _image_size(image)
    iw, ih = sizes[image]
    box = Rect(max(0, round(x)), max(0, round(y)), min(iw, round(x + w)), min(ih, round(y + h)))
    if box.width <= 0 or box.height <= 0:
        raise ValueError(f"box {rec['bbox']} lies outside the {iw}x{ih} image")
    kind = str(rec.get("data_type", "text")).lower()
    return GroundingRecord(key, image, box, instruction, kind if kind in ("text", "icon") else "text")


def split_halves(records: Sequence[GroundingRecord]) -> list[GroundingRecord]:
    """Each record with the half its screen falls in: screens sorted by file name, every
    other one to ``A`` and ``B`` (so a screen's instructions all stay in one half)."""
    from dataclasses import replace

    screens = sorted({r.screen for r in records})
    half = {s: HALVES[i % 2] for i, s in enumerate(screens)}
    return [replace(r, half=half[r.screen]) for r in records]
