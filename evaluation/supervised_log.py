"""The results file of ``tapwise bench supervised``: kept whole after every task, read back to resume.

The file is a JSON list with one entry per arm (decision feedback on or off): the run's
settings (model, planner, maps, step budget), the arm's summary, its figures per language
and wording (``evaluation.wordings.axis_figures``), and every task's ``SupervisedResult``
with the wording, language and goal it was given.  It is written to a ``.part`` file and
renamed, so a reader never sees half of it; a run started again with the same file skips
the cells (arm, task, language, wording) the file holds, and one started with other
settings is refused rather than mixed in.  This module reads and writes the file only.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

from evaluation.supervised import SupervisedResult, summarise
from evaluation.wordings import Cell, axis_figures

_FIELDS = {f.name for f in fields(SupervisedResult)}

#: The per-wording measures of a supervised run (each result's interventions and completion).
MEASURES = {"interventions": lambda r: float(r.interventions), "completed": lambda r: float(r.completed)}


def _cell(r: SupervisedResult) -> tuple[str, str, int]:
    return (r.task_id, r.language, r.wording)


def result_from_data(d: dict[str, Any]) -> SupervisedResult:
    """A result as ``asdict`` wrote it (lists back to tuples, unknown keys dropped)."""
    d = {k: v for k, v in d.items() if k in _FIELDS}
    d["approve_to_next_s"] = tuple(d.get("approve_to_next_s") or ())
    d["origins"] = tuple((str(name), int(n)) for name, n in d.get("origins") or ())
    d["intervened"] = tuple(d.get("intervened") or ())
    return SupervisedResult(**d)


class SupervisedLog:
    """The results of one supervised run, by arm; ``path`` None keeps them in memory only."""

    def __init__(self, path: Path | None, settings: dict[str, Any]) -> None:
        self.path = path
        self.settings = dict(settings)
        self._arms: dict[bool, dict[tuple[str, str, int], SupervisedResult]] = {}

    @classmethod
    def open(cls, path: Path, settings: dict[str, Any]) -> SupervisedLog:
        """The log at ``path``, holding what an earlier run with the same settings wrote
        there; ``ValueError`` when the file cannot be read or was written with other settings."""
        log = cls(path, settings)
        if not path.exists():
            return log
        try:
            arms = json.loads(path.read_text(encoding="utf-8"))
            for arm in arms:
                old = arm.get("settings")
                if old != log.settings:
                    raise ValueError(f"{path} holds a run with other settings ({old}, now {log.settings}); "
                                     "continue it with the same options or write to another --out file")
                for d in arm["tasks"]:
                    r = result_from_data(d)
                    log._arms.setdefault(bool(arm["feedback"]), {})[_cell(r)] = r
        except (OSError, ValueError, KeyError, TypeError) as exc:
            if isinstance(exc, ValueError) and "other settings" in str(exc):
                raise
            raise ValueError(f"{path}: not a results file of `tapwise bench supervised` ({exc}); "
                             "move it away or write to another --out file") from None
        return log

    def has(self, arm: bool, cell: Cell) -> bool:
        return (cell.task_id, cell.language, cell.wording) in self._arms.get(arm, {})

    def add(self, arm: bool, result: SupervisedResult) -> None:
        """Keep ``result`` and rewrite the file whole."""
        self._arms.setdefault(arm, {})[_cell(result)] = result
        self.write()

    def results(self, arm: bool, cells: list[Cell] | None = None) -> list[SupervisedResult]:
        """The arm's results, in the order of ``cells`` (those present) or as added."""
        held = self._arms.get(arm, {})
        if cells is None:
            return list(held.values())
        return [held[k] for k in ((c.task_id, c.language, c.wording) for c in cells) if k in held]

    def to_data(self) -> list[dict[str, Any]]:
        out = []
        for arm, held in self._arms.items():
            rs = list(held.values())
            out.append({"feedback": arm, "settings": self.settings, "summary": asdict(summarise(rs)),
                        "by_wording": [asdict(f) for f in axis_figures(rs, MEASURES)],
                        "tasks": [asdict(r) for r in rs]})
        return out

    def write(self) -> None:
        if self.path is None:
            return
        part = self.path.with_name(self.path.name + ".part")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        part.write_text(json.dumps(self.to_data(), indent=2, ensure_ascii=False), encoding="utf-8")
        os.replace(part, self.path)
