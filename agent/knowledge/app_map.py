"""An app's map: the screens of one app (by structural key), the elements on each, and
which element leads to which screen.  Built by exploration (``agent.knowledge.explore``)
and grown by solved runs and demonstrations (``Knowledge.learn_transitions``).

What the map answers, with no model:

* ``describe(screen, element)`` — what an element leads to, in words (the next
  screen's title and salient texts);
* ``targets(goal)`` — the screens most likely to hold what a goal is after (a
  ``Scorer`` over each screen's words and the words of the elements leading to it);
* ``path(src, dst)`` — the shortest known sequence of elements from one screen to another.

The map is knowledge, not code: ``to_data`` / ``from_data`` give a JSON document with
``MAP_SCHEMA`` as its version, for one app and one app version (``AppMap.app_version``);
a stored map whose app version differs from the phone's is stale (``is_stale``).  A map
records the UI language it was made in (``AppMap.language``, "" when unknown): its words
are that language's (``agent.knowledge.map_language`` keeps one map per app and language).
An optional field added to the document does not bump the schema: older readers skip it.

Plain data and pure functions; no device, no LLM, no I/O.
"""

from __future__ import annotations

import base64
import logging
import re
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agent import codec
from agent.knowledge.retrieval import stems
from agent.knowledge.types import MapEdgeView, MapElementView, MapPicture, MapScreenView
from agent.screen_text import app_words
from agent.types import Fingerprint

log = logging.getLogger(__name__)

#: Version of the stored document; bump when its shape changes.
MAP_SCHEMA = 1

#: Element statuses.
UNTRIED, TRIED, SKIPPED = "untried", "tried", "skipped"
#: The pseudo-screen "outside the app" (another app, the launcher).
OUTSIDE = "outside"
#: How much a screen's own words count against its app's in ``AppMap.targets``.
SCREEN_WEIGHT = 0.6
#: Words of a goal that say what to do, not where: left out when matching screens.
_VERBS = frozenset({"turn", "on", "off", "open", "show", "go", "switch", "set", "please", "start", "from", "home",
                    "screen", "app"})
#: Words on nearly every screen: they say nothing about what a screen holds.
_FURNITURE = frozenset({"navigate up", "on", "off", "more options", "button", "ok", "cancel", "back", "search"})
#: Quoted text in a goal ('Pack the tent', "Good luck!"); one group per kind of quote holds the text.
QUOTED = re.compile(r"(?<!\w)'([^']+)'(?!\w)|\"([^\"]+)\"|\u2018([^\u2019]+)\u2019|\u201c([^\u201d]+)\u201d")
_DASHES = str.maketrans({"\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2212": "-"})


def normalise(text: str) -> str:
    """Text for matching: typographic dashes as plain hyphens ("Wi‑Fi" -> "Wi-Fi")."""
    return text.translate(_DASHES)


class MapError(ValueError):
    """A stored map cannot be read (newer schema, damaged document)."""


@dataclass
class MapElement:
    """One control of a screen, how to find it again, and what tapping it did."""

    key: str  # stable key within the screen (``graph.element_key``)
    name: str  # the words a user reads on it
    kind: str
    fingerprint: Fingerprint
    status: str = UNTRIED
    reason: str = ""  # why it was not tried ("deleting", "password field", ...)
    leads_to: str = ""  # screen key it led to ("" unknown, OUTSIDE for another app)
    bounds: tuple[int, int, int, int] = (0, 0, 0, 0)  # where it was when first seen
    below: bool = False  # seen only after scrolling the screen's list down once


@dataclass
class MapScreen:
    """One screen of the app."""

    key: str
    package: str
    activity: str = ""
    title: str = ""
    texts: tuple[str, ...] = ()  # salient words, top to bottom
    elements: dict[str, MapElement] = field(default_factory=dict)
    thumbnail_png: bytes = b""  # a small screenshot for views
    size: tuple[int, int] = (0, 0)  # the screen's size in device pixels
    visits: int = 1
    unreachable: str = ""  # why exploration could not come back here, if it could not
    shape: str = ""  # the key without the activity (``screen_key.ScreenKey.shape``)

    def untried(self) -> list[MapElement]:
        return [e for e in self.elements.values() if e.status == UNTRIED]

    def label(self) -> str:
        return self.title or (self.texts[0] if self.texts else self.key[:6])


@dataclass
class MapEdge:
    src: str
    element: str  # element key on ``src``
    dst: str
    count: int = 1
    source: str = "explore"  # explore | run | demonstration


@dataclass
class AppMap:
    """The map of one app (``package``) at one version (``app_version``)."""

    package: str
    label: str = ""
    app_version: str = ""
    root: str = ""  # the screen the app opens on
    screens: dict[str, MapScreen] = field(default_factory=dict)
    edges: dict[tuple[str, str], MapEdge] = field(default_factory=dict)
    steps_used: int = 0
    seconds_used: float = 0.0
    complete: bool = False  # exploration ran out of things to try (not out of budget)
    language: str = ""  # the UI language the map's words are in ("de"; "" unknown)

    # ---- building --------------------------------------------------------------------------
    def add_edge(self, src: str, element: str, dst: str, source: str = "explore") -> MapEdge:
        edge = self.edges.get((src, element))
        if edge is not None and edge.dst == dst:
            edge.count += 1
            return edge
        edge = MapEdge(src, element, dst, 1, source)  # the latest outcome wins
        self.edges[(src, element)] = edge
        screen = self.screens.get(src)
        if screen is not None and element in screen.elements:
            screen.elements[element].leads_to = dst
        return edge

    def find(self, key: str, shape: str = "") -> str | None:
        """The screen with this key, else the only one with this shape."""
        if key in self.screens:
            return key
        same = [s.key for s in self.screens.values() if shape and s.shape == shape]
        return same[0] if len(same) == 1 else None

    def is_stale(self, app_version: str) -> bool:
        """True when the map was made for another version of the app (unknown versions never are)."""
        return bool(self.app_version and app_version and self.app_version != app_version)

    # ---- reading ---------------------------------------------------------------------------
    def describe(self, screen_key: str, element_key: str) -> str:
        """What an element leads to, in words ("" when unknown)."""
        edge = self.edges.get((screen_key, element_key))
        if edge is None:
            return ""
        if edge.dst == OUTSIDE:
            return "leaves the app"
        if edge.dst == screen_key:
            return "stays on this screen"
        dst = self.screens.get(edge.dst)
        if dst is None:
            return ""
        extra = [t for t in dst.texts if t != dst.title][:4]
        return f"opens '{dst.label()}'" + (f" (shows {', '.join(repr(t) for t in extra)})" if extra else "")

    def screen_words(self, key: str) -> str:
        """Everything the map knows a screen by: its title and the words on the elements
        that lead to it (both twice: they name the screen), its texts and element names."""
        s = self.screens.get(key)
        if s is None:
            return ""
        into: list[str] = []
        for e in self.edges.values():
            src = self.screens.get(e.src)
            el = src.elements.get(e.element) if src is not None and e.dst == key and e.src != key else None
            if el is not None:
                into.append(el.fingerprint.label or el.name)
        words = [s.title, s.title, *into, *into, *s.texts, *(el.name for el in s.elements.values())]
        return normalise(" ".join(w for w in words if w.strip().casefold() not in _FURNITURE))

    def app_words(self) -> str:
        """The app's name and every screen's title: what the app as a whole is about."""
        return normalise(" ".join([self.label, self.label, *(s.title for s in self.screens.values())]))

    def app_document(self) -> str:
        """Every word the map holds (name and titles counted more), for telling apps apart:
        "checklist" is on a Notes screen, "wishlist" on a Shop one, though both apps' titles
        miss them."""
        words = [self.label, self.label, self.label]
        for s in self.screens.values():
            words += [s.title, s.title, *s.texts, *(el.name for el in s.elements.values())]
        return normalise(" ".join(w for w in words if w and w.strip().casefold() not in _FURNITURE))

    def path(self, src: str, dst: str) -> list[MapEdge] | None:
        """The shortest known way from ``src`` to ``dst`` (``[]`` when they are the same)."""
        if src == dst:
            return []
        if src not in self.screens or dst not in self.screens:
            return None
        out: dict[str, list[MapEdge]] = {}
        for e in sorted(self.edges.values(), key=lambda e: (e.src, e.element)):
            if e.dst != e.src and e.dst in self.screens:
                out.setdefault(e.src, []).append(e)
        prev: dict[str, MapEdge] = {}
        seen = {src}
        queue = deque([src])
        while queue:
            cur = queue.popleft()
            for e in out.get(cur, []):
                if e.dst in seen:
                    continue
                seen.add(e.dst)
                prev[e.dst] = e
                if e.dst == dst:
                    steps = [e]
                    while steps[0].src != src:
                        steps.insert(0, prev[steps[0].src])
                    return steps
                queue.append(e.dst)
        return None

    def targets(self, goal: str, scorer: Any, k: int = 3) -> list[tuple[str, float]]:
        """The ``k`` screens whose words best match ``goal`` (``scorer.scores``), best first.

        A screen's score blends its own match (``SCREEN_WEIGHT``) with its app's: "my Gym
        alarm" belongs to the app about alarms even where another app shows the word."""
        keys = list(self.screens)
        if not keys or not goal.strip():
            return []
        q = " ".join(w for w in normalise(goal).split() if w.casefold().strip(".,!?") not in _VERBS) or goal
        scores = scorer.scores(q, [self.screen_words(key) for key in keys])
        app = 1.0 if names_app(goal, self.label) else float(scorer.scores(q, [self.app_words()])[0])
        blended = [SCREEN_WEIGHT * float(s) + (1 - SCREEN_WEIGHT) * app for s in scores]
        ranked = sorted(zip(keys, blended, strict=True), key=lambda p: -p[1])
        return [(key, round(s, 4)) for key, s in ranked[:k] if s > 0]

    def coverage(self) -> dict[str, int]:
        """Counts for views and reports."""
        elements = [e for s in self.screens.values() for e in s.elements.values()]
        return {"screens": len(self.screens), "transitions": len(self.edges),
                "elements": len(elements), "tried": sum(e.status == TRIED for e in elements),
                "untried": sum(e.status == UNTRIED for e in elements),
                "not_tried": sum(e.status == SKIPPED for e in elements),
                "unreachable": sum(bool(s.unreachable) for s in self.screens.values())}

    def not_tried(self) -> dict[str, int]:
        """How many elements were left alone, by reason ("deleting": 3)."""
        out: dict[str, int] = {}
        for s in self.screens.values():
            for e in s.elements.values():
                if e.status == SKIPPED:
                    out[e.reason] = out.get(e.reason, 0) + 1
        return out

    def picture(self) -> MapPicture:
        """A frozen snapshot for views."""
        screens = tuple(
            MapScreenView(key=s.key, title=s.label(), texts=s.texts, thumbnail_png=s.thumbnail_png, size=s.size,
                          elements=tuple(MapElementView(e.key, e.name, e.kind, e.status, e.reason,
                                                        self.describe(s.key, e.key), e.bounds)
                                         for e in s.elements.values()),
                          is_root=s.key == self.root, unreachable=s.unreachable)
            for s in self.screens.values())
        names = {(s.key, e.key): e.name for s in self.screens.values() for e in s.elements.values()}
        edges = tuple(MapEdgeView(e.src, e.element, names.get((e.src, e.element), e.element), e.dst, e.count, e.source)
                      for e in self.edges.values())
        return MapPicture(self.package, self.label, self.app_version, screens, edges, self.coverage(),
                          tuple(sorted(self.not_tried().items())), self.steps_used, round(self.seconds_used, 1),
                          self.complete, self.language)

    # ---- persistence -----------------------------------------------------------------------
    def to_data(self) -> dict[str, Any]:
        return {
            "schema": MAP_SCHEMA, "package": self.package, "label": self.label, "app_version": self.app_version,
            "root": self.root, "steps_used": self.steps_used, "seconds_used": round(self.seconds_used, 2),
            "complete": self.complete, "language": self.language,
            "screens": [{
                "key": s.key, "package": s.package, "activity": s.activity, "title": s.title, "texts": list(s.texts),
                "thumbnail_png": base64.b64encode(s.thumbnail_png).decode("ascii"), "size": list(s.size),
                "visits": s.visits, "unreachable": s.unreachable, "shape": s.shape,
                "elements": [{"key": e.key, "name": e.name, "kind": e.kind, "fingerprint": codec.to_data(e.fingerprint),
                              "status": e.status, "reason": e.reason, "leads_to": e.leads_to,
                              "bounds": list(e.bounds), "below": e.below} for e in s.elements.values()],
            } for s in self.screens.values()],
            "edges": [{"src": e.src, "element": e.element, "dst": e.dst, "count": e.count, "source": e.source}
                      for e in self.edges.values()],
        }

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> AppMap:
        if not isinstance(data, dict) or "package" not in data:
            raise MapError("not an app map document (no 'package')")
        schema = int(data.get("schema", 0))
        if schema > MAP_SCHEMA:
            raise MapError(f"the app map was written by a newer Tapwise (schema {schema}, this one reads "
                           f"{MAP_SCHEMA}): upgrade Tapwise or explore the app again")
        package, label = str(data["package"]), str(data.get("label", ""))
        if not label or label == package:  # a map made where the phone could not name the app
            label = app_words(package)
        m = cls(package, label, str(data.get("app_version", "")),
                str(data.get("root", "")), steps_used=int(data.get("steps_used", 0)),
                seconds_used=float(data.get("seconds_used", 0.0)), complete=bool(data.get("complete", False)),
                language=str(data.get("language", "") or ""))
        for s in data.get("screens", []):
            screen = MapScreen(str(s["key"]), str(s.get("package", m.package)), str(s.get("activity", "")),
                               str(s.get("title", "")), tuple(s.get("texts", ())),
                               thumbnail_png=base64.b64decode(s.get("thumbnail_png", "") or b""),
                               size=tuple(s.get("size", (0, 0)))[:2],  # type: ignore[arg-type]
                               visits=int(s.get("visits", 1)), unreachable=str(s.get("unreachable", "")),
                               shape=str(s.get("shape", "")))
            for e in s.get("elements", []):
                screen.elements[e["key"]] = MapElement(
                    e["key"], e.get("name", ""), e.get("kind", ""), codec.from_data(Fingerprint, e.get("fingerprint", {})),
                    e.get("status", UNTRIED), e.get("reason", ""), e.get("leads_to", ""),
                    tuple(e.get("bounds", (0, 0, 0, 0)))[:4], bool(e.get("below", False)))  # type: ignore[arg-type]
            m.screens[screen.key] = screen
        for e in data.get("edges", []):
            m.edges[(e["src"], e["element"])] = MapEdge(e["src"], e["element"], e["dst"], int(e.get("count", 1)),
                                                        e.get("source", "explore"))
        return m


def names_app(goal: str, label: str) -> bool:
    """True when the goal names the app: its name as a word, or every word of it folded the
    stemmed ("a note" names Notes, "world clocks" names Clock; "the text" does not name Messages)."""
    if not label:
        return False
    if re.search(rf"\b{re.escape(label.casefold())}\b", goal.casefold()):
        return True
    name = set(stems(label))
    return bool(name) and name <= set(stems(goal))


def rank_apps(goal: str, maps: Sequence[AppMap], scorer: Any) -> list[tuple[AppMap, float]]:
    """The maps' apps, best match for ``goal`` first: one scorer call over every app's
    ``app_document`` (so a word many apps show weighs little; quoted text left out), an app
    the goal names first (its score raised by 1)."""
    if not maps or not goal.strip():
        return []
    said = QUOTED.sub(" ", normalise(goal))  # quoted words are what to type or a name, not a place
    q = " ".join(w for w in said.split() if w.casefold().strip(".,!?") not in _VERBS)
    if not q.strip():
        return [(m, 1.0) for m in maps if names_app(goal, m.label)]
    scores = scorer.scores(q, [m.app_document() for m in maps])
    ranked = [(m, 1.0 + float(s) if names_app(goal, m.label) else float(s)) for m, s in zip(maps, scores, strict=True)]
    return sorted(ranked, key=lambda p: -p[1])


def path_words(app: AppMap, steps: Sequence[MapEdge]) -> str:
    """``'Network & internet' → 'Internet'``: the names of the elements to tap, in order."""
    names = []
    for e in steps:
        s = app.screens.get(e.src)
        el = s.elements.get(e.element) if s else None
        names.append(f"'{el.name if el else e.element}'")
    return " → ".join(names)
