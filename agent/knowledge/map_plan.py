"""Which apps of a phone need exploring, and why: the plan automatic exploration follows.

``launchable_apps(device)`` lists the apps the launcher shows, as (name, package): a phone
that lists them itself (``agent.device.KnowsApps``: the virtual phone) is asked; any other
through its adb shell (``cmd package query-activities`` for the launcher category, as
Android 7+ answers it), named from their package ("org.example.settings" -> "Settings")
since the shell cannot read an app's label.

``apps_to_explore(apps, maps, …)`` says, for each launchable app, whether its map in the
phone's language is missing, stale, of unknown language or unfinished, and how many
steps the next round may take:

* no map in this language (another language's map may exist: it is kept, and this one is
  made beside it);
* a map made for another version of the app than the phone has;
* a map that records no language (made before maps knew theirs);
* a map left unfinished before it had the whole budget (exploration was stopped: a task
  started, the user recorded, the window closed) — it carries on where it stopped.  A map
  that spent its budget without finishing is left as it is (exploring it again would only
  repeat what did not finish).

Pure functions except ``launchable_apps`` (one device call); no Qt.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from agent.device import KnowsApps
from agent.knowledge.app_map import AppMap
from agent.screen_text import app_words

log = logging.getLogger(__name__)

#: Lists the activities the launcher shows (Android 7+).
LAUNCHER_QUERY = ("cmd package query-activities --brief -a android.intent.action.MAIN "
                  "-c android.intent.category.LAUNCHER")
_COMPONENT = re.compile(r"^\s*([A-Za-z][\w]*(?:\.[\w]+)+)/[\w.$]+\s*$")


@dataclass(frozen=True, slots=True)
class AppToExplore:
    """One app the next exploration round takes, and why."""

    package: str
    name: str
    reason: str
    steps: int  # the step budget of this round (less than the whole budget for a map carried on)
    resume: bool = False  # carry on with the stored map (else start a new one)


def launchable_apps(device: object) -> list[tuple[str, str]]:
    """(name, package) of every app the phone's launcher shows; [] when it cannot say."""
    if isinstance(device, KnowsApps):
        return [(name, pkg) for name, pkg in device.installed_apps()]
    shell = getattr(device, "shell", None)
    if not callable(shell):
        return []
    out = str(shell(LAUNCHER_QUERY))
    packages = dict.fromkeys(m.group(1) for m in map(_COMPONENT.match, out.splitlines()) if m is not None)
    return [(app_words(pkg) or pkg, pkg) for pkg in packages]


def apps_to_explore(apps: Sequence[tuple[str, str]], maps: Mapping[str, AppMap | None], *, language: str,
                    versions: Mapping[str, str] | None = None, max_steps: int = 600,
                    other_languages: Mapping[str, Sequence[str]] | None = None) -> list[AppToExplore]:
    """The apps to explore next, in the launcher's order (see the module docstring).

    ``maps``: the stored map of each package in ``language`` (or the one standing in for
    it), None when there is none; ``versions``: the installed versions ("" unknown);
    ``other_languages``: the languages other maps of a package were made in (for the reason)."""
    versions = versions or {}
    other_languages = other_languages or {}
    out: list[AppToExplore] = []
    for name, package in apps:
        m = maps.get(package)
        version = versions.get(package, "")
        where = f" in {language}" if language else ""
        if m is None:
            others = [lang for lang in other_languages.get(package, ()) if lang and lang != language]
            reason = (f"its map is in {', '.join(sorted(others))}; the phone shows {language}" if others and language
                      else f"no map{where} yet")
            out.append(AppToExplore(package, name, reason, max_steps))
        elif m.is_stale(version):
            out.append(AppToExplore(package, name, f"its map is for version {m.app_version}, the phone has {version}",
                                    max_steps))
        elif language and not m.language:
            out.append(AppToExplore(package, name, "its map does not say which language it was made in",
                                    max_steps))
        elif not m.complete and m.steps_used < max_steps:
            out.append(AppToExplore(package, name, f"its exploration stopped after {m.steps_used} of {max_steps} "
                                    "steps", max_steps - m.steps_used, resume=True))
    return out


__all__ = ["LAUNCHER_QUERY", "AppToExplore", "apps_to_explore", "launchable_apps"]
