"""How a parsed screen is shown to a model: fenced description, element list, element JSON.

On-screen words are untrusted data.  ``fenced`` wraps a description in ``<screen>`` tags
and neutralises anything inside that looks like those tags, so text on the phone cannot
close the data block and pose as instructions.  Elements under a dialog, sheet or menu
(``Element.covered``) are never shown nor offered.  No LLM calls, no device access.
"""

from __future__ import annotations

import json
import re

from vision.describe import describe, element_line
from vision.types import Element, ElementKind, ScreenParse

_TAG = re.compile(r"</?\s*screen\s*>", re.I)
MAX_CHARS = 6000


def sanitize(text: str) -> str:
    """Screen text with fence look-alikes defused."""
    return _TAG.sub(lambda m: m.group(0).replace("<", "‹").replace(">", "›"), text)


def description(parse: ScreenParse, app: str | None = None, max_chars: int = MAX_CHARS) -> str:
    text = parse.description or describe(parse.screen_size, parse.elements, parse.blocks, app=app)  # skips covered ones
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


def element_list(parse: ScreenParse, limit: int = 80) -> str:
    lines = [element_line(e) for e in actionable(parse)[:limit]]
    return sanitize("\n".join(lines)) if lines else "(no elements)"


def elements_json(parse: ScreenParse, limit: int = 80) -> str:
    """App-D style element list: id, words, centre and size in device pixels."""
    rows = []
    for e in actionable(parse)[:limit]:
        c = e.rect.center
        rows.append({"id": e.id, "text": sanitize(e.display_name or e.kind.value), "kind": e.kind.value,
                     "center": [c.x, c.y], "size": [e.rect.width, e.rect.height]})
    return json.dumps({"UI elements": rows}, ensure_ascii=False)
