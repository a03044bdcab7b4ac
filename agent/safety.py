"""Which actions are sensitive (sending, paying, deleting, installing, security settings).

A sensitive action always waits for the user's approval unless the user turned that off
for the task.  The check looks at the action, its target's words, the grounded element's
words and the foreground app; it never reads instructions from the screen.
"""

from __future__ import annotations

import re

from agent.types import Action, ActionType
from vision.types import ScreenParse

_SENSITIVE = {
    "sending": r"\b(send|sent|post|publish|share|reply|forward|call|dial|email|submit order)\b",
    "paying": r"\b(pay|payment|purchase|buy|checkout|check out|place order|order now|subscribe|donate|"
              r"transfer|add to cart|confirm order)\b",
    "deleting": r"\b(delete|remove|erase|clear all|clear data|wipe|discard|uninstall|factory reset|reset)\b",
    "installing": r"\b(install|update app|download app|get app|allow unknown|sideload)\b",
    "security settings": r"\b(password|passcode|pin code|sim pin|set pin|change pin|lock screen|screen lock|security|fingerprint|face unlock|"
                         r"permission|admin|encryption|developer options|usb debugging|two-factor|2fa)\b",
}


def sensitivity(action: Action, parse: ScreenParse | None = None, foreground: str | None = None) -> str | None:
    """The reason an action is sensitive ("deleting"), or None."""
    if action.type in (ActionType.BACK, ActionType.HOME, ActionType.WAIT, ActionType.COMPLETE,
                       ActionType.IMPOSSIBLE, ActionType.SWIPE):
        return None
    words: list[str] = []
    t = action.target
    if t is not None:
        words.append(t.description)
        if parse is not None and t.element_id:
            e = parse.element(t.element_id)
            if e is not None:
                words += [e.text, e.label, e.resource_id.rsplit("/", 1)[-1].replace("_", " ")]
    if parse is not None and action.touch is not None and action.type is not ActionType.TYPE and (
            t is None or not t.element_id):
        hits = parse.elements_at(action.touch.x, action.touch.y)
        if hits:
            e = hits[0]
            words += [e.text, e.label, e.resource_id.rsplit("/", 1)[-1].replace("_", " ")]
    if action.type is ActionType.OPEN_APP:
        words.append(action.app or "")
    if action.type is ActionType.ENTER and foreground and re.search(r"messag|mail|chat|pay|shop|bank", foreground, re.I):
        return "sending"
    text = " ".join(w for w in words if w).lower()
    if not text:
        return None
    for reason, pattern in _SENSITIVE.items():
        if re.search(pattern, text):
            return reason
    return None
