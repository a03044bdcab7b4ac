"""Structured replies: a JSON schema built for one screen, and the reader of replies to it.

A model server that can constrain decoding (llama.cpp's grammar-backed JSON schemas,
Ollama's ``format``) then cannot reply with an element that is not on the screen, an
action an element does not allow, or an app that is not installed:

* ``tap`` / ``long_press`` name one of the screen's visible elements that can take a tap:
  where the accessibility tree says what is clickable (tree and fused elements) only
  clickable, checkable or editable ones, so a title or a label is never offered; elements
  found in the pixels alone are all offered, since pixels cannot say;
* ``type`` names an editable field, with free text only for the words to type;
* ``scroll`` names a scrollable container when the screen has any (direction otherwise);
* ``open_app`` names an installed app when the list is known;
* ``back``, ``home``, ``enter``, ``wait``, and ``complete`` / ``impossible`` when allowed;
* ``long_press`` only when the task asks to press and hold (``asks_to_hold``): a small
  model otherwise picks it for plain taps, and few phone tasks need it.

Each action object names its target first and its ``type`` last: a model that has just
written which app or element the task needs then writes that element, not another.

Actions in ``exclude`` are not offered: the one the effect check found to change nothing,
and the ways back out of a detour taken from this screen before (see
``agent.effects.returning_actions``).  Their element, scroll direction, app or key is left
out of the form, so a model that ignores the notes still cannot go round the same loop.

Elements are named by their words and id (``"Display [32]"``) so that a small model
writes the words it means and the schema keeps it on the screen.  Elements a dialog
covers are left out, and so are the parts of a list row or tile found in the pixels that
only repeat it (``vision.row_parts``): the list reads like the screen, one entry a row.  ``read_action`` turns a reply into an ``Action`` (ids resolved,
points left to the grounder) and refuses anything outside the form, so a server that
ignores the schema still cannot slip an off-screen element through.  ``reply_problem``
judges any action (structured or free text) against the screen, for evidence and for
the benchmark's "named an element not on the screen" count.

Pure functions and frozen data: no LLM calls, no device, no Qt.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agent.commands import CommandError
from agent.grounding.match import best_text_match
from agent.screen_text import listed
from agent.types import Action, ActionType, Direction, Target
from vision.geometry import Point
from vision.types import Element, ElementKind, ElementSource, ScreenParse

#: Longest free text the schema allows: thoughts, typed text, reasons.
THOUGHT_CHARS = 200
TEXT_CHARS = 120
#: The one plain sentence of why, shown on the proposal card.
WHY_CHARS = 120
WHY_FIELD = "why"
NAME_CHARS = 40

_ALWAYS = ("back", "home", "enter", "wait")
_ENDINGS = ("complete", "impossible")
_HOLD = re.compile(r"\b(?:long[- ]?(?:press|tap|click)|press(?:ing)? and hold|hold(?:ing)? down|touch and hold|"
                   r"hold|drag|context menu)\b", re.I)
_PLACEHOLDER = re.compile(r"<[^<>]{1,30}>|\[(?:id|element|text|name|app|n|x)\]|\{[a-z_ ]{1,20}\}", re.I)


def asks_to_hold(goal: str) -> bool:
    """True when the task's words call for pressing and holding (long press, drag, a context menu)."""
    return bool(_HOLD.search(goal or ""))


def is_covered(element: Element) -> bool:
    """True when something (a dialog, a sheet, a menu) lies over the element, so a tap would not reach it."""
    return element.covered


def choosable(parse: ScreenParse) -> list[Element]:
    """The elements a reply may name: actionable ones that nothing covers, one entry per
    list row or tile found in the pixels (its title's text, its value, an icon named after
    it and its chevron are left out: ``vision.row_parts``)."""
    return [e for e in listed(parse) if not is_covered(e)]


def takes_a_tap(element: Element) -> bool:
    """True unless the tree says the element ignores taps (a static title, label or image)."""
    if element.source not in (ElementSource.HIERARCHY, ElementSource.FUSED):
        return True
    return element.clickable or element.checkable or is_editable(element)


def is_editable(element: Element) -> bool:
    return element.kind is ElementKind.EDIT_TEXT or "edittext" in element.class_name.lower()


def _switch_states() -> frozenset[str]:
    """The words a switch shows for its state, in every language ("on", "off", "an", "aus" …)."""
    from agent.knowledge.lexicon import ConventionWords

    words = ConventionWords.load()
    return words.merged("on_particle") | words.merged("off_particle")


def element_name(element: Element) -> str:
    """Short words for an element: its text, else the first part of its label, else its kind."""
    words = element.text or element.label.split(" · ")[0] or element.display_name
    words = " ".join(words.replace('"', "'").replace("\\", "/").split())
    if not words or (element.kind is ElementKind.SWITCH and words.casefold() in _switch_states() and element.label):
        words = " ".join(element.label.split(" · ")[0].split()) or words
    if not words:
        words = "list" if element.kind is ElementKind.CONTAINER else element.kind.value.replace("_", " ")
    return words if len(words) <= NAME_CHARS else words[: NAME_CHARS - 1].rstrip() + "…"


def element_key(element: Element) -> str:
    """How a reply names the element: ``"Display [32]"``."""
    return f"{element_name(element)} [{element.id}]"


@dataclass(frozen=True, slots=True)
class Choice:
    """One element a structured reply may name."""

    key: str
    element_id: str


@dataclass(frozen=True, slots=True)
class ReplyForm:
    """The per-screen reply schema and what it offers, for reading the reply back."""

    schema: dict[str, Any] = field(compare=False, hash=False)
    kinds: tuple[str, ...] = ()
    tappable: tuple[Choice, ...] = ()
    editable: tuple[Choice, ...] = ()
    scrollable: tuple[Choice, ...] = ()
    apps: tuple[str, ...] = ()
    directions: tuple[str, ...] = tuple(d.value for d in Direction)

    def element_id(self, key: str, pool: tuple[Choice, ...]) -> str | None:
        for c in pool:
            if c.key == key:
                return c.element_id
        return None


def _string(max_chars: int, min_chars: int = 0) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "string", "maxLength": max_chars}
    if min_chars:
        out["minLength"] = min_chars
    return out


def _variant(kind: str, **props: dict[str, Any]) -> dict[str, Any]:
    properties: dict[str, Any] = {**props, "type": {"const": kind}}
    return {"type": "object", "properties": properties, "required": list(properties),
            "additionalProperties": False}


def action_form(parse: ScreenParse, *, apps: Sequence[str] = (), allow_done: bool = True,
                exclude: Sequence[Action] = (), hold: bool = False, only: Sequence[str] = ()) -> ReplyForm:
    """The ``action`` object's schema for this screen, and the choices behind it.

    ``exclude``: actions not to offer again here (one that changed nothing, a way back
    out of a loop).  ``hold``: offer ``long_press`` too (the task asks to press and hold).
    ``only``: the ids of the elements to offer for tapping and typing, in this order (the
    screen's evidence ranked them; empty: every element, in the parse's order).
    """
    taps = {x.target.element_id for x in exclude
            if x.target is not None and x.type in (ActionType.TAP, ActionType.LONG_PRESS)}
    typed = {x.target.element_id for x in exclude if x.target is not None and x.type is ActionType.TYPE}
    elements = choosable(parse)
    if only:
        order = {eid: i for i, eid in enumerate(only)}
        ranked = sorted((e for e in elements if e.id in order), key=lambda e: order[e.id])
        elements = ranked or elements
    tappable = tuple(Choice(element_key(e), e.id) for e in elements if takes_a_tap(e) and e.id not in taps)
    editable = tuple(Choice(element_key(e), e.id) for e in elements if is_editable(e) and e.enabled
                     and e.id not in typed)
    scrollable = tuple(Choice(element_key(e), e.id) for e in parse.elements if e.scrollable and not is_covered(e))
    app_names = tuple(dict.fromkeys(a.strip() for a in apps if a and a.strip()))
    stale_apps = {(x.app or "").strip().lower() for x in exclude if x.type is ActionType.OPEN_APP}
    if stale_apps and len(app_names) > len(stale_apps):
        app_names = tuple(a for a in app_names if a.lower() not in stale_apps)
    fingers = {f.opposite for f in (x.finger_direction() for x in exclude) if f is not None}
    directions = tuple(d.value for d in Direction if d not in fingers) or tuple(d.value for d in Direction)
    stale_keys = {x.type.value for x in exclude if x.type in (ActionType.BACK, ActionType.HOME, ActionType.ENTER)}
    variants: list[dict[str, Any]] = []
    kinds: list[str] = []
    if tappable:
        keys = [c.key for c in tappable]
        variants.append(_variant("tap", element={"enum": keys}))
        kinds.append("tap")
        if hold:
            variants.append(_variant("long_press", element={"enum": keys}))
            kinds.append("long_press")
    if editable:
        variants.append(_variant("type", element={"enum": [c.key for c in editable]},
                                 text=_string(TEXT_CHARS, 1)))
        kinds.append("type")
    direction_enum = {"enum": list(directions)}
    if scrollable:
        variants.append(_variant("scroll", element={"enum": [c.key for c in scrollable]}, direction=direction_enum))
    else:
        variants.append(_variant("scroll", direction=direction_enum))
    kinds.append("scroll")
    variants.append(_variant("open_app", app={"enum": list(app_names)} if app_names else _string(NAME_CHARS, 1)))
    kinds.append("open_app")
    for k in (*_ALWAYS, *(_ENDINGS if allow_done else ())):
        if k not in stale_keys:
            variants.append(_variant(k))
            kinds.append(k)
    return ReplyForm({"oneOf": variants}, tuple(kinds), tappable, editable, scrollable, app_names, directions)


def reply_schema(form: ReplyForm, *, thought: str | None = None, extra: dict[str, Any] | None = None,
                 why: bool = False) -> dict[str, Any]:
    """The whole reply: an optional free-text field first (``thought``), then ``action``,
    then (``why``) one short sentence saying why, then any ``extra`` properties (all
    required, in this order)."""
    properties: dict[str, Any] = {}
    if thought:
        properties[thought] = _string(THOUGHT_CHARS)
    properties["action"] = form.schema
    if why:
        properties[WHY_FIELD] = _string(WHY_CHARS)
    properties.update(extra or {})
    return {"type": "object", "properties": properties, "required": list(properties),
            "additionalProperties": False}


def refuse_placeholder(text: str) -> None:
    """Raise ``CommandError`` when ``text`` repeats a placeholder of the instructions
    (``<element>``, ``[id]``, ``{text}``) instead of naming something real."""
    m = _PLACEHOLDER.search(text or "")
    if m:
        raise CommandError(f"{text.strip()[:80]!r} repeats the placeholder {m.group(0)!r} from the instructions; "
                           "name a real element, text or app instead")


def read_action(data: Any, form: ReplyForm, parse: ScreenParse) -> Action:
    """A structured reply (the whole object or its ``action`` part) -> ``Action``.

    Raises ``CommandError`` for anything the form does not offer.  A scroll that names
    a container swipes inside it.
    """
    if isinstance(data, dict) and isinstance(data.get("action"), dict):
        data = data["action"]
    if not isinstance(data, dict):
        raise CommandError(f"expected a JSON object with an \"action\", got {type(data).__name__}")
    kind = str(data.get("type", "")).strip().lower()
    if kind not in form.kinds:
        raise CommandError(f"action {kind!r} is not offered on this screen; choose one of: {', '.join(form.kinds)}")
    if kind in ("tap", "long_press"):
        key = str(data.get("element", ""))
        eid = form.element_id(key, form.tappable)
        if eid is None:
            raise CommandError(f"{key!r} is not an element of this screen")
        t = ActionType.TAP if kind == "tap" else ActionType.LONG_PRESS
        return Action(t, target=Target(element_id=eid, description=_words(key)),
                      duration_ms=800 if t is ActionType.LONG_PRESS else None)
    if kind == "type":
        key = str(data.get("element", ""))
        eid = form.element_id(key, form.editable)
        if eid is None:
            raise CommandError(f"{key!r} is not a text field of this screen")
        text = str(data.get("text", ""))
        if not text.strip():
            raise CommandError("type needs the text to type")
        refuse_placeholder(text)
        return Action.type_text(text, Target(element_id=eid, description=_words(key)))
    if kind == "scroll":
        d = str(data.get("direction", "")).lower()
        if d not in form.directions:
            raise CommandError(f"scroll needs a direction, one of {'/'.join(form.directions)}; got {d!r}")
        if form.scrollable:
            key = str(data.get("element", ""))
            eid = form.element_id(key, form.scrollable)
            container = parse.element(eid) if eid is not None else None
            if container is None:
                raise CommandError(f"{key!r} is not a scrollable part of this screen")
            return scroll_within(Action.scroll(Direction(d), parse.screen_size), container)
        return Action.scroll(Direction(d), parse.screen_size)
    if kind == "open_app":
        app = str(data.get("app", "")).strip()
        if form.apps and app not in form.apps:
            raise CommandError(f"{app!r} is not an installed app; choose one of: {', '.join(form.apps)}")
        refuse_placeholder(app)
        if not app:
            raise CommandError("open_app needs an app name")
        return Action.open_app(app)
    return Action.simple(ActionType(kind))


def scroll_within(action: Action, container: Element) -> Action:
    """A scroll moved inside ``container``: the finger travels over 60 % of it, through its centre."""
    finger = action.finger_direction()
    if finger is None:
        return action
    r = container.rect
    cx, cy = r.center.x, r.center.y
    dx, dy = round(r.width * 0.3), round(r.height * 0.3)
    start, end = {
        Direction.UP: (Point(cx, cy + dy), Point(cx, cy - dy)),
        Direction.DOWN: (Point(cx, cy - dy), Point(cx, cy + dy)),
        Direction.LEFT: (Point(cx + dx, cy), Point(cx - dx, cy)),
        Direction.RIGHT: (Point(cx - dx, cy), Point(cx + dx, cy)),
    }[finger]
    if start == end:
        return action
    return Action(ActionType.SWIPE, touch=start, lift=end, direction=finger, duration_ms=300)


def _words(key: str) -> str:
    return re.sub(r"\s*\[[^\]]*\]$", "", key).strip()


def reply_problem(action: Action, parse: ScreenParse, threshold: float = 0.75) -> str | None:
    """Why the action names nothing on this screen (``None`` when it does or names nothing).

    An element id must be an uncovered element of the parse; words must match one by
    text (the grounder's rule).  Used for evidence and for counting such replies.
    """
    target = action.target
    if action.type not in (ActionType.TAP, ActionType.LONG_PRESS, ActionType.TYPE) or target is None:
        return None
    if target.point is not None or (action.touch is not None and not target.element_id):
        return None
    if target.element_id:
        e = parse.element(target.element_id)
        if e is None:
            return f"names no element on this screen ([{target.element_id}])"
        if is_covered(e):
            return f"names an element a dialog covers ([{e.id}] {e.display_name!r})"
        return None
    if target.description:
        hit = best_text_match(target.description, parse, threshold)
        if hit is None:
            return f"names no element on this screen ({target.description!r})"
        if is_covered(hit[0]):
            return f"names an element a dialog covers ({target.description!r})"
    return None
