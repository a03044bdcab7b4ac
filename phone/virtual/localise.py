"""A reference step's target words as the phone shows them in its language.

The task files name English screen text (``tap: Network & internet``, ``near: "8:30 AM"``,
``tap: "Thu, Mar 12, 2026"``); on a phone in another language the same element carries
the translated string (``i18n.translate``), a 24-hour time and the language's own date
format.  ``local_target`` rewrites a target mapping's words accordingly, so one reference
solution replays on the phone in every language of ``i18n.LANGUAGES``.  Pure data
transformation: it resolves nothing and touches no phone.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from phone.virtual.i18n import format_date, translate

#: Target keys whose value is screen text (``id``, ``index``, ``kind``, ``icon`` are not).
WORD_KEYS = ("text", "desc", "near", "contains")

_CLOCK = re.compile(r"(\d{1,2}):(\d{2}) (AM|PM)")
_SHORT_DATE = "%a, %b %d, %Y"  # "Thu, Mar 12, 2026", the English short date (i18n.format_date)
_NB_HYPHEN = "\u2011"  # the UI strings write "Wi‑Fi" with a non-breaking hyphen


def local_words(text: str, lang: str) -> str:
    """``text`` (English screen text) as the phone shows it in ``lang``."""
    if lang == "en" or not text:
        return text
    m = _CLOCK.fullmatch(text)
    if m and lang == "de":  # the German phone keeps a 24-hour clock
        hour = int(m.group(1)) % 12 + (12 if m.group(3) == "PM" else 0)
        return f"{hour:02d}:{m.group(2)}"
    try:
        day = dt.datetime.strptime(text, _SHORT_DATE).date()
    except ValueError:
        day = None
    if day is not None:
        return format_date(day, lang, "short")
    out = translate(text, lang)
    if out == text and "-" in text:
        soft = text.replace("-", _NB_HYPHEN)
        hard = translate(soft, lang)
        out = text if hard == soft else hard
    return out


def local_target(target: dict[str, Any], lang: str) -> dict[str, Any]:
    """A copy of ``target`` with its words (``WORD_KEYS``) in ``lang``."""
    if lang == "en":
        return dict(target)
    return {k: local_words(v, lang) if k in WORD_KEYS and isinstance(v, str) else v for k, v in target.items()}
