"""Leave one app out: the step ranker each app's tasks are replayed with when the offline
benchmark runs ``--folds app``.

For every app of the data set, ``FoldRankers.for_app(app)`` is a ranker trained
(``agent.knowledge.ranker_train.train``: weights and policy) on the other apps' recorded
steps only, so the figure it yields is what the evidence is worth on an app it never saw.
Each fold's ranker is written beside the results (``folder/<app>.json``) and read back
when the run continues, so a resumed run replays with the same weights.  Training is
lazy: a fold is fitted the first time one of its app's tasks is replayed.  Reads and
writes only that folder; no model calls.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from pathlib import Path

from agent.knowledge.ranker import Example, RankerError, StepRanker
from agent.knowledge.ranker_train import train
from evaluation.offline.evidence_data import examples, judge
from evaluation.offline.types import OfflineTask

log = logging.getLogger(__name__)

#: What a fold's cell label carries after the planner's.
FOLDS_SUFFIX = "@app-folds"


class FoldRankers:
    """The leave-one-app-out rankers of one data set (see the module docstring)."""

    def __init__(self, tasks: Sequence[OfflineTask], folder: Path | None = None,
                 on_fit: Callable[[str], None] | None = None) -> None:
        self.tasks = list(tasks)
        self.folder = folder
        self.on_fit = on_fit
        self._data: list[Example] | None = None
        self._rankers: dict[str, StepRanker] = {}

    def _path(self, app: str) -> Path | None:
        if self.folder is None:
            return None
        return self.folder / (re.sub(r"[^\w.-]+", "_", app) + ".json")

    def for_app(self, app: str) -> StepRanker:
        """The ranker trained without ``app``'s steps."""
        if app in self._rankers:
            return self._rankers[app]
        path = self._path(app)
        if path is not None and path.is_file():
            try:
                ranker = StepRanker.load(path)
                self._rankers[app] = ranker
                return ranker
            except RankerError as exc:
                log.warning("fitting the fold again: %s", exc)
        if self._data is None:
            self._data = examples(self.tasks)
        rest = [e for e in self._data if e.group != app]
        if len({e.group for e in rest}) < 2:
            raise ValueError(f"leaving {app!r} out leaves fewer than two apps to fit the evidence on")
        if self.on_fit is not None:
            self.on_fit(app)
        ranker = train(rest, judge=judge)
        ranker.meta["held_out_app"] = app
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            ranker.save(path)
        self._rankers[app] = ranker
        return ranker
