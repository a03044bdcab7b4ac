"""Families with compact key-value replies: AgentCPM-GUI (one JSON object) and
Step-GUI / GELab-Zero (tab-separated ``key:value`` fields).

- AgentCPM-GUI: ``{"thought": "...", "POINT": [x, y]}`` taps; with ``"to"`` (a
  direction the finger moves, or an end point) it swipes; ``"duration"`` in ms on a
  point makes a long press; ``{"TYPE": "text"}``, ``{"PRESS": "HOME"|"BACK"|"ENTER"}``,
  ``{"STATUS": "finish"|"satisfied"|"impossible"|"interrupt"|"need_feedback"}``;
  positions 0-1000.
- GELab-Zero / Step-GUI: ``<THINK>...</THINK>`` then
  ``explain:...\\taction:CLICK\\tpoint:x,y\\tsummary:...``; actions CLICK, LONGPRESS,
  TYPE (``value``), SLIDE (``point1``, ``point2``), AWAKE (app in ``value``), WAIT,
  INFO (a question), COMPLETE (``return``), ABORT; positions 0-1000.
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
    launch,
    stop_action,
    swipe_between,
    swipe_toward,
    typing,
)
from agent.types import Action, ActionType, Point
from vision.geometry import Size

_PRESS = {"home": ActionType.HOME, "back": ActionType.BACK, "enter": ActionType.ENTER}


@dataclass(frozen=True)
class AgentCPMAdapter(Adapter):
    def system_prompt(self, screen: Size) -> str:
        return (
            "You operate an Android phone to complete the user's task. Reply with one compact JSON object.\n"
            "Positions are [x, y] from [0, 0] at the top left to [1000, 1000] at the bottom right.\n"
            'Tap: {"thought": "...", "POINT": [x, y]}\n'
            'Long press: {"thought": "...", "POINT": [x, y], "duration": 1000}\n'
            'Swipe: {"thought": "...", "POINT": [x, y], "to": "up" | "down" | "left" | "right"}\n'
            'Type: {"thought": "...", "TYPE": "text"}\n'
            'Key: {"thought": "...", "PRESS": "HOME" | "BACK" | "ENTER"}\n'
            'Wait: {"thought": "...", "duration": 2000}\n'
            'Stop: {"thought": "...", "STATUS": "finish" | "impossible" | "need_feedback"}'
        )

    def parse(self, reply: str, screen: Size) -> AdapterReply:
        start = reply.find("{")
        if start < 0:
            raise AdapterError("no JSON object in the reply")
        try:
            obj, end = json.JSONDecoder().raw_decode(reply[start:])
        except json.JSONDecodeError as exc:
            raise AdapterError(f"malformed JSON: {exc}") from None
        if not isinstance(obj, dict):
            raise AdapterError("the reply is not a JSON object")
        raw = reply[start:start + end]
        thought = str(obj.get("thought", ""))

        out = Replying(thought, raw)
        status = str(obj.get("STATUS", "")).strip().lower()
        if status in ("finish", "satisfied"):
            return out(stop_action(Intent.DONE), Intent.DONE)
        if status == "impossible":
            return out(stop_action(Intent.IMPOSSIBLE), Intent.IMPOSSIBLE)
        if status in ("need_feedback", "interrupt"):
            return out(stop_action(Intent.ASK_USER), Intent.ASK_USER, thought)
        if "POINT" in obj:
            p = self.point_in(obj, "POINT", screen, "POINT needs a point")
            to = obj.get("to")
            if isinstance(to, str):
                return out(swipe_toward(to, screen, p, finger=True))
            if isinstance(to, (list, tuple)):
                return out(swipe_between(p, self.point_in(obj, "to", screen, "to needs a point"), "swipe"))
            duration = obj.get("duration")
            if isinstance(duration, (int, float)) and duration >= 500:
                return out(Action.long_press(p.x, p.y, int(duration)))
            return out(Action.tap(p.x, p.y))
        if "TYPE" in obj:
            return out(typing(obj["TYPE"], "TYPE needs text"))
        if "PRESS" in obj:
            key = str(obj["PRESS"]).strip().lower()
            if key not in _PRESS:
                raise AdapterError(f"unsupported PRESS {obj['PRESS']!r}")
            return out(Action(_PRESS[key]))
        if "duration" in obj:
            return out(Action(ActionType.WAIT))
        raise AdapterError("the JSON has none of POINT, TYPE, PRESS, STATUS, duration")


@dataclass(frozen=True)
class GELabAdapter(Adapter):
    def system_prompt(self, screen: Size) -> str:
        return (
            "You are an expert at operating an Android phone for the user. Positions have the origin at the "
            "top left, x to the right and y down, both from 0 to 1000.\n"
            "Actions (fields separated by a tab):\n"
            "action:CLICK\\tpoint:x,y\n"
            "action:LONGPRESS\\tpoint:x,y\n"
            "action:TYPE\\tvalue:text\\tpoint:x,y\n"
            "action:SLIDE\\tpoint1:x1,y1\\tpoint2:x2,y2\n"
            "action:AWAKE\\tvalue:app name\n"
            "action:WAIT\\tvalue:seconds\n"
            "action:INFO\\tvalue:question for the user\n"
            "action:COMPLETE\\treturn:report for the user\n"
            "action:ABORT\\tvalue:why the task cannot be done\n"
            "Answer as:\n<THINK> reasoning </THINK>\n"
            "explain:what this step does\\taction:...\\t(fields)\\tsummary:history so far including this step"
        )

    def parse(self, reply: str, screen: Size) -> AdapterReply:
        text = re.sub(r"<\s*/\s*think\s*>", "</THINK>", reply, flags=re.I)
        thought = ""
        if "</THINK>" in text:
            head, text = text.rsplit("</THINK>", 1)
            thought = re.sub(r"<\s*think\s*>", "", head, flags=re.I).strip()
        fields: dict[str, str] = {}
        for part in re.split(r"\t|\\t|\n", text):
            if ":" in part:
                k, v = part.split(":", 1)
                fields[k.strip().lower()] = v.strip()
        kind = fields.get("action", "").upper()
        if not kind:
            raise AdapterError("no action: field")
        raw = "\t".join(f"{k}:{v}" for k, v in fields.items() if k not in ("summary",))

        def at(key: str) -> Point:
            return self.point_in(fields, key, screen, f"{kind} needs {key}")

        out = Replying(thought or fields.get("explain", ""), raw)

        if kind == "CLICK":
            p = at("point")
            return out(Action.tap(p.x, p.y))
        if kind == "LONGPRESS":
            p = at("point")
            return out(Action.long_press(p.x, p.y))
        if kind == "TYPE":
            return out(typing(fields.get("value", ""), "TYPE needs value"))
        if kind == "SLIDE":
            return out(swipe_between(at("point1"), at("point2"), "SLIDE"))
        if kind == "AWAKE":
            return out(launch(fields.get("value")))
        if kind == "WAIT":
            return out(Action(ActionType.WAIT))
        if kind == "INFO":
            return out(stop_action(Intent.ASK_USER), Intent.ASK_USER, fields.get("value", ""))
        if kind == "COMPLETE":
            return out(stop_action(Intent.DONE), Intent.DONE, fields.get("return", ""))
        if kind == "ABORT":
            return out(stop_action(Intent.IMPOSSIBLE), Intent.IMPOSSIBLE, fields.get("value", ""))
        raise AdapterError(f"unknown GELab action {kind!r}")
