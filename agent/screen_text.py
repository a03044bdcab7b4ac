"""How a parsed screen is shown to a model: fenced description, element list, element JSON,
and the screen's gist.

The gist is a deterministic line about the screen from the parse alone: which app (from
the foreground package), the page's title and a few salient entries, or "the home screen"
when a launcher is in front.  It heads every description, so a model (the latent-state
estimator's screen summary among them) reads what the parse knows, and ``gist_in`` reads
it back from a description, so a summary that contradicts it can be caught
(``agent.latent.grounded_summary``).

On-screen words are untrusted data.  ``fenced`` wraps a description in ``<screen>`` tags
and neutralises anything inside that looks like those tags, so text on the phone cannot
close the data block and pose as instructions.  Elements under a dialog, sheet or menu
(``Element.covered``) are never shown nor offered.  No LLM calls, no device access.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from vision.describe import describe, element_line
from vision.row_parts import folded
from vision.types import Element, ElementKind, ScreenParse

_TAG = re.compile(r"</?\s*screen\s*>", re.I)
MAX_CHARS = 6000


def sanitize(text: str) -> str:
    """Screen text with fence look-alikes defused."""
    return _TAG.sub(lambda m: m.group(0).replace("<", "‹").replace(">", "›"), text)


def description(parse: ScreenParse, app: str | None = None, max_chars: int = MAX_CHARS) -> str:
    """The screen for a model: its gist line, then the blocks and elements."""
    text = parse.description or describe(parse.screen_size, parse.elements, parse.blocks, app=app)  # skips covered ones
    text = gist_line(screen_gist(parse, app)) + "\n" + text
    if len(text) > max_chars:
        text = text[: max_chars - 20] + "\n… (screen truncated)"
    return text


def fenced(text: str) -> str:
    return f"<screen>\n{sanitize(text)}\n</screen>"


def actionable(parse: ScreenParse) -> list[Element]:
    """Elements a step may name: interactive ones or ones with words (Prompt2Task's filter),
    never ones a dialog covers."""
    skip = {ElementKind.STATUS_BAR, ElementKind.NAVIGATION_BAR, ElementKind.CONTAINER}
    out = []
    for e in parse.uncovered():
        if e.kind in skip and not e.clickable:
            continue
        if e.clickable or e.checkable or e.scrollable or e.kind is ElementKind.EDIT_TEXT or e.display_name:
            out.append(e)
    return out


def listed(parse: ScreenParse) -> list[Element]:
    """``actionable`` less the parts a list row or tile found in the pixels stands for
    (``vision.row_parts``): what an element list shows a model."""
    parts = folded(parse.elements)
    return [e for e in actionable(parse) if e.id not in parts]


def element_list(parse: ScreenParse, limit: int = 80) -> str:
    lines = [element_line(e) for e in listed(parse)[:limit]]
    return sanitize("\n".join(lines)) if lines else "(no elements)"


def elements_json(parse: ScreenParse, limit: int = 80) -> str:
    """App-D style element list: id, words, centre and size in device pixels."""
    rows = []
    for e in listed(parse)[:limit]:
        c = e.rect.center
        rows.append({"id": e.id, "text": sanitize(e.display_name or e.kind.value), "kind": e.kind.value,
                     "center": [c.x, c.y], "size": [e.rect.width, e.rect.height]})
    return json.dumps({"UI elements": rows}, ensure_ascii=False)


# ---- the gist -------------------------------------------------------------------------------

GIST_PREFIX = "Now showing: "
HOME_WORDS = "the home screen (launcher)"
#: Foreground packages that are a home screen, not an app's page.
_LAUNCHER = re.compile(r"launcher|(^|\.)home$|^com\.miui\.home$", re.I)
#: The last package segment -> the app's usual name, where the two differ.
_APP_WORDS = {"deskclock": "Clock", "documentsui": "Files", "messaging": "Messages", "mms": "Messages",
              "dialer": "Phone", "gm": "Gmail", "vending": "Play Store", "keep": "Keep"}
_GENERIC = {"com", "org", "net", "android", "google", "apps", "app", "mobile"}
_TOP_SHARE = 0.2  # the title is a text in the top fifth of the screen
_SALIENT = 4
_WORDS_MAX = 32
_GIST_LINE = re.compile(r"^Now showing: (?:the (?P<app>.+?) app(?:, )?)?(?:page “(?P<title>.*?)”)?")


def is_home(package: str | None) -> bool:
    """True when ``package`` (the foreground app) is a home screen, not an app."""
    return bool(package) and bool(_LAUNCHER.search(package or ""))


@dataclass(frozen=True, slots=True)
class ScreenGist:
    """What the parse says the screen is.  ``home``: True for a launcher, False for an
    app's page, None when the foreground app is not known (a screenshot without it)."""

    app: str = ""
    title: str = ""
    salient: tuple[str, ...] = ()
    home: bool | None = None

    @property
    def head(self) -> str:
        """Which screen, without its entries ("the Settings app, page “Network & internet”")."""
        if self.home:
            return HOME_WORDS
        parts = [f"the {self.app} app" if self.app else "", f"page \u201c{self.title}\u201d" if self.title else ""]
        return ", ".join(p for p in parts if p) or "a screen"

    @property
    def text(self) -> str:
        """The gist in words (what a model reads and a replaced summary shows)."""
        return self.head + (f"; on it: {', '.join(self.salient)}" if self.salient else "")

    def names(self) -> tuple[str, ...]:
        """The words that identify this screen (app and title), lower-case."""
        return tuple(w.lower() for w in (self.app, self.title) if w)


def app_words(package: str) -> str:
    """An app's usual name from its package (``org.example.alarmclock`` -> Alarmclock)."""
    segments = [p for p in package.split(".") if p and p.lower() not in _GENERIC]
    if not segments:
        return package
    last = segments[-1].lower()
    return _APP_WORDS.get(last, last[:1].upper() + last[1:])


def _short(text: str) -> str:
    text = " ".join(text.split(" \u00b7 ")[0].split())
    return text if len(text) <= _WORDS_MAX else text[: _WORDS_MAX - 1].rstrip() + "\u2026"


def _title(parse: ScreenParse, kept: list[Element]) -> str:
    """The page's title: the top-most plain text near the top that is not part of a
    tappable entry (a list row's words are not the page's title)."""
    limit = parse.screen_size.height * _TOP_SHARE
    tappable = [e.rect for e in kept if e.clickable]
    texts = [e for e in kept if e.kind is ElementKind.TEXT and e.text and e.rect.top < limit and not e.clickable
             and not any(r.contains_rect(e.rect) for r in tappable)]
    return _short(min(texts, key=lambda e: (e.rect.top, e.rect.left)).text) if texts else ""


def _entries(parse: ScreenParse) -> list[Element]:
    """What the user can act on, in reading order (a list row or tile found in the pixels
    once, not its parts: ``vision.row_parts``); the screen's words when nothing is."""
    ordered = sorted(listed(parse), key=lambda e: (e.rect.top, e.rect.left))
    acting = [e for e in ordered if e.clickable or e.checkable or e.kind is ElementKind.EDIT_TEXT]
    return acting or ordered


def screen_gist(parse: ScreenParse, app: str | None = None) -> ScreenGist:
    """The gist of ``parse`` with ``app`` (the foreground package) in front."""
    kept = [e for e in parse.uncovered() if e.kind not in (ElementKind.STATUS_BAR, ElementKind.NAVIGATION_BAR)]
    home = None if not app else is_home(app)
    title = "" if home else _title(parse, kept)
    salient: list[str] = []
    for e in _entries(parse):
        words = _short(e.display_name) if e.display_name else ""
        if words and words != title and words not in salient and words.lower() not in ("on", "off"):
            salient.append(words)
        if len(salient) == _SALIENT:
            break
    return ScreenGist(app_words(app) if app and not home else "", title, tuple(salient), home)


def gist_line(gist: ScreenGist) -> str:
    return sanitize(GIST_PREFIX + gist.text + ".")


def gist_in(screen_text: str) -> ScreenGist | None:
    """The gist a description (fenced or not) starts with, read back; None without one."""
    for line in screen_text.splitlines()[:3]:
        if not line.startswith(GIST_PREFIX):
            continue
        if line.startswith(GIST_PREFIX + HOME_WORDS):
            return ScreenGist(home=True)
        m = _GIST_LINE.match(line)
        app, title = (m.group("app") or "", m.group("title") or "") if m else ("", "")
        return ScreenGist(app, title, home=False if app else None)
    return None
