"""Families that answer with a function-call expression: UI-TARS-1.5, UI-Venus and AutoGLM.

- UI-TARS-1.5: ``Thought: ...`` then ``Action: click(point='<point>x y</point>')``
  (older releases: ``start_box='<|box_start|>(x,y)<|box_end|>'``); ``long_press``,
  ``type(content=...)``, ``scroll(point=..., direction=...)`` (direction = where the
  content comes from), ``open_app(app_name=...)``, ``drag(start_point, end_point)``,
  ``press_home()``, ``press_back()``, ``wait()``, ``call_user()``, ``finished(content=...)``.
  Coordinates are pixels of the screenshot after the Qwen2.5-VL resize.
- UI-Venus: ``<think>...</think><action>Click(box=(x,y))</action>`` with ``LongPress``,
  ``Scroll(start=..., end=...)``, ``Drag``, ``Type(content=...)``, ``Launch(app=...)``,
  ``Wait()``, ``PressBack/PressHome/PressEnter()``, ``CallUser(content=...)``,
  ``Finished(content=...)``; coordinates 0-999.
- AutoGLM: ``<think>...</think><answer>do(action="Tap", element=[x,y])</answer>`` or
  ``finish(message=...)``; ``Launch``, ``Type``, ``Swipe(start, end)``, ``Long Press``,
  ``Double Tap``, ``Back``, ``Home``, ``Wait``, ``Take_over(message=...)``, ``Interact``;
  a ``message`` on a tap marks a step the model wants confirmed; coordinates 0-1000.

Expressions are read with ``ast`` (never evaluated).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Any

from agent.llm.adapters.base import (
    Adapter,
    AdapterError,
    AdapterReply,
    Intent,
    Replying,
    launch,
    point_of,
    stop_action,
    swipe_between,
    swipe_toward,
    typing,
)
from agent.llm.adapters.mobile_use import thought_of
from agent.types import Action, ActionType, Point
from vision.geometry import Size

#: The actions each family names that are one key or a pause, by the family's own name.
_TARS_KEYS = {"press_home": ActionType.HOME, "press_back": ActionType.BACK, "press_enter": ActionType.ENTER,
              "enter": ActionType.ENTER, "wait": ActionType.WAIT}
_VENUS_KEYS = {"pressback": ActionType.BACK, "presshome": ActionType.HOME, "pressenter": ActionType.ENTER,
               "wait": ActionType.WAIT}
_GLM_KEYS = {"back": ActionType.BACK, "home": ActionType.HOME, "wait": ActionType.WAIT}


def read_call(expr: str) -> tuple[str, dict[str, Any]]:
    """Function name and keyword arguments of one call expression such as ``f(a=1, b='x')``."""
    text = expr.strip().rstrip(";")
    try:
        node = ast.parse(text.replace("\n", "\\n"), mode="eval").body
    except SyntaxError:
        m = re.match(r"(\w+)\((\w+)=(['\"])(.*)\3\)\s*$", text, re.S)  # a quote inside typed text
        if m:
            return m.group(1), {m.group(2): m.group(4)}
        raise AdapterError(f"not a function call: {text[:80]!r}") from None
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise AdapterError(f"not a function call: {text[:80]!r}")
    kwargs: dict[str, Any] = {}
    for kw in node.keywords:
        if kw.arg is None:
            continue
        try:
            kwargs[kw.arg] = ast.literal_eval(kw.value)
        except ValueError:
            raise AdapterError(f"argument {kw.arg} of {node.func.id} is not a literal") from None
    for i, arg in enumerate(node.args):
        try:
            kwargs[f"_{i}"] = ast.literal_eval(arg)
        except ValueError:
            raise AdapterError(f"argument {i + 1} of {node.func.id} is not a literal") from None
    return node.func.id, kwargs


def _tag(text: str, name: str) -> str | None:
    m = re.search(rf"<{name}>(.*?)(?:</{name}>|$)", text, re.S | re.I)
    return m.group(1).strip() if m else None


_BOX = re.compile(r"<\|box_start\|>|<\|box_end\|>|<point>|</point>|<bbox>|</bbox>")


@dataclass(frozen=True)
class UITarsAdapter(Adapter):
    def system_prompt(self, screen: Size) -> str:
        r = self.image_size(screen)
        return (
            "You are a GUI agent operating an Android phone. You see a screenshot and the task, and you "
            "answer with your reasoning and one action:\n"
            "Thought: ...\nAction: ...\n\n"
            f"Positions are pixels of the {r.width}x{r.height} screenshot, written <point>x y</point>.\n"
            "Actions:\n"
            "click(point='<point>x y</point>')\n"
            "long_press(point='<point>x y</point>')\n"
            "type(content='text')\n"
            "scroll(point='<point>x y</point>', direction='down or up or right or left')\n"
            "open_app(app_name='name')\n"
            "drag(start_point='<point>x1 y1</point>', end_point='<point>x2 y2</point>')\n"
            "press_home()\npress_back()\nwait()\n"
            "call_user()  # when the user must answer or act\n"
            "finished(content='summary')"
        )

    def parse(self, reply: str, screen: Size) -> AdapterReply:
        if "Action:" not in reply:
            raise AdapterError("no 'Action:' line")
        tail = reply.split("Action:")[-1].strip()
        raw = tail.splitlines()[0].strip() if tail else ""
        if not raw:
            raise AdapterError("empty action")
        name, kw = read_call(raw)
        thought = thought_of(reply)

        def at(*keys: str) -> Point:
            for k in keys:
                if k in kw:
                    x, y = point_of(_BOX.sub(" ", str(kw[k])), k)
                    return self.point(x, y, screen)
            raise AdapterError(f"{name} needs {' or '.join(keys)}")

        out = Replying(thought, raw)
        n = name.lower()
        if n in ("click", "left_single", "left_double", "double_click"):
            p = at("point", "start_box")
            return out(Action.tap(p.x, p.y))
        if n == "long_press":
            p = at("point", "start_box")
            return out(Action.long_press(p.x, p.y))
        if n == "type":
            content = str(kw.get("content", ""))
            enter = content.endswith("\n") or content.endswith("\\n")
            content = content.rstrip("\n").removesuffix("\\n")
            if not content:
                return out(Action(ActionType.ENTER)) if enter else out(Action(ActionType.WAIT))
            return out(Action.type_text(content))
        if n == "scroll":
            origin = at("point", "start_box") if ("point" in kw or "start_box" in kw) else None
            return out(swipe_toward(str(kw.get("direction", "down")), screen, origin, finger=False))
        if n in ("drag", "swipe"):
            return out(swipe_between(at("start_point", "start_box"), at("end_point", "end_box"), name))
        if n == "open_app":
            return out(launch(kw.get("app_name")))
        if n in _TARS_KEYS:
            return out(Action(_TARS_KEYS[n]))
        if n == "call_user":
            return out(stop_action(Intent.ASK_USER), Intent.ASK_USER, thought)
        if n == "finished":
            return out(stop_action(Intent.DONE), Intent.DONE, str(kw.get("content", "")))
        raise AdapterError(f"unknown UI-TARS action {name!r}")


@dataclass(frozen=True)
class UIVenusAdapter(Adapter):
    def system_prompt(self, screen: Size) -> str:
        return (
            "You are an agent that operates an Android phone to finish the user's task, one action at a time.\n"
            "Positions run from (0,0) at the top left to (999,999) at the bottom right.\n"
            "Actions:\n"
            "Click(box=(x,y))\nLongPress(box=(x,y))\nScroll(start=(x1,y1), end=(x2,y2))\n"
            "Drag(start=(x1,y1), end=(x2,y2))\nType(content='text')\nLaunch(app='name')\nWait()\n"
            "PressBack()\nPressHome()\nPressEnter()\n"
            "CallUser(content='question or what the user must do')\nFinished(content='summary')\n"
            "Answer as:\n<think>your reasoning</think>\n<action>one action</action>\n"
            "<conclusion>what this step does</conclusion>"
        )

    def parse(self, reply: str, screen: Size) -> AdapterReply:
        raw = _tag(reply, "action")
        if raw is None:
            raise AdapterError("no <action>...</action>")
        name, kw = read_call(raw)
        thought = thought_of(reply)

        def at(key: str) -> Point:
            return self.point_in(kw, key, screen, f"{name} needs {key}")

        out = Replying(thought, raw)

        n = name.lower()
        if n == "click":
            p = at("box")
            return out(Action.tap(p.x, p.y))
        if n == "longpress":
            p = at("box")
            return out(Action.long_press(p.x, p.y))
        if n in ("scroll", "drag"):
            if "direction" in kw:
                origin = at("start") if "start" in kw else None
                return out(swipe_toward(str(kw["direction"]), screen, origin, finger=False))
            return out(swipe_between(at("start"), at("end"), name))
        if n == "type":
            return out(typing(kw.get("content", ""), "Type needs content"))
        if n == "launch":
            return out(launch(kw.get("app")))
        if n in _VENUS_KEYS:
            return out(Action(_VENUS_KEYS[n]))
        if n == "calluser":
            return out(stop_action(Intent.ASK_USER), Intent.ASK_USER, str(kw.get("content", "")))
        if n == "finished":
            return out(stop_action(Intent.DONE), Intent.DONE, str(kw.get("content", "")))
        raise AdapterError(f"unknown UI-Venus action {name!r}")


@dataclass(frozen=True)
class AutoGLMAdapter(Adapter):
    def system_prompt(self, screen: Size) -> str:
        return (
            "You are a phone assistant that completes the user's task on an Android phone, one step at a time.\n"
            "Positions are [x, y] from [0, 0] at the top left to [1000, 1000] at the bottom right.\n"
            "Answer as <think>short reasoning</think><answer>one instruction</answer> where the instruction is one of:\n"
            'do(action="Launch", app="name")\n'
            'do(action="Tap", element=[x, y])  # add message="why" when the step pays, sends or deletes\n'
            'do(action="Type", text="text")\n'
            'do(action="Swipe", start=[x1, y1], end=[x2, y2])\n'
            'do(action="Long Press", element=[x, y])\n'
            'do(action="Double Tap", element=[x, y])\n'
            'do(action="Back")\ndo(action="Home")\ndo(action="Wait", duration="2 seconds")\n'
            'do(action="Take_over", message="what the user must do by hand")\n'
            'finish(message="result for the user")'
        )

    def parse(self, reply: str, screen: Size) -> AdapterReply:
        raw = _tag(reply, "answer")
        if raw is None:  # replies without the tags: the last do(...)/finish(...) in the text
            m = re.findall(r"((?:do|finish)\(.*\))", reply)
            if not m:
                raise AdapterError("no <answer>do(...)</answer> or finish(...)")
            raw = m[-1]
        raw = raw.strip()
        name, kw = read_call(raw)
        thought = thought_of(reply)

        def at(key: str) -> Point:
            return self.point_in(kw, key, screen, f"{kw.get('action', name)} needs {key}")

        out = Replying(thought, raw)

        if name == "finish":
            return out(stop_action(Intent.DONE), Intent.DONE, str(kw.get("message", kw.get("_0", ""))))
        if name != "do":
            raise AdapterError(f"expected do(...) or finish(...), got {name}(...)")
        act = str(kw.get("action", "")).strip().lower().replace("_", " ")
        if act in ("tap", "double tap"):
            p = at("element")
            return out(Action.tap(p.x, p.y), sensitive=str(kw.get("message", "")))
        if act == "long press":
            p = at("element")
            return out(Action.long_press(p.x, p.y))
        if act in ("type", "type name"):
            return out(typing(kw.get("text", ""), "Type needs text"))
        if act == "swipe":
            return out(swipe_between(at("start"), at("end"), "Swipe"))
        if act == "launch":
            return out(launch(kw.get("app")))
        if act in _GLM_KEYS:
            return out(Action(_GLM_KEYS[act]))
        if act == "take over":
            return out(stop_action(Intent.TAKE_OVER), Intent.TAKE_OVER, str(kw.get("message", "")))
        if act == "interact":
            return out(stop_action(Intent.ASK_USER), Intent.ASK_USER, str(kw.get("message", "")) or thought)
        raise AdapterError(f"unknown AutoGLM action {kw.get('action')!r}")
