"""``Redactor``: private values in a request replaced by stable placeholders, and put back
in the reply.

Replaced: e-mail addresses (``<email-1>``), phone numbers (``<phone-1>``: seven digits or
more, with the separators phone numbers are written with, a leading ``+`` allowed), other
runs of ``min_digits`` digits or more (``<number-1>``: account numbers, codes), and,
when given, contact names (``<name-1>``; a full name, then each part of it of three
letters or more).  ISO dates and clock times are not phone numbers.  A value gets the
same placeholder for the whole life of the redactor (one run), so the model can refer to
it from step to step; ``restore`` maps placeholders in a reply back to the values (also
when the model dropped the angle brackets).  The rules are general (no app, screen or
language named): what counts as a phone number is the shape of the digits.

Pure string work; no I/O.  Hand-written: the libraries that find personal data in text
(presidio, scrubadub) pull in spaCy models, which this offline install cannot download.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable
from typing import Any

from agent.privacy.types import Replaced

_EMAIL = re.compile(r"(?<![\w.+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}(?![\w-])")
#: A phone number: an optional +country code, an optional (area code), then digits with
#: spaces, dots or dashes between them (seven digits at least, counted when matched).
_PHONE = re.compile(r"(?<![\w+])(?:\+?\d{1,3}[ .\-\u00a0]?)?(?:\(\d{1,5}\)[ .\-\u00a0]?)?\d(?:[ .\-\u00a0]{0,2}\d){4,}(?!\w)")
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_PLACEHOLDER = re.compile(r"<?\b(phone|email|number|name)-(\d+)\b>?")

KINDS = {"phone": "phone number", "email": "e-mail address", "number": "digit run", "name": "contact name"}


class Redactor:
    """See the module docstring.  Thread-safe; one per run."""

    def __init__(self, *, contact_names: Iterable[str] | Callable[[], Iterable[str]] = (),
                 min_digits: int = 6) -> None:
        """``contact_names``: the names, or a function that reads them, called once, on the
        first redaction (a run whose requests stay on this machine never reads them)."""
        self.min_digits = min_digits
        self._digits = re.compile(rf"(?<!\w)\d{{{min_digits},}}(?!\w)")
        self._read_names = contact_names if callable(contact_names) else (lambda: contact_names)
        self._names: re.Pattern[str] | None = None
        self._names_read = False
        self._by_value: dict[str, str] = {}
        self._by_placeholder: dict[str, str] = {}
        self._counts: dict[str, int] = {}
        self._lock = threading.Lock()

    # ---- replacing ------------------------------------------------------------------------
    def _name_pattern(self) -> re.Pattern[str] | None:
        with self._lock:
            if not self._names_read:
                self._names, self._names_read = _names_pattern(self._read_names()), True
            return self._names

    def _placeholder(self, kind: str, value: str) -> str:
        with self._lock:
            found = self._by_value.get(value)
            if found is not None:
                return found
            self._counts[kind] = self._counts.get(kind, 0) + 1
            ph = f"<{kind}-{self._counts[kind]}>"
            self._by_value[value] = ph
            self._by_placeholder[ph] = value
            return ph

    def redact(self, text: str) -> tuple[str, tuple[Replaced, ...]]:
        """``text`` with private values replaced, and what was replaced (each placeholder once)."""
        if not text:
            return text, ()
        seen: dict[str, Replaced] = {}

        def sub(kind: str) -> Any:
            def repl(m: re.Match[str]) -> str:
                value = m.group(0)
                if kind == "phone":
                    if _ISO_DATE.match(value) or sum(ch.isdigit() for ch in value) < 7:
                        return value
                ph = self._placeholder(kind, value)
                seen.setdefault(ph, Replaced(ph, KINDS[kind]))
                return ph
            return repl

        out = _EMAIL.sub(sub("email"), text)
        out = _PHONE.sub(sub("phone"), out)
        out = self._digits.sub(sub("number"), out)
        names = self._name_pattern()
        if names is not None:
            out = names.sub(sub("name"), out)
        return out, tuple(seen.values())

    def redact_data(self, data: Any) -> tuple[Any, tuple[Replaced, ...]]:
        """A JSON-like value (a reply form's schema) with every string in it redacted."""
        found: dict[str, Replaced] = {}

        def walk(v: Any) -> Any:
            if isinstance(v, str):
                text, rs = self.redact(v)
                for r in rs:
                    found.setdefault(r.placeholder, r)
                return text
            if isinstance(v, dict):
                return {k: walk(x) for k, x in v.items()}
            if isinstance(v, (list, tuple)):
                return [walk(x) for x in v]
            return v

        return walk(data), tuple(found.values())

    # ---- putting back -----------------------------------------------------------------------
    def restore(self, text: str) -> str:
        """``text`` with every known placeholder replaced by its value (unknown ones stay)."""
        if not text or ("-" not in text):
            return text

        def repl(m: re.Match[str]) -> str:
            ph = f"<{m.group(1)}-{m.group(2)}>"
            with self._lock:
                return self._by_placeholder.get(ph, m.group(0))

        return _PLACEHOLDER.sub(repl, text)

    def restore_data(self, data: Any) -> Any:
        if isinstance(data, str):
            return self.restore(data)
        if isinstance(data, dict):
            return {k: self.restore_data(v) for k, v in data.items()}
        if isinstance(data, list):
            return [self.restore_data(v) for v in data]
        return data


def _names_pattern(contact_names: Iterable[str]) -> re.Pattern[str] | None:
    """A full name, then each part of it of three letters or more; None for no names."""
    names: set[str] = set()
    for full in contact_names:
        full = " ".join(full.split())
        if len(full) >= 3 and any(ch.isalpha() for ch in full):
            names.add(full)
            names.update(p for p in full.split() if len(p) >= 3 and p[0].isalpha())
    # longest first, so "Alice Johnson" goes before "Alice"
    ordered = sorted(names, key=len, reverse=True)
    return re.compile(r"(?<!\w)(?:" + "|".join(re.escape(n) for n in ordered) + r")(?!\w)") if ordered else None
