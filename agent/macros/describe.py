"""Semantic step descriptions: an action on an element, in words.

Turns "tap at (540, 312)" into "tap the 'Alarm' tab in the top tab bar" from the
element under the finger and its block, the way VisionTasker's PBD turns taps into
steps an LLM can follow.  Pure functions; no device, no LLM.
"""

from __future__ import annotations

from agent.macros.fingerprint import inner_text
from agent.types import Action, ActionType
from vision.types import Block, Element, ElementKind, ScreenParse

_KIND_NOUN: dict[ElementKind, str] = {
    ElementKind.BUTTON: "button",
    ElementKind.EDIT_TEXT: "text field",
    ElementKind.IMAGE: "image",
    ElementKind.PAGE_INDICATOR: "page indicator",
    ElementKind.SEEK_BAR: "slider",
    ElementKind.RATING_BAR: "rating bar",
    ElementKind.CHECK_BOX: "checkbox",
    ElementKind.RADIO_GROUP: "radio button",
    ElementKind.SPINNER: "drop-down",
    ElementKind.SWITCH: "switch",
    ElementKind.CONTAINER: "item",
    ElementKind.TEXT: "",
    ElementKind.UNKNOWN: "element",
    ElementKind.STATUS_BAR: "status bar",
    ElementKind.NAVIGATION_BAR: "navigation bar",
}


def _role_words(role: str) -> str:
    return role.replace("_", " ").replace("-", " ").strip()


def _vertical_place(block: Block, parse: ScreenParse) -> str:
    h = parse.screen_size.height or 1
    cy = (block.rect.top + block.rect.bottom) / 2 / h
    if cy < 0.2:
        return "top "
    if cy > 0.8:
        return "bottom "
    return ""


def kind_noun(element: Element, block: Block | None = None) -> str:
    """The noun for an element; an element in a tab bar is a "tab"."""
    if block is not None and "tab" in block.role.lower() and element.kind in (
        ElementKind.BUTTON, ElementKind.TEXT, ElementKind.CONTAINER
    ):
        return "tab"
    return _KIND_NOUN.get(element.kind, "element")


def toggle_inside(element: Element, parse: ScreenParse) -> Element | None:
    """The switch or checkbox that tapping ``element`` toggles (itself or one inside it)."""
    if element.kind in (ElementKind.SWITCH, ElementKind.CHECK_BOX) and element.checked is not None:
        return element
    inside = [e for e in parse.elements if e.kind in (ElementKind.SWITCH, ElementKind.CHECK_BOX)
              and e.checked is not None and element.rect.contains_rect(e.rect)]
    return inside[0] if len(inside) == 1 else None


#: Texts a switch or checkbox shows for its own state (Android puts them in the node's text).
STATE_WORDS = {"on", "off", "an", "aus", "ein", "checked", "unchecked", "true", "false"}


def row_label(element: Element, parse: ScreenParse) -> str:
    """The text that names a control on its row (e.g. "Airplane mode" for its switch):
    the nearest text to its left whose vertical span overlaps the control's."""
    best, best_gap = "", None
    cy = (element.rect.top + element.rect.bottom) / 2
    for other in parse.elements:
        text = (other.text or "").strip()
        if other.id == element.id or not text or text.lower() in STATE_WORDS:
            continue
        r = other.rect
        if r.right > element.rect.left + 4 or not (r.top <= cy <= r.bottom or element.rect.top <= (r.top + r.bottom) / 2 <= element.rect.bottom):
            continue
        gap = element.rect.left - r.right
        if best_gap is None or gap < best_gap:
            best, best_gap = text, gap
    return best


def element_phrase(element: Element, parse: ScreenParse) -> str:
    """A noun phrase naming the element and where it sits: "the 'Alarm' tab in the top tab bar"."""
    block = parse.block_of(element.id)
    noun = kind_noun(element, block)
    toggle = toggle_inside(element, parse)
    if toggle is not None and toggle is not element:
        noun = kind_noun(toggle, None)
    name = inner_text(parse, element) or element.label
    if toggle is not None and (not name or name.strip().lower() in STATE_WORDS):
        name = row_label(toggle, parse) or ("" if name.strip().lower() in STATE_WORDS else name)
    if not name and element.resource_id:
        name = element.display_name
    if name:
        core = f"the '{name}' {noun}".rstrip()
    else:
        core = f"the {noun or 'element'}"
        x = (element.rect.left + element.rect.right) / 2 / max(1, parse.screen_size.width)
        y = (element.rect.top + element.rect.bottom) / 2 / max(1, parse.screen_size.height)
        horiz = "left" if x < 0.33 else "right" if x > 0.67 else "centre"
        vert = "top" if y < 0.33 else "bottom" if y > 0.67 else "middle"
        core += f" at the {vert} {horiz}" if horiz != "centre" or vert != "middle" else " in the middle"
    if block is not None:
        if block.caption and block.caption != name:
            core += f" in the '{block.caption}' section"
        elif block.role and block.role not in ("root", "screen", "unknown", "body", "content", "main", "group"):
            role = _role_words(block.role)
            place = _vertical_place(block, parse)
            if place.strip() in role:
                place = ""
            core += f" in the {place}{role}"
    return core


def describe_step(action: Action, element: Element | None, parse: ScreenParse | None) -> str:
    """The step in words, for the user and for planner prompts."""
    t = action.type
    phrase = element_phrase(element, parse) if element is not None and parse is not None else ""
    if t is ActionType.TAP:
        toggle = toggle_inside(element, parse) if element is not None and parse is not None else None
        if toggle is not None:
            state = "off" if toggle.checked else "on"
            return f"turn {state} {phrase}"
        return f"tap {phrase}" if phrase else action.describe()
    if t is ActionType.LONG_PRESS:
        return f"long-press {phrase}" if phrase else action.describe()
    if t is ActionType.SWIPE:
        d = action.finger_direction()
        content = d.opposite.value if d else "down"
        if element is not None and parse is not None:
            block = parse.block_of(element.id)
            where = f"the '{block.caption}' list" if block is not None and block.caption else "the list"
            return f"scroll {content} in {where}"
        return f"scroll {content}"
    if t is ActionType.TYPE:
        return f"type '{action.text}' into {phrase}" if phrase else f"type '{action.text}'"
    if t is ActionType.OPEN_APP:
        return f"open the {action.app} app"
    return action.describe()
