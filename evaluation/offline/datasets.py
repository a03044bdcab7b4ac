"""Which reader a data set needs: DroidTask YAML folders, LlamaTouch trace folders, or
AITW / AITZ JSON(L) — detected from what the path holds, or named with ``format``."""

from __future__ import annotations

from pathlib import Path

from evaluation.offline import aitw_json, droidtask, llamatouch
from evaluation.offline.types import DatasetError, Format, OfflineTask

_READERS = {Format.DROIDTASK: droidtask.load, Format.LLAMATOUCH: llamatouch.load, Format.AITW: aitw_json.load}


def detect(path: Path) -> Format:
    """The format of ``path``; ``DatasetError`` listing the three when none fits."""
    if not path.exists():
        raise DatasetError(f"{path}: no such file or folder")
    if llamatouch.looks_like(path):
        return Format.LLAMATOUCH
    if droidtask.looks_like(path):
        return Format.DROIDTASK
    if aitw_json.looks_like(path):
        return Format.AITW
    raise DatasetError(f"{path}: not a recording Tapwise can read: expected DroidTask task*.yaml files, "
                       f"LlamaTouch trace folders (N.png, N.xml, {llamatouch.ACTIONS_FILE}) or AITW/AITZ JSON(L)")


def load_dataset(path: str | Path, fmt: str = "auto") -> tuple[Format, list[OfflineTask], list[tuple[str, str]]]:
    """The tasks of a data set and the recordings that could not be read (source, message)."""
    p = Path(path)
    if fmt == "auto":
        f = detect(p)
    elif fmt in {x.value for x in Format}:
        f = Format(fmt)
    else:
        raise DatasetError(f"unknown format {fmt!r}: use auto, {', '.join(x.value for x in Format)}")
    tasks, problems = _READERS[f](p)
    ids = [t.task_id for t in tasks]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise DatasetError(f"{p}: task ids appear more than once: {', '.join(dupes[:5])}")
    return f, tasks, problems
