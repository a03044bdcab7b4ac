"""The work of automatic exploration that runs off the GUI thread, Qt-free: looking over a
phone (``survey``) and exploring one app of the plan (``explore_one``).

``survey(device, open_store, …)`` reads the phone's UI language
(``agent.knowledge.map_language.phone_language``), its launchable apps and their
versions, and the stored maps of that language, and returns the apps that need a map
(``agent.knowledge.map_plan.apps_to_explore``) with why.  ``explore_one`` explores one of
them (``agent.knowledge.explore.Explorer``; resuming the stored map when the plan says
so), stores the map among that language's maps after every few actions and at the end,
and returns it.  Database work goes through ``run_db`` (the window's misc worker; a
plain call elsewhere); device calls go to the device given, on the calling thread.

The window's controller (``app.gui.auto_explore``) decides when and on which phone.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from agent.knowledge.app_map import AppMap
from agent.knowledge.explore import ExploreBudget, ExploreProgress, Explorer, app_version
from agent.knowledge.guide import AppMaps
from agent.knowledge.map_language import LanguageMaps, phone_language, split_map_id
from agent.knowledge.map_plan import AppToExplore, apps_to_explore, launchable_apps
from agent.knowledge.store import AppMapStore
from agent.llm.base import CancelToken

log = logging.getLogger(__name__)

T = TypeVar("T")


def _direct(fn: Callable[[], T]) -> T:
    return fn()


@dataclass(frozen=True, slots=True)
class Survey:
    """What a look over the phone found: its language, apps and the apps to explore."""

    language: str
    apps: tuple[tuple[str, str], ...]  # (name, package) in the launcher's order
    todo: tuple[AppToExplore, ...]

    @property
    def mapped(self) -> int:
        """How many launchable apps need nothing."""
        return len(self.apps) - len(self.todo)


def survey(device: object, open_store: Callable[[], AppMapStore], *, max_steps: int,
           run_db: Callable[[Callable[[], Any]], Any] = _direct, versions: bool = True) -> Survey:
    """Look the phone over (see the module docstring); ``versions=False`` skips reading
    each app's version (one shell call per app on a phone over adb)."""
    language = phone_language(device)
    apps = launchable_apps(device)
    installed = {pkg: app_version(device, pkg) for _name, pkg in apps} if versions else {}

    def read() -> tuple[dict[str, AppMap | None], dict[str, list[str]]]:
        store = open_store()
        maps = AppMaps(LanguageMaps(store, language))
        return {pkg: maps.load(pkg) for _name, pkg in apps}, languages_of(store.app_map_packages())

    stored, others = run_db(read)
    todo = apps_to_explore(apps, stored, language=language, versions=installed, max_steps=max_steps,
                           other_languages=others)
    return Survey(language, tuple(apps), tuple(todo))


def explore_one(device: object, parser: object, job: AppToExplore, language: str,
                open_store: Callable[[], AppMapStore], *, budget: ExploreBudget,
                progress: Callable[[ExploreProgress], None] | None = None, cancel: CancelToken | None = None,
                run_db: Callable[[Callable[[], Any]], Any] = _direct,
                consent: Callable[[str], bool] | None = None) -> AppMap:
    """Explore ``job``'s app on ``device`` into the maps of ``language`` and return its map
    (stopped early by ``cancel``: the map so far, stored, to be carried on later)."""

    def maps() -> AppMaps:
        return AppMaps(LanguageMaps(open_store(), language))

    earlier = run_db(lambda: maps().load(job.package)) if job.resume else None

    def save(m: AppMap) -> None:
        m.label = job.name
        run_db(lambda: maps().save(m))

    explorer = Explorer(device, parser, job.package, app_map=earlier,  # type: ignore[arg-type]
                        budget=replace(budget, max_steps=max(1, job.steps)), progress=progress, cancel=cancel,
                        consent=consent, save=save, save_every=10)
    m = explorer.run()
    save(m)
    log.info("explored %s (%s): %s", job.name, language or "language unknown", m.coverage())
    return m


def languages_of(keys: list[str]) -> dict[str, list[str]]:
    """package -> the languages its stored maps were made in (from ``map_id`` keys)."""
    out: dict[str, list[str]] = {}
    for key in keys:
        package, lang = split_map_id(key)
        out.setdefault(package, []).append(lang)
    return out


__all__ = ["Survey", "explore_one", "languages_of", "survey"]
