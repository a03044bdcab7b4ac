"""Strict text matching between an instruction's object and screen elements.

Similarity is Prompt2Task's: ``2 * LCS / (len(a) + len(b))`` with LCS the longest common
*substring*, computed on lower-cased words after dropping articles and trailing widget
words ("the Alarm tab" ~ "Alarm").  The margin of a match is how far the best entry stands
above the next *other* entry (one that is neither inside the winner nor around it: a row
and its own label are one entry); ``margin_confidence`` maps it to 0..1.  Pure functions;
no LLM, no device.
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher

from vision.types import Element, ScreenParse

_KIND_WORDS = {"tab", "button", "switch", "toggle", "icon", "field", "box", "menu", "option", "item", "link",
               "entry", "row", "bar", "text", "label", "checkbox", "check", "radio", "the", "a", "an", "on", "in"}


_DASHES = re.compile(r"[\u2010-\u2015\u2212\u00ad]")
_KIND_HINTS = {"switch": ("switch",), "toggle": ("switch", "check_box"), "checkbox": ("check_box",),
               "check": ("check_box",), "field": ("edit_text",), "box": ("edit_text", "check_box"),
               "button": ("button",), "tab": ("button", "text"), "icon": ("button", "image"), "bar": ("edit_text",)}


def simplify(text: str) -> str:
    words = re.findall(r"[\w'&+-]+", _DASHES.sub("-", text.lower()))
    kept = [w for w in words if w not in _KIND_WORDS]
    return " ".join(kept or words)


def lcs_similarity(a: str, b: str) -> float:
    """2 x longest common substring / total length (0..1)."""
    if not a or not b:
        return 0.0
    m = SequenceMatcher(None, a, b, autojunk=False).find_longest_match(0, len(a), 0, len(b))
    return 2.0 * m.size / (len(a) + len(b))


def element_texts(e: Element) -> list[str]:
    out = [t for t in (e.text, e.label) if t]
    if e.resource_id:
        out.append(e.resource_id.rsplit("/", 1)[-1].replace("_", " "))
    return out


def similarity(description: str, e: Element) -> float:
    want = simplify(description)
    return max((lcs_similarity(want, simplify(t)) for t in element_texts(e)), default=0.0)


def best_text_match(description: str, parse: ScreenParse, threshold: float = 0.75) -> tuple[Element, float] | None:
    """The element whose words best match ``description``, if it clears ``threshold``.

    Ties prefer clickable elements, then smaller ones (the control rather than its row).
    """
    if not description.strip():
        return None
    hinted = {k for w in re.findall(r"[a-z]+", description.lower()) for k in _KIND_HINTS.get(w, ())}
    best: tuple[float, int, int, int, Element] | None = None
    for e in parse.uncovered():  # never an element a dialog covers
        s = similarity(description, e)
        if s < threshold:
            continue
        key = (round(s, 3), 1 if e.kind.value in hinted else 0,
               1 if (e.clickable or e.checkable or e.kind.value == "edit_text") else 0, -e.rect.area, e)
        if best is None or key[:4] > best[:4]:
            best = key
    return (best[4], best[0]) if best else None


#: A lead this large over the next entry counts as an unambiguous choice.
FULL_MARGIN = 0.5


def runner_up(description: str, parse: ScreenParse, winner: Element) -> float:
    """The best similarity to ``description`` of an entry other than ``winner`` (0 when none):
    elements inside the winner or around it are the same entry and do not compete."""
    best = 0.0
    for e in parse.uncovered():
        if e.id == winner.id or e.rect.contains_rect(winner.rect) or winner.rect.contains_rect(e.rect):
            continue
        best = max(best, similarity(description, e))
    return round(best, 3)


def margin_confidence(best: float, next_best: float) -> float:
    """How sure a text match is, 0..1: the match's own similarity, scaled down when another
    entry comes within ``FULL_MARGIN`` of it (``best * min(1, (best - next) / FULL_MARGIN)``).
    An exact match with no rival within 0.5 gives 1.0; two equally good entries give 0."""
    lead = max(0.0, best - next_best)
    return round(max(0.0, min(1.0, best * min(1.0, lead / FULL_MARGIN))), 3)
