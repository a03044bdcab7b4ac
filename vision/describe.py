"""The screen description handed to LLMs: blocks top to bottom, one line per element.

Each line carries the element id, kind, text or label and state (on/off, checked,
selected, focused, disabled), e.g. ``[7] switch "Wi-Fi" on``.  Text that merely repeats
a clickable element's own name is not listed twice, nor the parts of a list row or tile
found in the pixels that only repeat it (``vision.row_parts``), and the status bar is one line, so
a typical screen costs a few hundred tokens.  Elements under a dialog, sheet or menu
(``Element.covered``) are never listed: a tap on them would not reach them.  Pure string building; no I/O, no models.
"""

from __future__ import annotations

from collections.abc import Sequence

from vision.geometry import Size
from vision.naming import is_description
from vision.row_parts import folded
from vision.spatial import GridIndex
from vision.types import Block, Element, ElementKind

_KIND_WORD = {
    ElementKind.BUTTON: "button", ElementKind.EDIT_TEXT: "text field", ElementKind.IMAGE: "image",
    ElementKind.PAGE_INDICATOR: "page indicator", ElementKind.SEEK_BAR: "slider", ElementKind.RATING_BAR: "rating",
    ElementKind.CHECK_BOX: "checkbox", ElementKind.RADIO_GROUP: "radio", ElementKind.SPINNER: "dropdown",
    ElementKind.SWITCH: "switch", ElementKind.TEXT: "text", ElementKind.CONTAINER: "list",
    ElementKind.UNKNOWN: "element", ElementKind.STATUS_BAR: "status bar", ElementKind.NAVIGATION_BAR: "navigation bar",
}

_GROUP_WORD = {"list_item": "item", "tile": "tile"}


def _clip(s: str, n: int = 80) -> str:
    s = " ".join(s.split())
    return s if len(s) <= n else s[: n - 1] + "…"


def element_line(e: Element) -> str:
    """``[id] kind "text" (label) state`` for one element."""
    word = _GROUP_WORD.get(e.class_name) or _KIND_WORD.get(e.kind, e.kind.value)
    parts = [f"[{e.id}]", word]
    name = e.text or ""
    if e.kind is ElementKind.SWITCH and name.upper() in ("ON", "OFF"):
        name = ""
    if e.password and name:
        name = "•••"
    if name:
        parts.append(f'"{_clip(name)}"')
    if e.label and e.label != name:
        parts.append(f"({_clip(e.label, 60)})")
    elif not name and e.resource_id:
        parts.append(f"({e.resource_id.rsplit('/', 1)[-1].replace('_', ' ')})")
    state = []
    if e.kind is ElementKind.SWITCH and e.checked is not None:
        state.append("on" if e.checked else "off")
    elif e.checkable and e.checked is not None:
        state.append("checked" if e.checked else "unchecked")
    if e.selected:
        state.append("selected")
    if e.focused:
        state.append("focused")
    if not e.enabled:
        state.append("disabled")
    if e.scrollable:
        state.append("scrollable")
    if state:
        parts.append(", ".join(state))
    return " ".join(parts)


_NAMERS = (ElementKind.SWITCH, ElementKind.CHECK_BOX, ElementKind.EDIT_TEXT)


class _Absorber:
    """Says which elements say nothing new among ``others`` (an index of the ones that name
    what they contain: clickables, toggles and fields; ``parts``: ids a list row or tile
    found in the pixels already stands for, ``vision.row_parts``)."""

    def __init__(self, others: Sequence[Element], parts: frozenset[str] = frozenset()) -> None:
        self._others = others
        self._parts = parts
        self._index: GridIndex[Element] | None = None  # built on the first text asked about

    @property
    def _namers(self) -> GridIndex[Element]:
        if self._index is None:
            self._index = GridIndex([o for o in self._others if o.clickable or o.kind in _NAMERS], lambda o: o.rect)
        return self._index

    def __call__(self, e: Element) -> bool:
        """An unnamed, inert image, a part of a pixel row or tile, or text a containing clickable already names."""
        if e.id in self._parts:
            return True
        if e.kind is ElementKind.IMAGE and not (e.text or (e.label and not is_description(e.label)) or e.resource_id
                                                or e.clickable):
            return True
        if e.kind is not ElementKind.TEXT or not e.text:
            return False
        return any(o is not e and (e.text in o.text or e.text in o.label.split(" · ")) for o in self._namers.containing(e.rect))


def describe(size: Size, elements: Sequence[Element], blocks: Sequence[Block], *, app: str | None = None,
             covered: int | None = None) -> str:
    """The compact, LLM-facing description of a parsed screen (covered elements left out).

    ``covered`` is how many elements a dialog hides (counted from ``elements`` when None);
    when there are any, a first line says that only the dialog can be used now."""
    head = f"Screen {size.width}x{size.height}" + (f", app {app}" if app else "")
    if covered is None:
        covered = sum(e.covered for e in elements)
    elements = [e for e in elements if not e.covered]
    if not elements:
        return head + ": nothing recognised."
    by_id = {e.id: e for e in elements}
    parts = folded(elements)
    lines = [head + ":"]
    if covered:
        lines.append(f"A dialog or menu is open on top; {covered} elements behind it cannot be tapped until it closes.")
    seen: set[str] = set()
    def order(b: Block) -> tuple[int, int, int]:
        tops = [by_id[i].rect.top for i in b.element_ids if i in by_id]
        return (b.rect.top, min(tops, default=b.rect.top), b.rect.left)

    for b in sorted(blocks, key=order):
        members = [by_id[i] for i in b.element_ids if i in by_id and i not in seen]
        if not members:
            continue
        seen.update(m.id for m in members)
        if b.role == "status_bar":
            bar = next((m for m in members if m.kind is ElementKind.STATUS_BAR and m.text), None)
            words = [bar.text] if bar else [m.text for m in members if m.text]
            lines.append("Status bar: " + (_clip(" ".join(words), 60) if words else "(icons)"))
            continue
        if b.role == "navigation_bar" and all(not m.text and not m.label for m in members):
            lines.append(f"Navigation bar [{members[0].id}]")
            continue
        title = b.role.replace("_", " ")
        if b.caption:
            title += f' "{_clip(b.caption, 50)}"'
        lines.append(f"{title[:1].upper()}{title[1:]}:")
        absorbed = _Absorber(members, parts)
        for m in sorted(members, key=lambda m: (m.rect.top // 8, m.rect.left)):
            if absorbed(m) or (b.caption and m.kind is ElementKind.TEXT and m.text == b.caption):
                continue
            lines.append("  " + element_line(m))
    rest = [e for e in elements if e.id not in seen]
    if rest:
        lines.append("Other:")
        absorbed = _Absorber(rest, parts)
        for m in sorted(rest, key=lambda m: (m.rect.top // 8, m.rect.left)):
            if not absorbed(m):
                lines.append("  " + element_line(m))
    return "\n".join(lines)


def estimate_tokens(text: str) -> int:
    """Rough token count (about four characters per token for English UI text)."""
    return max(1, round(len(text) / 4))
