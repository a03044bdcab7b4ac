"""User text on the terminal, printed as text: goals, macro names, ids and apps may hold
``[brackets]`` (rich markup) or raw escape bytes, and neither may change what the
terminal shows or crash a listing.

``clean`` makes control characters visible (``\\x1b`` is shown as ``\\x1b``), ``as_text``
wraps the result in a rich ``Text`` (never parsed as markup: for tables), and ``quoted``
escapes it for f-strings that also hold markup.  No I/O.
"""

from __future__ import annotations

import re
from typing import Any

from rich.markup import escape
from rich.text import Text

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def clean(value: Any, *, newlines: bool = False) -> str:
    """``value`` as a string whose control characters (and bidi overrides) are shown as
    ``\\xNN``/``\\uNNNN`` escapes; tabs and newlines become spaces unless ``newlines``."""
    text = "" if value is None else str(value)
    if not newlines:
        text = text.replace("\n", " ").replace("\t", " ")
    else:
        text = text.replace("\t", " ")
    return _CONTROL.sub(lambda m: m.group(0).encode("unicode_escape").decode("ascii"), text)


def as_text(value: Any, *, style: str = "") -> Text:
    """``value`` as a rich ``Text``: shown exactly, brackets and all."""
    return Text(clean(value), style=style)


def quoted(value: Any, *, newlines: bool = False) -> str:
    """``value`` cleaned and escaped for use inside a markup string."""
    return escape(clean(value, newlines=newlines))
