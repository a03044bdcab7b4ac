"""Effect checks: did an executed action change the screen?  If not, a note for the planner.

VisionTasker validates each step by looking at the screen that follows it.  Here the
check compares what matters on two parses (every element's kind, words, state and box,
the status bar left out since its clock ticks on its own) and, when nothing changed,
words a note ("tap Display changed nothing on the screen ...") that goes back to the
planner before the repeat rule would end the run.

``unchanged_note`` works on parses (the runner has them); ``unchanged_note_from_text``
on the fenced screen descriptions that planners receive.  ``returning_actions`` finds
the other way a small model goes round in circles: back on a screen it has left before,
it takes the same way back out of the detour again (open a page, "Navigate up", open it
again, "Navigate up" ...).  Pure functions: no LLM, no
device, no state; the caller decides where the note goes.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

from agent.types import Action, ActionType
from vision.types import KEYBOARD_ROLE, Element, ElementKind, ScreenParse

#: Actions from which no visible change is expected (or that end the run).
_NO_EFFECT_EXPECTED = frozenset({ActionType.WAIT, ActionType.COMPLETE, ActionType.IMPOSSIBLE})
_STATUS_LINE = re.compile(r"^\s*(?:\[[^\]]*\]\s*)?status bar\b.*$", re.I | re.M)

Signature = tuple[tuple[object, ...], ...]


def _in_status_bar(e: Element, bars: list[Element]) -> bool:
    return e.kind is ElementKind.STATUS_BAR or any(b.rect.contains_rect(e.rect) for b in bars)


def screen_signature(parse: ScreenParse) -> Signature:
    """What an action could visibly change: each element's kind, words, state and box."""
    bars = [e for e in parse.elements if e.kind is ElementKind.STATUS_BAR]
    rows = []
    for e in parse.elements:
        if _in_status_bar(e, bars):
            continue
        r = e.rect
        rows.append((e.kind.value, e.text, e.label, e.checked, e.selected, e.focused, e.enabled,
                     r.left, r.top, r.right, r.bottom))
    return tuple(sorted(rows, key=repr))


_DIGITS = re.compile(r"\d+")
#: The top strip of the screen where a status bar lives (fraction of the height).
_STATUS_STRIP = 0.045


def screen_identity(parse: ScreenParse, foreground: str | None = None) -> str:
    """A short key that stays the same while only things that do not matter change: a clock
    ticking, a status-bar icon, a battery level, a switch being flipped, a list scrolled by
    a few pixels, the soft keyboard coming up or going away (its keys are another window's).
    Two screens of one app that offer different words get different keys."""
    bars = [e for e in parse.elements if e.kind is ElementKind.STATUS_BAR]
    strip = parse.screen_size.height * _STATUS_STRIP
    keys = {i for b in parse.blocks if b.role == KEYBOARD_ROLE for i in b.element_ids}
    rows = set()
    for e in parse.elements:
        if _in_status_bar(e, bars) or e.rect.bottom <= strip or e.covered or e.id in keys:
            continue
        words = _DIGITS.sub("#", " ".join(f"{e.text} {e.label}".lower().split()))
        if words:
            rows.add((e.kind.value, words))
    key = repr((foreground or "", sorted(rows)))
    return hashlib.blake2b(key.encode(), digest_size=8).hexdigest()


def _note(action: Action) -> str:
    return (f"\"{action.describe()}\" changed nothing on the screen. Do not do it again: choose another "
            "element or another kind of action (scroll, go back, open an app).")


def _expects_change(action: Action | None) -> bool:
    return action is not None and action.type not in _NO_EFFECT_EXPECTED


def unchanged_note(action: Action | None, before: ScreenParse, after: ScreenParse) -> str | None:
    """A note for the planner when ``action`` left the screen as it was, else ``None``."""
    if not _expects_change(action) or screen_signature(before) != screen_signature(after):
        return None
    assert action is not None
    return _note(action)


def _comparable(text: str) -> str:
    return "\n".join(line.rstrip() for line in _STATUS_LINE.sub("", text).splitlines() if line.strip())


def unchanged_note_from_text(action: Action | None, before: str, after: str) -> str | None:
    """The same check on two screen descriptions (status bar lines ignored)."""
    if not _expects_change(action) or not before or _comparable(before) != _comparable(after):
        return None
    assert action is not None
    return _note(action)


def returning_actions(steps: Sequence[tuple[Action, str]], current: str) -> list[Action]:
    """Actions taken before on the screen now shown that led back to a screen seen before them.

    ``steps``: the earlier steps in order, each the action and the description of the screen
    it was taken on; ``current``: the screen now.  Such an action is the way back out of a
    detour; taking it again from here goes round the same loop.  The way into the detour is
    not returned (it may well be the right step), only the way back.
    """
    screens = [_comparable(screen) for _, screen in steps] + [_comparable(current)]
    here = screens[-1]
    out: list[Action] = []
    for i, (action, _) in enumerate(steps):
        if not screens[i] or screens[i] != here or not _expects_change(action):
            continue
        after = screens[i + 1]
        if after and after != screens[i] and after in screens[:i]:
            out.append(action)
    return out
