"""Turning observed screens into app-map screens, and runs into app-map edges.

``new_screen`` makes a ``MapScreen`` from a parse: its title and salient words, a small
thumbnail, and its tappable elements with their re-identification fingerprints (one
element per resource id, so a list of many rows contributes one row).  ``learn_step``
adds what a solved run or a demonstration did (tapping this led there) to a map, so
demonstrations and runs grow the same map exploration builds.

Pure functions over core types; no device, no LLM, no I/O.
"""

from __future__ import annotations

import io
import re

import numpy as np

from agent.knowledge.app_map import OUTSIDE, TRIED, AppMap, MapElement, MapScreen
from agent.knowledge.graph import element_key
from agent.knowledge.screen_key import id_tail, screen_key
from agent.macros.fingerprint import fingerprint_of
from agent.macros.reidentify import Match, MatchLevel
from agent.structured import choosable, element_name, takes_a_tap
from agent.types import Fingerprint
from vision.types import Element, ElementKind, ScreenParse

_TITLE_MAX = 40
_TEXTS = 10
_THUMB_W = 216
_TOP_SHARE = 0.2
#: A control found again only by its fingerprint must be at least this similar.
SURE_FINGERPRINT = 0.8


def sure_match(found: Match, fp: Fingerprint) -> bool:
    """Found by id, words or icon; or, for a control that has none of these, by a close
    fingerprint: sure enough to tap it (a named row matched only by its place in a list
    is another row)."""
    if found.element is None:
        return False
    if found.level in (MatchLevel.EXACT_ID, MatchLevel.RESOURCE_ID, MatchLevel.TEXT, MatchLevel.ICON_LABEL):
        return True
    nameless = not (fp.text or fp.label or fp.resource_id)
    return nameless and found.level is MatchLevel.FINGERPRINT and found.score >= SURE_FINGERPRINT


def thumbnail(image: np.ndarray) -> bytes:
    from PIL import Image

    img = Image.fromarray(np.ascontiguousarray(image))
    h = max(1, round(img.height * _THUMB_W / max(1, img.width)))
    img = img.resize((_THUMB_W, h))
    buf = io.BytesIO()
    img.save(buf, format="PNG", optimize=True)
    return buf.getvalue()


def salient(parse: ScreenParse, activity: str = "") -> tuple[str, tuple[str, ...]]:
    """The screen's title and its salient words, top to bottom.

    The title is the first static text in the top fifth of the screen outside any list
    (a toolbar or dialog title); else the activity's name ("NetworkActivity" ->
    "Network") when it names more than the app's main screen; else the first text."""
    lists = [e.rect for e in parse.elements if e.scrollable]
    top = parse.screen_size.height * _TOP_SHARE
    if parse.occluder is not None:
        top = parse.occluder.top + parse.occluder.height * _TOP_SHARE
    words: list[str] = []
    texts: list[str] = []
    heads: list[str] = []
    for e in sorted(parse.elements, key=lambda e: (e.rect.top, e.rect.left)):
        if e.kind in (ElementKind.STATUS_BAR, ElementKind.NAVIGATION_BAR) or e.covered:
            continue
        t = " ".join((e.text or e.label.split(" · ")[0]).split())
        if t and len(t) <= _TITLE_MAX and not t.replace(":", "").replace("%", "").replace(".", "").isdigit():
            words.append(t)
            if e.text and not e.clickable and e.kind is not ElementKind.EDIT_TEXT:
                texts.append(t)
                if e.rect.top <= top and not any(r.contains_rect(e.rect) for r in lists) and len(t) > 1:
                    heads.append(t)
    words = list(dict.fromkeys(words))
    name = activity.rsplit(".", 1)[-1].removesuffix("Activity")
    named = "" if name.lower() in ("", "main", "home", "launcher") else re.sub(r"(?<=[a-z])(?=[A-Z])", " ", name)
    title = (heads[0] if heads else "") or named or next((w for w in texts if len(w) > 1), "") or \
        next((w for w in words if len(w) > 1), "")
    return title, tuple(words[:_TEXTS])


def new_screen(key: str, parse: ScreenParse, package: str, activity: str = "", image: np.ndarray | None = None,
               shape: str = "") -> tuple[MapScreen, dict[str, Element]]:
    """The map screen for this parse, and the parse's element behind each map element."""
    title, texts = salient(parse, activity)
    size = (parse.screen_size.width, parse.screen_size.height)
    screen = MapScreen(key, package, activity, title, texts, thumbnail_png=thumbnail(image) if image is not None else b"",
                       size=size, shape=shape)
    found: dict[str, Element] = {}
    repeated: set[str] = set()
    for e in choosable(parse):
        if not takes_a_tap(e) or (e.kind is ElementKind.CONTAINER and not e.clickable):
            continue
        k = element_key(e)
        tail = id_tail(e.resource_id) if e.resource_id else ""
        if k in screen.elements or (tail and tail in repeated):
            continue
        if tail:
            repeated.add(tail)
        screen.elements[k] = MapElement(k, element_name(e), e.kind.value, fingerprint_of(e, parse, image),
                                        bounds=(e.rect.left, e.rect.top, e.rect.right, e.rect.bottom))
        found[k] = e
    return screen, found


def learn_step(m: AppMap, before: ScreenParse, element: Element, after: ScreenParse, package_after: str,
               source: str = "run") -> tuple[str, str]:
    """Record on ``m`` that tapping ``element`` on ``before`` led to ``after`` (in ``package_after``).

    Screens are matched by shape (the run does not know activities); unknown ones are
    added without a thumbnail.  Returns the (source, destination) screen keys."""
    src = _screen_for(m, before, m.package)
    k = element_key(element)
    screen = m.screens[src]
    if k not in screen.elements:
        screen.elements[k] = MapElement(k, element_name(element), element.kind.value, fingerprint_of(element, before),
                                        bounds=(element.rect.left, element.rect.top, element.rect.right,
                                                element.rect.bottom))
    screen.elements[k].status = TRIED
    dst = _screen_for(m, after, m.package) if package_after == m.package else OUTSIDE
    m.add_edge(src, k, dst, source)
    return src, dst


def _screen_for(m: AppMap, parse: ScreenParse, package: str) -> str:
    sk = screen_key(parse, package, "")
    found = m.find(sk.key, sk.shape)
    if found is not None:
        return found
    screen, _els = new_screen("r" + sk.shape[:11], parse, package, shape=sk.shape)
    m.screens.setdefault(screen.key, screen)
    return screen.key
