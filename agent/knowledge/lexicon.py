"""The words the screen evidence reads a goal with, per language, from ``words/*.toml``.

One file per language lists the words that carry no meaning in a task (``stop``), the
verbs that only say "go there" (``go``), the phrases that ask for a switch's state
(``on`` / ``off``, and ``on_end`` / ``off_end`` for a particle that ends the goal: "put
the flashlight on", "schalte den Flugmodus ein"), the buttons that accept or turn down a
dialog (``confirm`` / ``negative``), window furniture, the words that join a goal's parts
(``clauses``) and numbers in words.  ``Words.load()`` merges every language's lists, so
a goal is read whatever language it is written in, on a phone in any language.  Adding a
language is adding a file.

Also here: ``fold`` and ``words`` — the language-free way the evidence splits and folds
text (Unicode words, case and accents' encoding folded, numbers in words read as digits,
a light stem) — and ``same_word``, which lets "favorites" meet "favorite" and
"Benachrichtigungen" meet "Benachrichtigung" without a stemmer per language.

Loads package data only; knows nothing about screens or actions.
"""

from __future__ import annotations

import re
import tomllib
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from rapidfuzz import fuzz

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?")


class WordsError(ValueError):
    """A word file is malformed; the message names the file and the field."""


def fold(text: str) -> str:
    """Case, width and Unicode form folded; typographic dashes as hyphens; spaces collapsed."""
    t = unicodedata.normalize("NFKC", text or "").casefold()
    t = t.replace("\u2011", "-").replace("\u2010", "-").replace("\u2013", "-").replace("\u2212", "-")
    return " ".join(t.split())


@dataclass(frozen=True)
class Words:
    """Every language's word lists, merged (see the module docstring)."""

    languages: tuple[str, ...]
    stop: frozenset[str]
    go: frozenset[str]
    on: tuple[str, ...]
    off: tuple[str, ...]
    on_end: frozenset[str]
    off_end: frozenset[str]
    confirm: frozenset[str]
    negative: frozenset[str]
    furniture: frozenset[str]
    clauses: tuple[str, ...]
    numbers: dict[str, str]
    #: words that say when or how much ("half", "past", "evening"), never what: a goal's
    #: object is not among them
    amounts: frozenset[str] = frozenset()

    @staticmethod
    def load() -> Words:
        return _load_all()

    # ---- reading a goal ----------------------------------------------------------------
    def words(self, text: str) -> list[str]:
        """``text``'s words, folded, numbers in words as digits (stop words kept)."""
        out = []
        for w in _WORD.findall(fold(text).replace("wi-fi", "wifi")):
            w = w.replace("’", "'")
            out.append(self.numbers.get(w, w))
        return out

    def content(self, text: str) -> list[str]:
        """The words of ``text`` that can name something: less stop words and "go there" verbs."""
        return [w for w in self.words(text) if w not in self.stop and w not in self.go]

    def asked_state(self, goal: str) -> bool | None:
        """True when ``goal`` asks to turn something on, False for off, None for neither (or both)."""
        text = " " + " ".join(self.words(goal)) + " "
        on = any(f" {p} " in text for p in self.on)
        off = any(f" {p} " in text for p in self.off)
        last = text.split()[-1] if text.split() else ""
        on = on or last in self.on_end
        off = off or last in self.off_end
        if on == off:
            return None
        return on

    def is_confirm(self, name: str) -> bool:
        return " ".join(self.words(name)) in self.confirm

    def is_negative(self, name: str) -> bool:
        return " ".join(self.words(name)) in self.negative

    def is_furniture(self, name: str) -> bool:
        return " ".join(self.words(name)) in self.furniture

    def parts(self, goal: str) -> list[str]:
        """The goal cut at its joining words and punctuation ("… and then …", "…, …")."""
        joins = sorted(self.clauses, key=len, reverse=True)
        pattern = r"\s*(?:[,;]|" + "|".join(rf"\b{re.escape(j)}\b" for j in joins) + r")\s*"
        return [p.strip() for p in re.split(pattern, fold(goal)) if p and p.strip()]


def same_word(a: str, b: str) -> bool:
    """Two folded words that name the same thing: equal; one the other with a short ending
    ("favorite" / "favorites", "benachrichtigung" / "benachrichtigungen"); or, for longer
    words, one letter apart (a typo: "moblie")."""
    if a == b:
        return True
    if a.isdigit() or b.isdigit():
        return False
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    if len(short) >= 4 and long_.startswith(short) and len(long_) - len(short) <= 3:
        return True
    return len(short) >= 5 and fuzz.ratio(a, b) >= 88


def _strings(data: dict, key: str, source: str) -> list[str]:
    value = data.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise WordsError(f"{source}: '{key}' must be a list of strings")
    return [fold(v) for v in value]


@lru_cache(maxsize=1)
def _load_all() -> Words:
    merged: dict[str, list[str]] = {k: [] for k in ("stop", "go", "on", "off", "on_end", "off_end", "confirm",
                                                     "negative", "furniture", "clauses", "amounts")}
    numbers: dict[str, str] = {}
    languages = []
    folder = resources.files("agent.knowledge") / "words"
    for entry in sorted(folder.iterdir(), key=lambda p: p.name):
        if not entry.name.endswith(".toml"):
            continue
        source = f"agent/knowledge/words/{entry.name}"
        try:
            data = tomllib.loads(entry.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise WordsError(f"{source}: not valid TOML: {exc}") from None
        languages.append(str(data.get("language", entry.name[:-5])))
        for key in merged:
            merged[key] += _strings(data, key, source)
        nums = data.get("numbers", {})
        if not isinstance(nums, dict) or not all(isinstance(v, str) and v.isdigit() for v in nums.values()):
            raise WordsError(f"{source}: 'numbers' must map words to digits")
        numbers.update({fold(k): v for k, v in nums.items()})
    # a word that is a stop word in one language and a state particle in another ("an", "ein")
    # stays a particle only at the end of a goal
    return Words(
        languages=tuple(languages), stop=frozenset(merged["stop"]) - set(numbers), go=frozenset(merged["go"]),
        on=tuple(dict.fromkeys(merged["on"])), off=tuple(dict.fromkeys(merged["off"])),
        on_end=frozenset(merged["on_end"]), off_end=frozenset(merged["off_end"]),
        confirm=frozenset(merged["confirm"]), negative=frozenset(merged["negative"]),
        furniture=frozenset(merged["furniture"]), clauses=tuple(dict.fromkeys(merged["clauses"])), numbers=numbers,
        amounts=frozenset(merged["amounts"]))


# ---- the screen conventions' words (focus.py, fill.py) ---------------------------------
_CONVENTION_KEYS = ("state_verbs", "on_verbs", "off_verbs", "on_particle", "off_particle", "go", "state",
                    "value_verbs", "value_to", "value_from", "furniture", "confirm_buttons", "negative_buttons",
                    "accept_buttons", "choosing_verbs", "confirm_verbs", "act_words", "ui_words", "number_words",
                    "clause_words", "saying", "password", "pin", "is", "search_verbs", "search_for", "phone_field",
                    "email_field", "search_field", "message_field")


@dataclass(frozen=True, eq=False)
class Conventions:
    """One language's words for the screen conventions (the ``[conventions]`` table)."""

    language: str
    lists: dict[str, tuple[str, ...]]

    def __getitem__(self, key: str) -> tuple[str, ...]:
        return self.lists.get(key, ())


def _alternation(words: tuple[str, ...]) -> str:
    """A regular-expression alternation of ``words`` (longest first), spaces as any space."""
    return "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in sorted(words, key=len, reverse=True)) or "(?!)"


@dataclass(frozen=True, eq=False)
class ConventionWords:
    """Every language's convention words: merged sets for membership, and per-language
    patterns (a structure is read in the language it is written in)."""

    languages: tuple[Conventions, ...]

    @staticmethod
    def load() -> ConventionWords:
        return _load_conventions()

    def merged(self, key: str) -> frozenset[str]:
        """The words of ``key`` in every language, folded."""
        return frozenset(w for c in self.languages for w in c[key])

    def patterns(self, build: str, flags: int = re.I) -> tuple[re.Pattern[str], ...]:
        """One compiled pattern per language from ``build``, a format string whose ``{key}``
        fields become that language's alternation of the words under ``key`` (``{{``, ``}}``
        for literal braces)."""
        return _patterns(self, build, flags)

    def alternation(self, key: str) -> tuple[str, ...]:
        return tuple(_alternation(c[key]) for c in self.languages)


@lru_cache(maxsize=64)
def _patterns(words: ConventionWords, build: str, flags: int) -> tuple[re.Pattern[str], ...]:
    keys = set(re.findall(r"(?<!\{)\{(\w+)\}(?!\})", build))
    out = []
    for c in words.languages:
        if not all(c[k] for k in keys):
            continue  # this language does not give every part of the pattern
        out.append(re.compile(build.format(**{k: _alternation(c[k]) for k in keys}), flags))
    return tuple(out)


@lru_cache(maxsize=1)
def _load_conventions() -> ConventionWords:
    folder = resources.files("agent.knowledge") / "words"
    langs = []
    for entry in sorted(folder.iterdir(), key=lambda p: p.name):
        if not entry.name.endswith(".toml"):
            continue
        source = f"agent/knowledge/words/{entry.name}"
        data = tomllib.loads(entry.read_text(encoding="utf-8"))
        table = data.get("conventions", {})
        if not isinstance(table, dict):
            raise WordsError(f"{source}: [conventions] must be a table")
        lists = {k: tuple(_strings(table, k, source)) for k in _CONVENTION_KEYS if k in table}
        unknown = set(table) - set(_CONVENTION_KEYS)
        if unknown:
            raise WordsError(f"{source}: unknown [conventions] keys: {', '.join(sorted(unknown))}")
        langs.append(Conventions(str(data.get("language", entry.name[:-5])), lists))
    return ConventionWords(tuple(langs))


# ---- the closer second look's words (agent/look_again.py) --------------------------------
_PLACES = ("top", "bottom", "left", "right")


@dataclass(frozen=True, eq=False)
class LookWords:
    """Every language's ``[look_again]`` words, merged: ``act`` says "do it" and names no
    element ("tap", "tippe"); ``top``, ``bottom``, ``left``, ``right`` point at a part of
    the screen.  Patterns match whole words (Unicode), case folded (``fold``)."""

    act: frozenset[str]
    act_words: re.Pattern[str]
    places: tuple[tuple[str, re.Pattern[str]], ...]

    @staticmethod
    def load() -> LookWords:
        return _load_look()


def _whole(words: list[str]) -> re.Pattern[str]:
    alternation = "|".join(re.escape(w) for w in sorted(set(words), key=len, reverse=True)) or "(?!)"
    return re.compile(rf"\b(?:{alternation})\b")


@lru_cache(maxsize=1)
def _load_look() -> LookWords:
    merged: dict[str, list[str]] = {k: [] for k in ("act", *_PLACES)}
    folder = resources.files("agent.knowledge") / "words"
    for entry in sorted(folder.iterdir(), key=lambda p: p.name):
        if not entry.name.endswith(".toml"):
            continue
        source = f"agent/knowledge/words/{entry.name}"
        table = tomllib.loads(entry.read_text(encoding="utf-8")).get("look_again", {})
        if not isinstance(table, dict):
            raise WordsError(f"{source}: [look_again] must be a table")
        unknown = set(table) - set(merged)
        if unknown:
            raise WordsError(f"{source}: unknown [look_again] keys: {', '.join(sorted(unknown))}")
        for key in merged:
            merged[key] += _strings(table, key, source)
    return LookWords(act=frozenset(merged["act"]), act_words=_whole(merged["act"]),
                     places=tuple((k, _whole(merged[k])) for k in _PLACES))
