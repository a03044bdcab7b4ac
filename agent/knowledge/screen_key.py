"""Which screen of an app this is: a structural fingerprint that ignores volatile content.

The app map (``agent.knowledge.app_map``) needs "the same screen again" to hold when the
clock ticks, a counter moves, a list grows or shrinks, the theme flips or the language
changes, and to fail when the user is on another page of the app.  The key is built
from the screen's structure, never from its words or pixels:

* the app's package and activity;
* the resource ids of the app's own elements (a list's rows share ids, so a list of
  three contacts and a list of thirty give the same set);
* for controls without an id that sit outside any scrolling list, their kind and a
  coarse band of where they start (top edge in twelfths of the screen).

Only a screen with no resource id at all (a parse from pixels alone) falls back to its
short static words, with digits masked: then a language change does give another key,
which the caller is told through ``ScreenKey.by_words``.

Pure functions over ``ScreenParse``; no device, no I/O.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from vision.types import Element, ElementKind, ScreenParse

_CHROME = (ElementKind.STATUS_BAR, ElementKind.NAVIGATION_BAR)
_DIGITS = re.compile(r"\d+")
_CONTROL_KINDS = frozenset({ElementKind.BUTTON, ElementKind.EDIT_TEXT, ElementKind.SWITCH, ElementKind.CHECK_BOX,
                            ElementKind.RADIO_GROUP, ElementKind.SPINNER, ElementKind.SEEK_BAR})
_BANDS = 12
_WORDS_MAX = 30


@dataclass(frozen=True, slots=True)
class ScreenKey:
    """A screen's structural key: ``key`` is a short hash of ``parts``."""

    key: str
    parts: tuple[str, ...]
    by_words: bool = False  # no resource ids on the screen: the words stood in for them
    shape: str = ""  # the same hash without the activity (a recorded run does not know it)


def id_tail(resource_id: str) -> str:
    """``org.example.settings:id/network`` -> ``network``."""
    return resource_id.rsplit("/", 1)[-1].strip().lower()


def _content(parse: ScreenParse) -> list[Element]:
    chrome = [e.rect for e in parse.elements if e.kind in _CHROME]
    return [e for e in parse.elements if e.kind not in _CHROME and not any(r.contains_rect(e.rect) for r in chrome)]


def _in_list(e: Element, lists: list[Element]) -> bool:
    return any(s.id != e.id and s.rect.contains_rect(e.rect) for s in lists)


def screen_key(parse: ScreenParse, package: str = "", activity: str = "") -> ScreenKey:
    """The structural key of this screen; see the module docstring."""
    content = _content(parse)
    lists = [e for e in content if e.scrollable]
    height = max(1, parse.screen_size.height)
    parts: set[str] = set()
    has_ids = any(e.resource_id for e in content)
    for e in content:
        if e.resource_id:
            parts.add("id:" + id_tail(e.resource_id))
        elif e.scrollable:
            parts.add("list:" + e.kind.value)
        elif has_ids and e.kind in _CONTROL_KINDS and not _in_list(e, lists):
            parts.add(f"{e.kind.value}@{min(_BANDS - 1, e.rect.top * _BANDS // height)}")
    by_words = False
    if not has_ids:
        by_words = True
        for e in content:
            words = (e.text or e.label).strip().casefold()
            if words and len(words) <= _WORDS_MAX and not _in_list(e, lists):
                parts.add("w:" + _DIGITS.sub("#", words))
    body = tuple(sorted(parts))
    ordered = (f"pkg:{package}", f"act:{activity}", *body)
    return ScreenKey(_hash(ordered), ordered, by_words, _hash((f"pkg:{package}", *body)))


def _hash(parts: tuple[str, ...]) -> str:
    return hashlib.sha1("\x1f".join(parts).encode("utf-8")).hexdigest()[:12]
