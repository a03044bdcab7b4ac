"""A scripted model that answers every planning request with the recorded step: the
sanity ceiling of ``tapwise bench offline`` (``--oracle``).

It is ``evaluation.scripted_model.ScriptedLLMServer`` on loopback, so the planners, the
LLM client, the reply readers and the grounder all run for real; only the model's choice
is taken from the recording.  Before each step the bench calls ``expect`` with the gold
step and the screen; every request until the next ``expect`` gets that step's reply, in
the form the planner was told to use: a JSON ``action`` object naming the element the
way the per-screen schema does (structured replies), or a command in words (free
replies).  A step the schema cannot name (a tap on no listed element, a swipe) is answered
in words, which the readers accept outside the form.  Meant for planners without latent
state (an estimator's questions would get the same answer).
"""

from __future__ import annotations

import json
import threading

from agent.structured import element_key
from agent.types import Action, ActionType
from evaluation.offline.scoring import element_of
from evaluation.offline.types import Gold, GoldKind
from evaluation.scripted_model import Reply, ScriptedLLMServer
from vision.types import ScreenParse

MODEL = "gold-oracle"


def free_reply(gold: Gold) -> str:
    """The gold step as a command in words (``agent.commands`` reads it)."""
    a = gold.action
    if gold.kind is GoldKind.ELEMENT:
        return f'type "{gold.text}" into [{gold.element_id}]' if gold.text else f"tap [{gold.element_id}]"
    return command_of(a)


def command_of(a: Action) -> str:
    t = a.type
    if t in (ActionType.TAP, ActionType.LONG_PRESS) and a.touch is not None:
        verb = "tap" if t is ActionType.TAP else "long-press"
        return f"{verb} at ({a.touch.x}, {a.touch.y})"
    if t is ActionType.SWIPE:
        finger = a.finger_direction()
        return f"scroll {finger.opposite.value}" if finger is not None else "wait"
    if t is ActionType.TYPE:
        return f'type "{a.text}"'
    if t is ActionType.OPEN_APP:
        return f"open {a.app}"
    return {ActionType.BACK: "go back", ActionType.HOME: "go home", ActionType.ENTER: "press enter",
            ActionType.COMPLETE: "done", ActionType.IMPOSSIBLE: "impossible"}.get(t, "wait")


def structured_reply(gold: Gold, parse: ScreenParse) -> str:
    """The gold step as a structured reply, or in words when the schema cannot name it."""
    a = gold.action
    simple = {ActionType.BACK: "back", ActionType.HOME: "home", ActionType.ENTER: "enter",
              ActionType.COMPLETE: "complete", ActionType.IMPOSSIBLE: "impossible"}
    action: dict[str, str] | None = None
    if a.type in simple:
        action = {"type": simple[a.type]}
    elif a.type in (ActionType.TAP, ActionType.TYPE):
        eid = gold.element_id or element_of(a, parse)
        el = parse.element(eid) if eid else None
        if el is not None:
            action = {"element": element_key(el), "type": "tap"} if a.type is ActionType.TAP else \
                {"element": element_key(el), "text": a.text or "", "type": "type"}
    if action is None:
        return free_reply(gold)
    words = "the recorded step"
    return json.dumps({"needed": words, "thought": words, "reasoning": words, "action": action})


class GoldOracle:
    """See the module docstring; use as a context manager."""

    def __init__(self, *, structured: bool) -> None:
        self.structured = structured
        self._lock = threading.Lock()
        self._reply = "wait"
        self.server = ScriptedLLMServer(models=(MODEL,), responder=self._answer)

    def expect(self, gold: Gold, parse: ScreenParse) -> None:
        reply = structured_reply(gold, parse) if self.structured else free_reply(gold)
        with self._lock:
            self._reply = reply

    def _answer(self, prompt: str) -> Reply:
        with self._lock:
            return Reply(self._reply)

    @property
    def url(self) -> str:
        return self.server.url

    def __enter__(self) -> GoldOracle:
        self.server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.stop()
