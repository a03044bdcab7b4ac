"""What an MCP client is shown of the phone: one numbered observation of the screen.

Element ids given to clients name the observation they come from (``"7@3"``: element 7
of observation 3), so an id from an older observation is recognised and refused instead
of tapping whatever sits at that number now.  The ``signature`` of an observation notices
a screen that changed under the client (a scroll, a dialog, the user's own tap).

Builds text, JSON and images only: no device access, no MCP, no Qt.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
from dataclasses import dataclass, replace

from agent.screen_text import actionable, description, sanitize
from vision.types import Element, ElementKind, Screen, ScreenParse

_ID = re.compile(r"^\s*([^@\s]+)@(\d+)\s*$")
_LISTED_ID = re.compile(r"^(\s*)\[([^\]@\s]+)\]", re.M)  # "  [7] button …": an element line
_BARS = (ElementKind.STATUS_BAR, ElementKind.NAVIGATION_BAR)


class BadElementId(ValueError):
    """The text is not an element id of the ``N@M`` form."""


@dataclass(frozen=True, slots=True, eq=False)
class Observation:
    """The screen as shown to clients under ``number`` (1, 2, … per server)."""

    number: int
    screen: Screen
    parse: ScreenParse
    package: str
    signature: str

    def public_id(self, element_id: str) -> str:
        return public_id(self.number, element_id)

    def elements(self) -> list[Element]:
        """The elements a client may act on (never ones under a dialog), with public ids."""
        return [replace(e, id=self.public_id(e.id)) for e in actionable(self.parse) if e.kind not in _BARS]

    def text(self) -> str:
        """The screen description the planners get, with ids rewritten to public ones."""
        return _LISTED_ID.sub(lambda m: f"{m.group(1)}[{self.public_id(m.group(2))}]",
                              description(self.parse, self.package))

    def as_dict(self) -> dict[str, object]:
        rows = []
        for e in self.elements():
            c = e.rect.center
            row: dict[str, object] = {"id": e.id, "kind": e.kind.value, "text": sanitize(e.display_name),
                                      "center": [c.x, c.y], "bounds": [e.rect.left, e.rect.top, e.rect.right,
                                                                        e.rect.bottom]}
            if e.clickable:
                row["clickable"] = True
            if e.checkable:
                row["checked"] = bool(e.checked)
            if e.scrollable:
                row["scrollable"] = True
            if e.kind is ElementKind.EDIT_TEXT:
                row["editable"] = True
            rows.append(row)
        size = self.parse.screen_size
        return {"observation": self.number, "app": self.package, "screen_size": [size.width, size.height],
                "elements": rows}

    def summary(self) -> str:
        """What a tool result says about the screen: the description, then the element JSON."""
        return (f"Observation {self.number} (element ids below end in @{self.number}; they are valid "
                f"until the next observation).\n{self.text()}\n\nElements (JSON):\n"
                + json.dumps(self.as_dict(), ensure_ascii=False))

    def marks_png(self) -> bytes:
        """The screenshot with every listed element's box and public id drawn on it (PNG)."""
        from PIL import Image

        from vision.marks import set_of_marks
        from vision.secret_mask import mask_password_fields

        img = set_of_marks(mask_password_fields(self.screen).image, self.elements(), skip_kinds=_BARS)
        buf = io.BytesIO()
        Image.fromarray(img).save(buf, format="PNG", compress_level=1)
        return buf.getvalue()


def public_id(number: int, element_id: str) -> str:
    return f"{element_id}@{number}"


def split_id(text: str) -> tuple[str, int]:
    """``"7@3"`` -> ``("7", 3)``; anything else raises ``BadElementId`` saying what is expected."""
    m = _ID.match(text or "")
    if m is None:
        raise BadElementId(f"{text!r} is not an element id: ids look like '7@3' (element 7 of observation 3), "
                           "as listed by the observe tool")
    return m.group(1), int(m.group(2))


def screen_signature(parse: ScreenParse, package: str) -> str:
    """What a person sees and can act on, as a short hash: any move, change or new dialog
    changes it; the status bar's clock does not."""
    h = hashlib.blake2b(digest_size=12)
    h.update(package.encode())
    for e in parse.uncovered():
        if e.kind in _BARS:
            continue
        r = e.rect
        h.update(f"|{e.kind.value}:{e.display_name}:{r.left},{r.top},{r.right},{r.bottom}:{e.checked}".encode())
    return h.hexdigest()
