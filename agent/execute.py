"""Carry out an ``Action`` on a ``Device``: taps, swipes, typing (tapping the field first),
keys, opening apps.  Ungrounded actions, and points that cannot lie on any screen
(negative, or beyond ``MAX_COORDINATE``), are refused with a clear error.  Device errors
(``DeviceError``, ``DeviceGone``) propagate to the caller unchanged.
"""

from __future__ import annotations

import time

from agent.device import Device, Key
from agent.types import CANONICAL_SWIPES, Action, ActionType
from vision.geometry import NormPoint


class NotExecutable(ValueError):
    """The action cannot be carried out as it stands (e.g. a tap with no point)."""


#: No phone screen is wider or taller than this many pixels (a last guard before the phone).
MAX_COORDINATE = 20_000


def _check_points(action: Action) -> None:
    points = [action.touch, action.lift, action.target.point if action.target is not None else None]
    for p in points:
        if p is not None and not (0 <= p.x <= MAX_COORDINATE and 0 <= p.y <= MAX_COORDINATE):
            raise NotExecutable(f"{action.describe()!r}: the point ({p.x}, {p.y}) is off the screen; not executed")


def execute(action: Action, device: Device, *, wait_ms: int = 0, max_wait_s: float = 5.0) -> None:
    t = action.type
    _check_points(action)
    if t in (ActionType.TAP, ActionType.LONG_PRESS):
        if action.touch is None:
            raise NotExecutable(f"{action.describe()!r} has no screen point: ground it first")
        if t is ActionType.TAP:
            device.tap(action.touch.x, action.touch.y)
        else:
            device.long_press(action.touch.x, action.touch.y, action.duration_ms or 800)
    elif t is ActionType.SWIPE:
        touch, lift = action.touch, action.lift
        if touch is None or lift is None:
            d = action.finger_direction()
            if d is None:
                raise NotExecutable("swipe has neither points nor a direction")
            size = device.screen_size()
            (ty, tx), (ly, lx) = CANONICAL_SWIPES[d]
            touch, lift = NormPoint(ty, tx).to_px(size), NormPoint(ly, lx).to_px(size)
        device.swipe(touch.x, touch.y, lift.x, lift.y, action.duration_ms or 300)
    elif t is ActionType.TYPE:
        target = action.target
        if target is not None and target.point is not None:
            device.tap(target.point.x, target.point.y)
        device.input_text(action.text or "")
    elif t is ActionType.BACK:
        device.key(Key.BACK)
    elif t is ActionType.HOME:
        device.key(Key.HOME)
    elif t is ActionType.ENTER:
        device.key(Key.ENTER)
    elif t is ActionType.OPEN_APP:
        device.open_app(action.app or "")
    elif t is ActionType.WAIT:
        time.sleep(min(max_wait_s, (action.duration_ms or 1000) / 1000))
    # complete / impossible: nothing to do on the phone
    if wait_ms:
        time.sleep(wait_ms / 1000)
