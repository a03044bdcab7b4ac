"""Turn a model's reply into an ``Action``: free-text commands and JSON forms.

Free text: "tap the alarm tab", "type 'Run for 30 minutes' in the Description box",
"scroll down", "open Clock", "go back", "done", "impossible", "tap [5]", "tap (540, 1200)".
JSON: this project's ``{"action": "tap", "element": "5"}`` form, the App-D grounder
form (``{"action_type": "click", "x": .., "y": ..}``) and the AITW/Auto-UI form.
Targets stay ungrounded (a description or an element id) until a grounder resolves
them.  Also: pulling the answer out of chain-of-thought/ReAct replies, and a normalised
key for comparing actions (CoT-SC votes, repeat detection).  No LLM calls, no device.
"""

from __future__ import annotations

import math
import re
from typing import Any

from agent.types import Action, ActionType, Direction, Target
from vision.geometry import Point, Size


class CommandError(ValueError):
    """A reply could not be read as an action; the message quotes it and says what is accepted."""


class BadPoint(CommandError):
    """A reply's coordinates are not finite or lie outside the screen: never executed."""


ACCEPTED = (
    "tap <element>, long press <element>, type '<text>' in <element>, scroll up/down/left/right, "
    "open <app>, go back, go home, press enter, wait, done, impossible"
)

_PREFIXES = re.compile(
    r"^\s*(?:(?:final\s+)?answer|action|next action|command|step|you should|i should|i will|i'll|let's|let us|"
    r"next|then|now|please|so|the next action is|the next step is|to|[0-9]+[.)])\s*[:,-]?\s*",
    re.I,
)
_QUOTED = r"""["'“‘`]([^"'”’`]+)["'”’`]"""
_VERB_TAP = r"(?:tap|click|press|select|choose|touch|hit|pick|toggle|turn on|turn off|check|uncheck|enable|disable)"


def _clean(text: str) -> str:
    s = text.strip().strip("`").strip()
    s = s.splitlines()[0] if s else s
    for _ in range(4):
        new = _PREFIXES.sub("", s, count=1)
        if new == s:
            break
        s = new
    s = s.strip().rstrip(".!;").strip()
    s = re.sub(r"(?:\s+(?:now|please|first|next|then|again|right away))+$", "", s, flags=re.I)
    return s.strip().strip("\"'").strip()


def _target_from(words: str) -> Target:
    w = words.strip().strip(".").strip()
    # ids with a letter prefix ("[t7]", "#t7", "element t7"): the tree parser's naming
    m = re.fullmatch(r"(?:(?:element|id)\s*)?[\[#]?\s*([a-z]{1,2}\d+)\s*\]?(?:\s*[:,-]?\s+(.*))?", w, re.I)
    if m and (w[:1] in "[#" or re.match(r"(?:element|id)\b", w, re.I)):
        return Target(element_id=m.group(1), description=(m.group(2) or "").strip())
    m = re.fullmatch(r"(?:element\s*)?[\[#(]?\s*(?:id\s*)?(\d+)\s*[\])]?(?:\s+(.*))?", w, re.I)
    if m:
        return Target(element_id=m.group(1), description=(m.group(2) or "").strip())
    m = re.match(r"^(?:element|id)\s*[\[#]?\s*(\d+)\]?\s*[:,-]?\s*(.*)$", w, re.I)
    if m:
        return Target(element_id=m.group(1), description=m.group(2).strip())
    m = re.match(r"^\[(\d+)\]\s*(.*)$", w)
    if m:
        return Target(element_id=m.group(1), description=m.group(2).strip())
    w = re.sub(r"^(?:on|at)\s+", "", w, flags=re.I)
    w = re.sub(r"^(?:the|a|an)\s+", "", w, flags=re.I)
    return Target(description=w.strip().strip("\"'“”"))


def _point_from(words: str, screen: Size | None = None) -> Point | None:
    m = re.search(r"\(?\s*(-?\d+)\s*,\s*(-?\d+)\s*\)?\s*$", words)
    if m and re.match(r"^(?:at\s*)?\(?\s*-?\d", words.strip(), re.I):
        return on_screen(int(m.group(1)), int(m.group(2)), screen)
    return None


#: The largest coordinate accepted when the screen size is unknown (no phone is this big).
MAX_COORDINATE = 20_000


def on_screen(x: Any, y: Any, screen: Size | None = None) -> Point:
    """``(x, y)`` as a device point, refused (``CommandError``) unless both are finite
    numbers inside ``screen`` (or inside 0..``MAX_COORDINATE`` when the size is unknown).

    A model's reply may carry ``Infinity``, ``1e999`` or points far off the screen; none of
    them may reach the phone.
    """
    try:
        fx, fy = float(x), float(y)
    except (TypeError, ValueError):
        raise BadPoint(f"coordinates ({x!r}, {y!r}) are not numbers") from None
    if isinstance(x, bool) or isinstance(y, bool) or not (math.isfinite(fx) and math.isfinite(fy)):
        raise BadPoint(f"coordinates ({x!r}, {y!r}) are not finite numbers")
    width, height = (screen.width, screen.height) if screen is not None else (MAX_COORDINATE, MAX_COORDINATE)
    px, py = int(round(fx)), int(round(fy))
    if not (0 <= px < max(width, 1) and 0 <= py < max(height, 1)):
        where = f"the {width}x{height} screen" if screen is not None else "any screen"
        raise BadPoint(f"the point ({fx:g}, {fy:g}) is outside {where}; choose an element on the screen")
    return Point(px, py)


def parse_command(text: str, screen: Size | None = None) -> Action:
    """A free-text command (or an embedded JSON action) -> ``Action``.  Raises ``CommandError``."""
    if not text or not text.strip():
        raise CommandError(f"empty command; expected one of: {ACCEPTED}")
    if "{" in text:
        try:
            from agent.llm.base import parse_json_reply

            data = parse_json_reply(text)
            if isinstance(data, dict):
                return parse_json_action(data, screen)
        except BadPoint:
            raise
        except (ValueError, CommandError, RecursionError):
            pass
    s = _clean(text)
    low = s.lower()
    if not s:
        raise CommandError(f"empty command in {text!r}; expected one of: {ACCEPTED}")
    if re.search(r"<[a-z _-]{2,20}>", low):
        raise CommandError(f"{s[:80]!r} repeats a placeholder from the instructions; expected one of: {ACCEPTED}")

    if re.search(r"\b(impossible|infeasible|cannot be (?:done|completed)|can't be done|not possible)\b", low):
        return Action.simple(ActionType.IMPOSSIBLE)
    if re.fullmatch(r"(?:be )?(?:done|finished|complete|completed|task (?:is )?(?:complete|completed|done)|stop|"
                    r"the task is (?:complete|done|finished)|(?:i am|i'm|we are) done|nothing(?: more)? to do)", low) \
            or low.startswith(("be done", "done", "task complete", "status complete", "the goal is achieved")):
        return Action.simple(ActionType.COMPLETE)
    if re.fullmatch(r"(?:go|navigate|press|hit|tap)?\s*(?:the\s+)?back(?: button| key)?|go back.*|navigate back.*", low):
        return Action.simple(ActionType.BACK)
    if re.fullmatch(r"(?:go|navigate|press|return)?\s*(?:to\s+)?(?:the\s+)?home(?: screen| button| key)?", low):
        return Action.simple(ActionType.HOME)
    if re.fullmatch(r"(?:press|hit|tap)?\s*(?:the\s+)?(?:enter|return|search|go)(?: key| button)?(?: on the keyboard)?", low) \
            and "button" not in low or low in ("submit", "press enter", "keyboard enter"):
        return Action.simple(ActionType.ENTER)
    if re.fullmatch(r"wait(?: for .*)?|do nothing|pause", low):
        return Action.simple(ActionType.WAIT)

    m = re.match(r"^(?:scroll|swipe|fling)\s+(up|down|left|right)\b", low)
    if m:
        d = Direction(m.group(1))
        if low.startswith("scroll"):
            return Action.scroll(d, screen)
        return Action(ActionType.SWIPE, direction=d) if screen is None else _finger_swipe(d, screen)
    m = re.match(r"^(?:scroll|swipe)\b.*\b(up|down|left|right)\b", low)
    if m:
        return Action.scroll(Direction(m.group(1)), screen)

    m = re.match(r"^(?:open|launch|start|run)\s+(?:up\s+)?(?:the\s+)?(.+?)(?:\s+app(?:lication)?)?$", s, re.I)
    if m and not re.match(r"^(?:the\s+)?(?:menu|drawer|settings? (?:menu|page))\b", m.group(1), re.I):
        app = m.group(1).strip().strip("\"'")
        if re.search(r"[<>{}\[\]()\":;,]", app) or len(app) > 40 or len(app.split()) > 4:
            raise CommandError(f"{app!r} is not an app name; expected one of: {ACCEPTED}")
        return Action.open_app(app)

    m = re.match(rf"^(?:type|enter|input|write|fill in|put)\s+{_QUOTED}\s*(?:(?:in|into|on|in the|to)\s+(.+))?$", s, re.I) \
        or re.match(r"^(?:type|enter|input|write|put)\s+(.+?)\s+(?:in|into)\s+(?:the\s+)?(.+?(?:box|field|bar|area|input))$",
                    s, re.I) \
        or re.match(r"^(?:type|enter|input|write)\s+(.+?)()$", s, re.I)
    if m:
        body = m.group(1).strip().strip("\"'“”‘’")
        where = (m.group(2) or "").strip() if m.lastindex and m.lastindex >= 2 else ""
        if body:
            return Action.type_text(body, _target_from(where) if where else None)

    m = re.match(r"^(?:long[- ]press|long[- ]click|press and hold|tap and hold|hold)\s+(?:on\s+)?(.+)$", s, re.I)
    if m:
        p = _point_from(m.group(1), screen)
        if p is not None:
            return Action(ActionType.LONG_PRESS, touch=p, duration_ms=800)
        return Action(ActionType.LONG_PRESS, target=_target_from(m.group(1)), duration_ms=800)

    m = re.match(rf"^{_VERB_TAP}\s+(?:on\s+)?(.+)$", s, re.I)
    if m:
        rest = m.group(1)
        p = _point_from(rest, screen)
        if p is not None:
            return Action(ActionType.TAP, touch=p)
        return Action(ActionType.TAP, target=_target_from(rest))
    raise CommandError(f"cannot read {text.strip()[:120]!r} as an action; expected one of: {ACCEPTED}")


_VERB_START = re.compile(
    r"\b(?:tap|click|press|select|choose|touch|open|launch|type|enter|input|scroll|swipe|long[- ]press|go back|"
    r"go home|navigate back|navigate home)\b", re.I)


def parse_lenient(text: str, screen: Size | None = None) -> Action:
    """Like ``parse_command``, but also finds a command inside chatty replies
    ("Your response is to tap the Settings icon.").  Raises ``CommandError``."""
    try:
        return parse_command(text, screen)
    except BadPoint:
        raise
    except CommandError as first:
        error = first
    pieces = [p.strip() for p in re.split(r"(?<=[.!?])\s+|\n+", text) if p.strip()]
    for piece in pieces:
        for m in _VERB_START.finditer(piece):
            try:
                return parse_command(piece[m.start():], screen)
            except CommandError:
                continue
    raise error


def _finger_swipe(finger: Direction, screen: Size) -> Action:
    return Action.scroll(finger.opposite, screen)


_APP_D = {
    "click": ActionType.TAP, "tap": ActionType.TAP, "long_press": ActionType.LONG_PRESS,
    "input_text": ActionType.TYPE, "type": ActionType.TYPE, "keyboard_enter": ActionType.ENTER,
    "enter": ActionType.ENTER, "navigate_home": ActionType.HOME, "home": ActionType.HOME,
    "navigate_back": ActionType.BACK, "back": ActionType.BACK, "open_app": ActionType.OPEN_APP,
    "wait": ActionType.WAIT, "complete": ActionType.COMPLETE, "done": ActionType.COMPLETE,
    "impossible": ActionType.IMPOSSIBLE, "scroll": ActionType.SWIPE, "swipe": ActionType.SWIPE,
}


def parse_json_action(data: dict[str, Any], screen: Size | None = None) -> Action:
    """A JSON action in any of the accepted forms -> ``Action``.  Raises ``CommandError``."""
    if not isinstance(data, dict):
        raise CommandError(f"expected a JSON object, got {type(data).__name__}")
    if isinstance(data.get("action"), dict):
        return parse_json_action(data["action"], screen)
    if "touch_point" in data or isinstance(data.get("action_type"), int) or str(data.get("action_type", "")).isdigit():
        if screen is None:
            raise CommandError("an AITW action needs the screen size to convert its points")
        try:
            return Action.from_aitw(data, screen)
        except ValueError as exc:
            raise CommandError(str(exc)) from None
    kind_raw = str(data.get("action_type") or data.get("action") or data.get("type") or "").strip().lower()
    if kind_raw == "status":
        status = str(data.get("goal_status", "")).lower()
        return Action.simple(ActionType.IMPOSSIBLE if "infeas" in status or "imposs" in status else ActionType.COMPLETE)
    kind = _APP_D.get(kind_raw.replace(" ", "_").replace("-", "_"))
    if kind is None:
        command = data.get("command") or data.get("action_text")
        if isinstance(command, str):
            return parse_command(command, screen)
        raise CommandError(f"unknown action {kind_raw!r} in {data}; expected one of: {', '.join(sorted(_APP_D))}")
    target = _json_target(data)
    point = None
    if data.get("x") is not None and data.get("y") is not None:
        point = on_screen(data["x"], data["y"], screen)
    try:
        if kind in (ActionType.TAP, ActionType.LONG_PRESS):
            if point is None and target is None:
                raise CommandError(f"{kind.value} needs an element or x/y in {data}")
            return Action(kind, touch=point, target=target, duration_ms=800 if kind is ActionType.LONG_PRESS else None)
        if kind is ActionType.TYPE:
            text = data.get("text", data.get("typed_text"))
            if not isinstance(text, str) or not text:
                raise CommandError(f"type needs non-empty text in {data}")
            if point is not None:
                target = Target(element_id=target.element_id if target else None, point=point,
                                description=target.description if target else "")
            return Action.type_text(text, target)
        if kind is ActionType.OPEN_APP:
            app = data.get("app_name") or data.get("app") or data.get("name") or (target.description if target else "")
            return Action.open_app(str(app))
        if kind is ActionType.SWIPE:
            d = str(data.get("direction", "")).lower()
            if d not in {x.value for x in Direction}:
                raise CommandError(f"scroll needs a direction up/down/left/right in {data}")
            return Action.scroll(Direction(d), screen)
        return Action.simple(kind)
    except ValueError as exc:
        if isinstance(exc, CommandError):
            raise
        raise CommandError(f"invalid action {data}: {exc}") from None


def _json_target(data: dict[str, Any]) -> Target | None:
    eid = data.get("element_id", data.get("element", data.get("id", data.get("index"))))
    desc = data.get("target") or data.get("description") or data.get("element_name") or ""
    if isinstance(eid, str) and not eid.strip().lstrip("[#").rstrip("]").isdigit():
        desc, eid = desc or eid, None
    if eid is None and not desc:
        return None
    return Target(element_id=str(eid).strip("[]# ") if eid is not None else None, description=str(desc))


# ---- pulling the action out of reasoning --------------------------------------------


def extract_answer(reply: str) -> str:
    """CoT-SC style: everything after the last ``Answer:``, else the last sentence."""
    m = list(re.finditer(r"answer\s*:", reply, re.I))
    if m:
        return reply[m[-1].end():].strip().splitlines()[0].strip() if reply[m[-1].end():].strip() else ""
    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n+", reply.strip()) if s.strip()]
    return sentences[-1] if sentences else ""


def extract_thought_action(reply: str) -> tuple[str, str]:
    """ReAct style: (thought, action); the action is ``unknown`` when no ``Action:`` is found."""
    thought_m = re.search(r"thought\s*\d*\s*:\s*(.*?)(?=\baction\s*\d*\s*:|$)", reply, re.I | re.S)
    action_m = re.search(r"\baction\s*\d*\s*:\s*(.+)", reply, re.I)
    thought = thought_m.group(1).strip() if thought_m else reply.split("Action")[0].strip()
    if not action_m:
        return thought, "unknown"
    return thought, action_m.group(1).strip().splitlines()[0].strip()


# ---- comparing actions -----------------------------------------------------------------

_FILLER = {"the", "a", "an", "on", "in", "into", "to", "of", "button", "icon", "option", "field", "box", "text"}


def normalise_words(text: str) -> str:
    words = re.findall(r"[a-z0-9]+", text.lower())
    return " ".join(w for w in words if w not in _FILLER)


def action_key(action: Action) -> str:
    """A normalised identity for votes and repeat detection ("tap|alarm tab")."""
    parts = [action.type.value]
    t = action.target
    if t is not None and t.element_id:
        parts.append(f"#{t.element_id}")
    elif t is not None and t.description:
        parts.append(normalise_words(t.description))
    elif action.touch is not None and action.type is not ActionType.SWIPE:
        parts.append(f"{action.touch.x // 20},{action.touch.y // 20}")
    if action.type is ActionType.SWIPE:
        d = action.finger_direction()
        parts.append(d.value if d else "")
    if action.text:
        parts.append(action.text.strip().lower())
    if action.app:
        parts.append(normalise_words(action.app))
    return "|".join(parts)
