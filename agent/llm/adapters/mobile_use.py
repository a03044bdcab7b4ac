"""Families that answer with a ``mobile_use`` tool call in JSON: Qwen3-VL, GUI-Owl and MAI-UI.

The reply carries ``<tool_call>{"name": "mobile_use", "arguments": {...}}</tool_call>``
after the model's reasoning (``<thinking>``/``<think>`` tags or a ``Thought:`` line).
The argument names follow the Qwen mobile-use tool: ``click``/``long_press`` with
``coordinate``, ``swipe`` with ``coordinate`` + ``coordinate2`` (or MAI-UI's
``direction``), ``type``/``open``/``answer`` with ``text``, ``system_button`` with
``button``, ``terminate`` with ``status``; MAI-UI adds ``ask_user``/``INFO`` and ``AWAKE``.
Only the coordinate convention differs: Qwen3-VL and MAI-UI use 0-999, GUI-Owl (built on
Qwen2.5-VL) the pixels of the resized screenshot, GUI-Owl-1.5 (on Qwen3-VL) 0-1000.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from agent.llm.adapters.base import (
    Adapter,
    AdapterError,
    AdapterReply,
    Intent,
    Replying,
    stop_action,
    swipe_between,
    swipe_toward,
    typing,
)
from agent.types import Action, ActionType, Point
from vision.geometry import Size

_TOOL = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.S)
_THINK = re.compile(r"<(think|thinking)>(.*?)</\1>", re.S | re.I)
_THOUGHT = re.compile(r"Thought:\s*(.*?)(?:\n\s*Action:|<tool_call>|$)", re.S)


def thought_of(text: str) -> str:
    m = _THINK.search(text)
    if m:
        return m.group(2).strip()
    if "</think>" in text:  # reasoning models sometimes drop the opening tag
        return text.split("</think>", 1)[0].strip()
    m = _THOUGHT.search(text)
    return m.group(1).strip() if m else ""


def tool_arguments(text: str) -> tuple[dict, str]:
    """The ``arguments`` object of the (last) tool call, and its raw JSON text."""
    blocks = _TOOL.findall(text)
    candidates = blocks[::-1] if blocks else [text[text.find("{"):]] if "{" in text else []
    for raw in candidates:
        try:
            obj, _ = json.JSONDecoder().raw_decode(raw.strip())
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict):
            args = obj.get("arguments", obj)
            if isinstance(args, str):
                try:
                    args = json.loads(args)
                except json.JSONDecodeError:
                    continue
            if isinstance(args, dict) and "action" in args:
                return args, raw.strip()
    raise AdapterError("no mobile_use tool call with an \"action\" found (expected <tool_call>{...}</tool_call>)")


_BUTTONS = {"back": ActionType.BACK, "home": ActionType.HOME, "enter": ActionType.ENTER}


@dataclass(frozen=True)
class MobileUseAdapter(Adapter):
    """The mobile_use tool-call grammar with this family's coordinate convention."""

    family_note: str = ""

    def system_prompt(self, screen: Size) -> str:
        w, h = self._extent(screen)
        return (
            "You operate an Android phone for the user through one tool, mobile_use. "
            f"Positions are given as [x, y] with x across and y down, on a {w}x{h} grid "
            f"({self.coords.describe(screen)}). Tap the middle of an element.\n"
            "Actions (the \"arguments\" object):\n"
            '{"action": "click", "coordinate": [x, y]}\n'
            '{"action": "long_press", "coordinate": [x, y], "time": 1}\n'
            '{"action": "swipe", "coordinate": [x, y], "coordinate2": [x2, y2]}\n'
            '{"action": "type", "text": "..."}\n'
            '{"action": "open", "text": "app name"}\n'
            '{"action": "system_button", "button": "Back" | "Home" | "Enter"}\n'
            '{"action": "wait", "time": 2}\n'
            '{"action": "ask_user", "text": "question"}\n'
            '{"action": "terminate", "status": "success" | "failure"}\n'
            "First think in <thinking></thinking>, then give exactly one call:\n"
            '<tool_call>\n{"name": "mobile_use", "arguments": {...}}\n</tool_call>'
        )

    def _extent(self, screen: Size) -> tuple[int, int]:
        from agent.llm.adapters.base import CoordSpace, ImageRule

        if self.coords.space is CoordSpace.NORM_999:
            return 999, 999
        if self.coords.space is CoordSpace.NORM_1000:
            return 1000, 1000
        if self.coords.space is CoordSpace.RESIZED_PX:
            r = (self.coords.image or ImageRule()).resized(screen)
            return r.width, r.height
        return screen.width, screen.height

    def parse(self, reply: str, screen: Size) -> AdapterReply:
        args, raw = tool_arguments(reply)
        thought = thought_of(reply)
        kind = str(args.get("action", "")).strip()
        k = kind.lower()

        def at(key: str = "coordinate") -> Point:
            return self.point_in(args, key, screen, f"{kind} needs \"{key}\"")

        reply_with = Replying(thought, raw)

        if k in ("click", "left_click", "tap", "double_click"):
            p = at()
            return reply_with(Action.tap(p.x, p.y))
        if k == "long_press":
            p = at()
            seconds = float(args.get("time", 1) or 1)
            return reply_with(Action.long_press(p.x, p.y, int(seconds * 1000)))
        if k in ("swipe", "drag", "scroll"):
            if "coordinate2" in args or "end_coordinate" in args:
                start = at("coordinate" if "coordinate" in args else "start_coordinate")
                end = at("coordinate2" if "coordinate2" in args else "end_coordinate")
                return reply_with(swipe_between(start, end, kind))
            if "direction" in args:
                origin = at() if "coordinate" in args else None
                return reply_with(swipe_toward(str(args["direction"]), screen, origin, finger=k != "scroll"))
            raise AdapterError(f"{kind} needs coordinate2 or a direction")
        if k == "type":
            return reply_with(typing(args.get("text", ""), "type needs non-empty \"text\""))
        if k in ("open", "open_app", "awake", "launch"):
            app = str(args.get("text") or args.get("app") or args.get("app_name") or "").strip()
            if not app:
                raise AdapterError(f"{kind} needs the app name in \"text\"")
            return reply_with(Action.open_app(app))
        if k in ("system_button", "key"):
            button = str(args.get("button") or args.get("text") or "").strip().lower()
            if button not in _BUTTONS:
                raise AdapterError(f"unsupported button {button!r}; expected Back, Home or Enter")
            return reply_with(Action(_BUTTONS[button]))
        if k == "wait":
            return reply_with(Action(ActionType.WAIT))
        if k in ("ask_user", "info", "call_user"):
            message = str(args.get("text", "")).strip()
            return reply_with(stop_action(Intent.ASK_USER), Intent.ASK_USER, message)
        if k == "answer":
            return reply_with(stop_action(Intent.DONE), Intent.DONE, str(args.get("text", "")))
        if k == "terminate":
            status = str(args.get("status", "success")).strip().lower()
            intent = Intent.DONE if status in ("success", "succeeded", "done", "complete") else Intent.IMPOSSIBLE
            return reply_with(stop_action(intent), intent)
        raise AdapterError(f"unknown mobile_use action {kind!r}")
