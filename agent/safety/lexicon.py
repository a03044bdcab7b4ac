"""The words of sensitive actions in many languages, loaded from the TOML files in ``words/``.

One file per language (``en.toml``, ``de.toml`` ...) lists, per category, the words on a
control that make tapping it sensitive, the phrases a dialog uses to warn, the buttons
that agree or back out, and the names of secret and message fields; ``_signs.toml``
holds the language-free signs (icon labels, store and messaging apps).  Adding a
language is adding a file.  This module only loads and matches text: it knows nothing
about actions or screens, and it never reads instructions from the screen.
"""

from __future__ import annotations

import logging
import re
import tomllib
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from functools import lru_cache
from importlib import resources
from pathlib import Path

log = logging.getLogger(__name__)


class Category(str, Enum):
    """What a sensitive action would do; the value is how the approval card says it."""

    DELETING = "deleting"
    SENDING = "sending"
    PAYING = "paying"
    INSTALLING = "installing"
    SECURITY = "security settings"
    SECRET = "entering a password or PIN"
    RISKY = "risky"  # the model's own judgement, when it names no known category

    @classmethod
    def from_key(cls, key: str) -> Category:
        """The category for a data-file key (``deleting``, ``security`` ...)."""
        k = key.strip().lower()
        for c in cls:
            if k in (c.name.lower(), c.value):
                return c
        raise KeyError(key)


#: The data-file keys of the categories a word on a control can signal.
ACT_KEYS = {"deleting": Category.DELETING, "sending": Category.SENDING, "paying": Category.PAYING,
            "installing": Category.INSTALLING, "security": Category.SECURITY}


class LexiconError(ValueError):
    """A word file is malformed; the message names the file and the field."""


def normalise(text: str) -> str:
    """Fold case, width and accents' encoding; punctuation becomes spaces; spaces collapse."""
    t = unicodedata.normalize("NFKC", text).casefold()
    t = re.sub(r"[^\w]+", " ", t)
    return " ".join(t.split())


@dataclass(frozen=True, slots=True)
class Hit:
    """One matched entry: which language's word matched which text."""

    entry: str
    language: str


@dataclass(frozen=True)
class _Entries:
    """Compiled entries of one list of one language."""

    language: str
    entries: tuple[str, ...]
    pattern: re.Pattern[str] | None

    @property
    def whole(self) -> frozenset[str]:
        """The entries as whole normalised texts (for "is this button exactly 'Cancel'")."""
        return frozenset(normalise(e.lstrip("=").strip("*")) for e in self.entries)

    def find(self, norm_text: str) -> str | None:
        """The first entry found in already-normalised text, or None."""
        if self.pattern is None or not norm_text:
            return None
        m = self.pattern.search(norm_text)
        if m is None:
            return None
        for i, g in enumerate(m.groups()):
            if g is not None:
                return self.entries[i]
        return None  # pragma: no cover - one group always matched


def _compile(entries: Iterable[str], substring: bool) -> tuple[tuple[str, ...], re.Pattern[str] | None]:
    kept: list[str] = []
    parts: list[str] = []
    for raw in entries:
        whole = raw.startswith("=")
        prefix = raw.endswith("*")
        suffix = raw.lstrip("=").startswith("*")
        core = normalise(raw.lstrip("=").strip("*"))
        if not core:
            continue
        body = re.escape(core).replace(r"\ ", " ")
        if whole:
            rx = "^" + body + "$"
        elif substring:
            rx = body
        else:
            rx = (r"\w*" if suffix else "") + body + (r"\w*" if prefix else "")
            rx = r"(?<!\w)" + rx + r"(?!\w)"
        kept.append(raw)
        parts.append(f"({rx})")
    # longer entries first, so the card quotes "delete forever" rather than "delete"
    order = sorted(range(len(kept)), key=lambda i: -len(kept[i]))
    kept = [kept[i] for i in order]
    parts = [parts[i] for i in order]
    if not parts:
        return (), None
    return tuple(kept), re.compile("|".join(parts))


@dataclass(frozen=True)
class Language:
    """The compiled word lists of one language."""

    code: str
    name: str
    substring: bool
    act: Mapping[Category, _Entries]
    warn: Mapping[Category, _Entries]
    confirm: _Entries
    dismiss: _Entries
    secret: _Entries
    compose: _Entries
    dismiss_set: frozenset[str] = frozenset()
    confirm_set: frozenset[str] = frozenset()


def _strings(value: object, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise LexiconError(f"{where}: must be a list of strings")
    return list(value)


def _language(code: str, data: dict, where: str) -> Language:
    name = data.get("language")
    if not isinstance(name, str) or not name.strip():
        raise LexiconError(f"{where}: field 'language' (the language's English name) is missing")
    sub = bool(data.get("substring", False))

    def entries(values: list[str]) -> _Entries:
        kept, rx = _compile(values, sub)
        return _Entries(name, kept, rx)

    def by_category(section: str) -> dict[Category, _Entries]:
        table = data.get(section, {})
        if not isinstance(table, dict):
            raise LexiconError(f"{where}: [{section}] must be a table of category = [words]")
        out: dict[Category, _Entries] = {}
        for key, values in table.items():
            if key not in ACT_KEYS:
                raise LexiconError(f"{where}: [{section}] has unknown category {key!r}; use {sorted(ACT_KEYS)}")
            out[ACT_KEYS[key]] = entries(_strings(values, f"{where}: [{section}].{key}"))
        return out

    def words(section: str) -> _Entries:
        table = data.get(section, {})
        if not isinstance(table, dict):
            raise LexiconError(f"{where}: [{section}] must be a table with a 'words' list")
        return entries(_strings(table.get("words", []), f"{where}: [{section}].words"))

    known = {"language", "substring", "act", "warn", "confirm", "dismiss", "secret", "compose"}
    extra = set(data) - known
    if extra:
        raise LexiconError(f"{where}: unknown field(s) {sorted(extra)}; allowed {sorted(known)}")
    confirm, dismiss = words("confirm"), words("dismiss")
    return Language(code, name.strip(), sub, by_category("act"), by_category("warn"), confirm, dismiss,
                    words("secret"), words("compose"), dismiss.whole, confirm.whole)


@dataclass(frozen=True)
class Signs:
    """Language-free signs: icon labels and app packages."""

    icons: Mapping[str, Category]
    store_packages: frozenset[str]
    store_pieces: tuple[str, ...]
    messaging_pieces: tuple[str, ...]
    money_words: frozenset[str] = frozenset()  # words in an app's name that say it moves money
    money_pieces: tuple[str, ...] = ()  # pieces of package names of payment and banking apps

    def icon_category(self, label: str) -> Category | None:
        return self.icons.get(normalise(label))

    def is_store(self, package: str | None) -> bool:
        if not package:
            return False
        p = package.lower()
        return p in self.store_packages or any(piece in p for piece in self.store_pieces)

    def is_messaging(self, package: str | None) -> bool:
        if not package:
            return False
        p = package.lower()
        return any(piece in p for piece in self.messaging_pieces)

    def is_money_app(self, app: str | None) -> bool:
        """Whether ``app`` (a name or a package) is a payment, banking or wallet app."""
        if not app:
            return False
        p = app.lower()
        if any(piece in p for piece in self.money_pieces):
            return True
        words = normalise(app).split()
        return any(w in self.money_words for w in words) or any(
            " ".join(words[i:i + 2]) in self.money_words for i in range(len(words) - 1))


def _signs(data: dict, where: str) -> Signs:
    icons: dict[str, Category] = {}
    table = data.get("icons", {})
    for key, values in table.items():
        if key not in ACT_KEYS:
            raise LexiconError(f"{where}: [icons] has unknown category {key!r}; use {sorted(ACT_KEYS)}")
        for v in _strings(values, f"{where}: [icons].{key}"):
            icons[normalise(v)] = ACT_KEYS[key]
    apps = data.get("apps", {})
    msg = data.get("messaging", {})
    money = data.get("money_apps", {})
    return Signs(icons, frozenset(p.lower() for p in _strings(apps.get("packages", []), f"{where}: [apps].packages")),
                 tuple(p.lower() for p in _strings(apps.get("pieces", []), f"{where}: [apps].pieces")),
                 tuple(p.lower() for p in _strings(msg.get("pieces", []), f"{where}: [messaging].pieces")),
                 frozenset(normalise(w) for w in _strings(money.get("words", []), f"{where}: [money_apps].words")),
                 tuple(p.lower() for p in _strings(money.get("pieces", []), f"{where}: [money_apps].pieces")))


@dataclass(frozen=True)
class Lexicon:
    """Every language's word lists plus the language-free signs."""

    languages: tuple[Language, ...]
    signs: Signs

    def _first(self, norm: str, pick: str, category: Category | None = None) -> Hit | None:
        for lang in self.languages:
            lists = getattr(lang, pick)
            ent = lists.get(category) if category is not None else lists
            if ent is None:
                continue
            found = ent.find(norm)
            if found is not None:
                return Hit(found, lang.name)
        return None

    def _by_category(self, text: str, pick: str) -> list[tuple[Category, Hit]]:
        norm = normalise(text)
        hits = ((cat, self._first(norm, pick, cat)) for cat in ACT_KEYS.values())
        return [(cat, hit) for cat, hit in hits if hit is not None]

    def act(self, text: str) -> list[tuple[Category, Hit]]:
        """Categories whose action words appear in ``text`` (each once, first language wins)."""
        return self._by_category(text, "act")

    def warning(self, text: str) -> list[tuple[Category, Hit]]:
        """Categories whose warning words appear in ``text`` (each once, first language wins)."""
        return self._by_category(text, "warn")

    def _whole(self, text: str, pick: str) -> Hit | None:
        norm = normalise(text)
        for lang in self.languages:
            if norm and norm in getattr(lang, pick):
                return Hit(norm, lang.name)
        return None

    def is_dismiss(self, text: str) -> Hit | None:
        """Whether the whole of ``text`` is a backing-out word ("Cancel", "Abbrechen")."""
        return self._whole(text, "dismiss_set")

    def is_confirm(self, text: str) -> Hit | None:
        """Whether the whole of ``text`` is an agreeing word ("OK", "Weiter")."""
        return self._whole(text, "confirm_set")

    def secret(self, text: str) -> Hit | None:
        return self._first(normalise(text), "secret")

    def compose(self, text: str) -> Hit | None:
        return self._first(normalise(text), "compose")


def _read(path: Path | resources.abc.Traversable, where: str) -> dict:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise LexiconError(f"{where}: not valid TOML: {exc}") from None


def load_lexicon(extra_dirs: Iterable[str | Path] = ()) -> Lexicon:
    """The shipped word files plus every ``*.toml`` in ``extra_dirs`` (a file named like a
    shipped one replaces it)."""
    files: dict[str, tuple[resources.abc.Traversable | Path, str]] = {}
    shipped = resources.files("agent.safety").joinpath("words")
    for f in shipped.iterdir():
        if f.name.endswith(".toml"):
            files[f.name] = (f, f"agent/safety/words/{f.name}")
    for d in extra_dirs:
        p = Path(d)
        if not p.is_dir():
            raise LexiconError(f"{p}: not a folder of word files")
        for f in sorted(p.glob("*.toml")):
            files[f.name] = (f, str(f))
    signs_file = files.pop("_signs.toml", None)
    if signs_file is None:
        raise LexiconError("agent/safety/words/_signs.toml is missing: the package is incomplete")
    # English first, then the others in name order: the card quotes the first language that matches
    names = sorted(files, key=lambda n: (n != "en.toml", n))
    langs = tuple(_language(n.removesuffix(".toml"), _read(files[n][0], files[n][1]), files[n][1]) for n in names)
    log.debug("safety lexicon: %d languages", len(langs))
    return Lexicon(langs, _signs(_read(signs_file[0], signs_file[1]), signs_file[1]))


@lru_cache(maxsize=1)
def shipped_lexicon() -> Lexicon:
    """The lexicon built from the shipped files only (loaded once, immutable)."""
    return load_lexicon()
