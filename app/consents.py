"""The user's remembered consents: which models may take steps of which tasks ("for this
task" in the escalation question), kept in ``consents.json`` beside the settings.

A ``agent.privacy.ConsentMemory``.  The file holds model names and task goals (as the
user typed them, secrets as ``{{secret:NAME}}`` references), never a secret's value or a
screen's text.  An unreadable file is reported once and treated as empty (nothing is
allowed that the user did not allow); it is replaced on the next "for this task" answer.
"""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path

from agent.privacy.consent import task_key
from agent.privacy.types import ConsentKind

log = logging.getLogger(__name__)


class FileConsents:
    def __init__(self, path: Path | None = None) -> None:
        if path is None:
            from app.settings import config_dir

            path = config_dir() / "consents.json"
        self.path = path
        self._lock = threading.Lock()

    def _load(self) -> dict[str, dict[str, list[str]]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            log.warning("remembered consents in %s could not be read (%s): none are used", self.path, exc)
            return {}
        if not isinstance(data, dict):
            return {}
        return {str(k): {str(m): [str(t) for t in ts] for m, ts in v.items() if isinstance(ts, list)}
                for k, v in data.items() if isinstance(v, dict)}

    def allowed(self, kind: ConsentKind, model: str, goal: str) -> bool:
        with self._lock:
            return task_key(goal) in self._load().get(kind.value, {}).get(model, [])

    def remember(self, kind: ConsentKind, model: str, goal: str) -> None:
        with self._lock:
            data = self._load()
            tasks = data.setdefault(kind.value, {}).setdefault(model, [])
            if task_key(goal) not in tasks:
                tasks.append(task_key(goal))
            self._save(data)

    def models(self) -> dict[str, int]:
        """How many tasks each model may take steps of (for the settings and ``tapwise doctor``)."""
        with self._lock:
            return {m: len(ts) for m, ts in self._load().get(ConsentKind.ESCALATE.value, {}).items()}

    def forget(self, model: str | None = None) -> None:
        """Forget what was allowed (for ``model``, or for every model)."""
        with self._lock:
            data = self._load()
            esc = data.get(ConsentKind.ESCALATE.value, {})
            if model is None:
                esc.clear()
            else:
                esc.pop(model, None)
            if self.path.exists():
                self._save(data)

    def _save(self, data: dict[str, dict[str, list[str]]]) -> None:
        """Write ``data`` whole or not at all (a temporary file replaces the old one)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=1, ensure_ascii=False), encoding="utf-8")
        tmp.replace(self.path)
