"""App maps per UI language: which language a phone shows, and a store of maps seen
through one language.

A map's screen keys do not depend on the phone's language, but its words do (titles,
element names), and the guide matches a goal's words against them: an English map tells
a German goal on a German phone nothing, and its absent words would even make the guide
call the goal impossible.  So the store keeps **one map per (app, language)** — switching
the phone back and forth never throws a map away — and everything that reads or grows
maps for a phone does it through ``LanguageMaps(store, phone_language(device))``.

* ``phone_language(device)``: the primary language subtag of the phone's UI ("de" for
  "de-DE"), "" when the phone cannot say.  A phone that knows it (``KnowsLanguage``: the
  virtual phone) is asked; any other through its adb shell, the way
  ``agent.knowledge.explore.app_version`` reads versions: ``getprop persist.sys.locale``,
  then the older ``persist.sys.language``, then the factory ``ro.product.locale``.
* ``map_id(package, language)``: the key a map has in a store that holds every language's
  maps: ``"de/org.example.settings"``; a map of unknown language (made before maps knew
  theirs, or on a phone that cannot say) keeps the bare package as its key.
* ``LanguageMaps(store, language)``: an ``AppMapStore`` that shows the maps of one
  language under their packages, and stores new ones under that language.  A map of
  unknown language stands in for one of this language until one exists (so maps made
  earlier keep working, and grow where they are); automatic exploration replaces it
  (``agent.knowledge.map_plan``).  It also passes the ``KnowledgeStore`` methods through,
  so ``Knowledge`` and ``with_maps`` take it in place of the store and every map they
  read or grow is the phone's language's.

No device calls except ``phone_language``; no Qt.
"""

from __future__ import annotations

import logging
import re
from typing import Any, Protocol, runtime_checkable

from agent.knowledge.store import AppMapStore
from agent.knowledge.types import InstructionMapping, TaskRecord

log = logging.getLogger(__name__)

#: The shell command that reads the UI locale on Android (newest property first).
LOCALE_COMMAND = "getprop persist.sys.locale; getprop persist.sys.language; getprop ro.product.locale"
_TAG = re.compile(r"^[A-Za-z]{2,3}(?:[-_].*)?$")


@runtime_checkable
class KnowsLanguage(Protocol):
    """A phone that can say which language its UI is in (a language tag: "de", "en-US")."""

    def ui_language(self) -> str: ...


def language_of(tag: str) -> str:
    """The primary language subtag of a locale tag, lower case ("de-DE" -> "de", "pt_BR" ->
    "pt"); "" for anything that is not a tag."""
    tag = (tag or "").strip()
    if not _TAG.match(tag):
        return ""
    return re.split(r"[-_]", tag, maxsplit=1)[0].lower()


def phone_language(device: object) -> str:
    """The language the phone's UI is in now ("" when it cannot tell)."""
    try:
        if isinstance(device, KnowsLanguage):
            return language_of(device.ui_language())
        shell = getattr(device, "shell", None)
        if callable(shell):
            for line in str(shell(LOCALE_COMMAND)).splitlines():
                found = language_of(line)
                if found:
                    return found
    except Exception as exc:  # an unknown language only means maps are not told apart by it
        log.info("could not read the phone's language: %s", exc)
    return ""


def map_id(package: str, language: str) -> str:
    """The key of the map of ``package`` made in ``language`` in a store of every language's maps."""
    return f"{language}/{package}" if language else package


def split_map_id(key: str) -> tuple[str, str]:
    """(package, language) of a key made by ``map_id``."""
    language, sep, package = key.partition("/")
    return (package, language) if sep else (key, "")


class LanguageMaps:
    """The maps of one UI language in a store of every language's maps; see the module docstring."""

    def __init__(self, store: AppMapStore, language: str) -> None:
        self.store = store
        self.language = language

    # ---- app maps ----------------------------------------------------------------------------
    def _where(self, package: str, keys: set[str] | None = None) -> str | None:
        """The key of the map this language reads for ``package`` (None: there is none)."""
        package, language = split_map_id(package)
        if language:
            return map_id(package, language)
        keys = set(self.store.app_map_packages()) if keys is None else keys
        own = map_id(package, self.language)
        if own in keys:
            return own
        return package if package in keys else None  # made before maps knew their language: it stands in

    def load_app_map(self, package: str) -> dict[str, Any] | None:
        key = self._where(package)
        return self.store.load_app_map(key) if key is not None else None

    def save_app_map(self, package: str, data: dict[str, Any]) -> None:
        package, language = split_map_id(package)
        language = language or str(data.get("language") or "")
        if not language and self._where(package) == package:
            self.store.save_app_map(package, data)  # the stand-in grew (a run learnt an edge on it)
            return
        language = language or self.language
        self.store.save_app_map(map_id(package, language), {**data, "language": language})

    def app_map_packages(self) -> list[str]:
        """The packages with a map of this language, or one that stands in for it."""
        out = set()
        for key in self.store.app_map_packages():
            package, language = split_map_id(key)
            if language == self.language or not language:
                out.add(package)
        return sorted(out)

    def delete_app_map(self, package: str) -> None:
        key = self._where(package)
        if key is not None:
            self.store.delete_app_map(key)

    # ---- the rest of a knowledge store, passed through ------------------------------------------
    def _inner(self, name: str) -> Any:
        fn = getattr(self.store, name, None)
        if fn is None:
            raise AttributeError(f"{type(self.store).__name__} keeps no {name.split('_', 1)[-1]}")
        return fn

    def save_task(self, record: TaskRecord) -> None:
        self._inner("save_task")(record)

    def tasks(self) -> list[TaskRecord]:
        return list(self._inner("tasks")())

    def delete_task(self, record_id: str) -> None:
        self._inner("delete_task")(record_id)

    def save_mapping(self, mapping: InstructionMapping) -> None:
        self._inner("save_mapping")(mapping)

    def mappings(self) -> list[InstructionMapping]:
        return list(self._inner("mappings")())

    def load_context(self, user: str) -> dict[str, Any]:
        return dict(self._inner("load_context")(user))

    def save_context(self, user: str, data: dict[str, Any]) -> None:
        self._inner("save_context")(user, data)

    def load_graph(self) -> dict[str, Any] | None:
        graph: dict[str, Any] | None = self._inner("load_graph")()
        return graph

    def save_graph(self, data: dict[str, Any]) -> None:
        self._inner("save_graph")(data)


__all__ = ["LOCALE_COMMAND", "KnowsLanguage", "LanguageMaps", "language_of", "map_id", "phone_language",
           "split_map_id"]
