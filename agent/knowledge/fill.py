"""Which text a goal gives for which field on the current screen.

A small model reaches a form or a search box and then taps the field again and again, or
types the whole goal into it.  The goal usually says outright what to type: a quoted
text ("titled 'Tent list'"), an e-mail address, a phone number, the words after
"saying" / "that" in a message, the name after "search" / "find".  ``fill(goal, parse)``
pairs such a value with a field of the screen:

* the field whose words (label, hint, resource id) match the words just before the value
  in the goal ("titled" → Title, "email" → Email, "number" → Phone number), or the
  search box for a searched name, or the message box for a message;
* else the only field on the screen, when there is one — unless the field names the kind
  of another value the goal gives (a phone number, an e-mail address): "Text 'Running late'
  to +1 555-0142" puts the number, not the message, into "Type names, phone numbers";
* never a value a field already holds (it was typed), and — unless it is searched for —
  never one the screen lists (it is there to be tapped, not typed).

Pure function over a parse; no model, no device, no I/O.  It only suggests: the planner
that receives the suggestion decides, and the user approves.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rapidfuzz import fuzz

from agent.knowledge.app_map import QUOTED
from agent.knowledge.lexicon import ConventionWords
from vision.types import Element, ElementKind, ScreenParse

_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_NUMBER = re.compile(r"\+?\d[\d \-()]{4,}\d")
#: The words of every language these conventions read (``agent/knowledge/words/*.toml``).
_W = ConventionWords.load()
_SAYING = _W.patterns(r"\b(?:{saying})\s+(.+?)\s*$")
#: a password after "password (is)"; a PIN is digits ("pin the note" asks for no PIN)
_SECRET = _W.patterns(r"\b(?i:{password})\s+(?:(?i:{is})\s+)?(\S+?)[.,!]?(?=\s|$)"
                      r"|\b(?i:{pin})\s+(?:(?i:{is})\s+)?(\d\S*?)[.,!]?(?=\s|$)", flags=0)
#: a capitalised name after a search verb ("search for Alice Smith")
_SEARCHED = _W.patterns(r"\b(?i:{search_verbs})\s+(?:(?i:{search_for})\s+)?(?:\w+\s+){{0,3}}?"
                        r"([A-Z][\w.-]*(?:\s+[A-Z][\w.-]*)?)", flags=0)
_WORD = re.compile(r"[a-z]{3,}")
#: Words of a field that say it takes a value of one kind (a phone number, an e-mail address).
_KIND_WORDS = {"number": tuple(_W.merged("phone_field")), "email": tuple(_W.merged("email_field"))}
#: Words of a field that say it takes a search, or a message.
_SEARCH_WORDS = tuple(_W.merged("search_field"))
_MESSAGE_WORDS = tuple(_W.merged("message_field"))


@dataclass(frozen=True, slots=True)
class Value:
    """A text the goal gives, with the words just before it ("titled", "phone number")."""

    text: str
    cue: str
    kind: str = "quoted"  # quoted | email | number | message | search | secret


@dataclass(frozen=True, slots=True)
class Fill:
    """Type ``text`` into ``field``; ``why`` says in words how they were paired."""

    field: Element
    text: str
    why: str


def values(goal: str) -> list[Value]:
    """The texts ``goal`` gives to type, in the order it gives them."""
    found: list[tuple[int, Value]] = []
    taken: list[tuple[int, int]] = []

    def add(start: int, end: int, text: str, kind: str) -> None:
        if any(s < end and start < e for s, e in taken) or not text.strip():
            return
        taken.append((start, end))
        cue = " ".join(goal[:start].split()[-3:])
        found.append((start, Value(text.strip(), cue, kind)))

    for m in QUOTED.finditer(goal):
        add(m.start(), m.end(), next(g for g in m.groups() if g), "quoted")
    for m in _EMAIL.finditer(goal):
        add(m.start(), m.end(), m.group(0), "email")
    for m in _NUMBER.finditer(goal):
        if sum(c.isdigit() for c in m.group(0)) >= 6:  # a phone number, not a time or a count
            add(m.start(), m.end(), m.group(0).strip(), "number")
    for m in (m for p in _SECRET for m in p.finditer(goal)):
        g = 1 if m.group(1) else 2
        add(m.start(g), m.end(g), m.group(g), "secret")
    said = next((m for m in (p.search(goal) for p in _SAYING) if m is not None), None)
    if said:
        add(said.start(1), said.end(1), said.group(1).strip(" .!"), "message")
    searched = next((m for m in (p.search(goal) for p in _SEARCHED) if m is not None), None)
    if searched:
        add(searched.start(1), searched.end(1), searched.group(1), "search")
    return [v for _, v in sorted(found, key=lambda p: p[0])]


def _field_words(el: Element) -> str:
    rid = (el.resource_id or "").rsplit("/", 1)[-1].replace("_", " ")
    return " ".join([el.label or "", el.text or "", rid]).casefold()


def _cue_match(cue: str, field: str) -> float:
    """How well the words before a value name a field (0 when no word does); the nearer a
    word is to the value the more it counts ("a note titled 'X'": Title before Note)."""
    best = 0.0
    cue_words = _WORD.findall(cue.casefold())
    for i, a in enumerate(reversed(cue_words)):
        weight = 1.0 - 0.2 * i
        for b in _WORD.findall(field):
            if a == b or (len(a) >= 4 and len(b) >= 4 and (a.startswith(b) or b.startswith(a))):
                best = max(best, weight)
            elif a[0] == b[0] and fuzz.ratio(a, b) >= 80:  # a typo ("moblie")
                best = max(best, weight * fuzz.ratio(a, b) / 100)
    return best


def _fields(parse: ScreenParse) -> list[Element]:
    return [e for e in parse.elements if e.kind is ElementKind.EDIT_TEXT and e.enabled and not e.covered]


def _wants_other(field: Element, v: Value, given: list[Value], typed: str, words: dict[int, str]) -> bool:
    """True when ``field`` names the kind of another value the goal gives, not yet typed
    ("phone numbers" in a recipients box, while ``v`` is the message)."""
    if v.kind in _KIND_WORDS and any(w in words[id(field)] for w in _KIND_WORDS[v.kind]):
        return False
    return any(u is not v and u.kind in _KIND_WORDS and u.text.casefold() not in typed
               and any(w in words[id(field)] for w in _KIND_WORDS[u.kind]) for u in given)


def fill(goal: str, parse: ScreenParse) -> Fill | None:
    """The first value of ``goal`` not yet on the screen, and the field it goes into; None
    when no field of the screen can be paired with one for sure."""
    fields = _fields(parse)
    if not fields:
        return None
    shown = " ".join(" ".join([e.text or "", e.label or ""]) for e in parse.elements if not e.covered).casefold()
    typed = " ".join(f.text or "" for f in fields).casefold()
    given = values(goal)
    fields = [f for f in fields if (f.text or "").strip().casefold() not in {v.text.casefold() for v in given}]
    words = {id(f): _field_words(f) for f in fields}
    for v in given:
        search = v.kind == "search" or any(w in v.cue.casefold() for w in _SEARCH_WORDS)
        if v.text.casefold() in (typed if search else shown):
            continue  # typed already; or (not a search) what the goal names is listed here, to tap
        boxes = [f for f in fields if any(w in words[id(f)] for w in _SEARCH_WORDS)]
        if search:
            pick = boxes
        else:
            others = [f for f in fields if f not in boxes]  # a search box takes only what is searched for
            if v.kind == "message":
                pick = [f for f in others if any(w in words[id(f)] for w in _MESSAGE_WORDS)]
            elif others:
                scored = sorted(((_cue_match(v.cue, words[id(f)]), f) for f in others), key=lambda p: -p[0])
                pick = [scored[0][1]] if scored[0][0] > 0 and (len(scored) == 1 or scored[1][0] < scored[0][0]) else []
            else:
                pick = []
            if not pick and len(others) == 1:
                pick = others
            pick = [f for f in pick if not _wants_other(f, v, given, typed, words)]
        if len(pick) == 1:
            f = pick[0]
            name = f.label or f.text or "the field"
            return Fill(f, v.text, f"The task gives '{v.text}' for '{name}'.")
    return None
