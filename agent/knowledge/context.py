"""The per-user context library (Prompt2Task §4.2.2): device facts captured
automatically, details the user typed, and parameters learnt from finished tasks.

Records are a nested JSON-like dict per user, addressed by dotted paths
(``"connectedDevices.headphones"``); the user can read and edit them; sensitive keys
are never stored.  An optional LLM callable merges what a finished task revealed.
Persists through a ``KnowledgeStore``.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Callable, Iterable
from typing import Any

from agent.codec import outside_strings
from agent.device import DeviceInfo

from .store import KnowledgeStore
from .types import TaskRecord

log = logging.getLogger(__name__)

LLM = Callable[[str], str]

_SENSITIVE = re.compile(r"pass(word|code)?|pin|secret|token|otp|cvv|card.?number|iban", re.I)


class ContextError(ValueError):
    pass


def _walk(data: dict[str, Any], path: str, create: bool) -> tuple[dict[str, Any], str]:
    parts = [p for p in path.split(".") if p]
    if not parts:
        raise ContextError("an empty context path")
    node = data
    for p in parts[:-1]:
        nxt = node.get(p)
        if not isinstance(nxt, dict):
            if not create:
                raise KeyError(path)
            nxt = {}
            node[p] = nxt
        node = nxt
    return node, parts[-1]


def flatten(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in data.items():
        key = f"{prefix}.{k}" if prefix else k
        if isinstance(v, dict) and v:
            out.update(flatten(v, key))
        else:
            out[key] = v
    return out


class ContextLibrary:
    """One user's context records."""

    def __init__(self, store: KnowledgeStore, user: str = "default") -> None:
        self.store = store
        self.user = user
        self.data: dict[str, Any] = store.load_context(user)

    def save(self) -> None:
        self.store.save_context(self.user, self.data)

    def get(self, path: str, default: Any = None) -> Any:
        try:
            node, leaf = _walk(self.data, path, create=False)
        except KeyError:
            return default
        return node.get(leaf, default)

    def set(self, path: str, value: Any, *, save: bool = True) -> None:
        """Set one record (the user's edit); refuses sensitive keys."""
        if _SENSITIVE.search(path):
            raise ContextError(f"{path!r} looks sensitive: the context library does not store secrets")
        node, leaf = _walk(self.data, path, create=True)
        node[leaf] = value
        if save:
            self.save()

    def delete(self, path: str) -> None:
        try:
            node, leaf = _walk(self.data, path, create=False)
        except KeyError:
            return
        node.pop(leaf, None)
        self.save()

    def merge(self, updates: dict[str, Any]) -> list[str]:
        """Merge nested updates; returns the dotted paths that changed (secrets skipped)."""
        changed = []
        for path, value in flatten(updates).items():
            if _SENSITIVE.search(path):
                log.info("context update %r skipped: sensitive", path)
                continue
            if self.get(path) != value:
                self.set(path, value, save=False)
                changed.append(path)
        if changed:
            self.save()
        return changed

    def capture_device(self, info: DeviceInfo, apps: Iterable[str] = (), *, language: str | None = None) -> None:
        """Automated capture of what the device tells (model, size, apps...)."""
        updates: dict[str, Any] = {"hardwareInfo": {"deviceName": info.serial, "phoneModel": info.model or "unknown"},
                                   "operatingSystem": f"Android {info.android_version}".strip()}
        if info.size is not None:
            updates["hardwareInfo"]["screen"] = f"{info.size.width}x{info.size.height}"
        apps = sorted(set(apps))
        if apps:
            updates["installedApps"] = apps
        if language:
            updates["userPreferences"] = {"preferredLanguage": language}
        updates["capturedAt"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        self.merge(updates)

    def note_task(self, record: TaskRecord, llm: LLM | None = None) -> list[str]:
        """Update the records after a finished task: the app joins ``usingApp``; with an
        LLM, details the task revealed (a device name, a contact...) are merged too."""
        changed: list[str] = []
        if record.app:
            using = list(self.get("usingApp", []) or [])
            if record.app not in using:
                using.append(record.app)
                self.set("usingApp", using, save=False)
                changed.append("usingApp")
        if llm is not None:
            prompt = (
                "You maintain a small JSON profile of a phone user's context (devices, apps, "
                "preferences, frequently used names).  Given the current profile and a task the "
                "user just completed, reply with ONLY a JSON object of fields to add or change "
                "(nested like the profile), or {} if nothing new was learnt.  Never include "
                "passwords, PINs or other secrets.\n\n"
                f"Current profile:\n{json.dumps(self.data, ensure_ascii=False, indent=1)}\n\n"
                f"Completed task: {record.goal}\nSteps: {record.solution_text()}\n"
            )
            try:
                updates = extract_json(llm(prompt))
            except Exception as exc:  # the LLM is optional help; never fail the task for it
                log.warning("context update by LLM failed: %s", exc)
                updates = None
            if isinstance(updates, dict):
                changed += self.merge(updates)
        self.save()
        return changed


def extract_json(text: str) -> Any:
    """The first JSON object or array in an LLM reply (code fences tolerated)."""
    text = text.strip()
    if text.startswith("```"):
        text = re.sub(r"^```[a-zA-Z]*\n?|```$", "", text).strip()
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    if not starts:
        raise ValueError("no JSON in the reply")
    start = min(starts)
    opener = text[start]
    closer = "}" if opener == "{" else "]"
    depth = 0
    for i, c in outside_strings(text, start):
        if c == opener:
            depth += 1
        elif c == closer:
            depth -= 1
            if depth == 0:
                return json.loads(text[start : i + 1])
    raise ValueError("unterminated JSON in the reply")
