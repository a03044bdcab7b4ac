"""Toasts and snackbars on the virtual phone: when they show, when they go, what was shown.

A toast is drawn over everything and is not in the app's accessibility tree (as on
Android); a snackbar is a bar at the bottom of the app with an optional action ("Undo")
and is in the tree.  Two clocks:

* **untimed** (the default, deterministic): a message lasts until the input after the one
  that showed it — the phone's tests and the in-process benchmarks rely on that;
* **timed** (the served phone, like a real one): a toast lasts ``TOAST_S`` and a snackbar
  ``SNACKBAR_S`` of wall-clock time, whatever the input; ``tick`` hides expired ones and is
  called whenever the screen is read.  A snackbar also goes when its action is tapped or
  the page it was shown on is left.

``Flashes.shown`` is the phone's own log of every message it showed (kind, text, the words
as drawn in the phone's language, wall-clock shown/hidden times): the truth that the record
of a run is measured against
(``tapwise-bench shown``).  ``oracle_view`` is what task oracles read
(``state["ui"]["shown"]``: kind and text, no times).  No rendering here beyond building the
two nodes.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from phone.virtual import system
from phone.virtual.view import K, Node, Ui, tapper
from vision.geometry import Rect

#: Android's ``Toast.LENGTH_SHORT`` and ``Snackbar.LENGTH_LONG``, in seconds.
TOAST_S = 2.0
SNACKBAR_S = 2.75
#: How many shown messages the log keeps.
LOG_SIZE = 200


@dataclass
class _Message:
    kind: str  # "toast" | "snackbar"
    text: str
    action: str = ""
    on_action: Callable[[], Any] | None = None
    page: object = None  # the page a snackbar belongs to
    inputs_left: int = 2
    until: float = 0.0  # monotonic deadline (timed phone)
    entry: dict[str, Any] = field(default_factory=dict)  # its line in the log


class Flashes:
    """The phone's current toast and snackbar; see the module docstring."""

    def __init__(self, timed: bool = False) -> None:
        self.timed = timed
        self.toast: _Message | None = None
        self.snackbar: _Message | None = None
        self.shown: list[dict[str, Any]] = []

    def clear(self) -> None:
        """A fresh phone: nothing shown, the log emptied."""
        self.toast = self.snackbar = None
        self.shown = []

    # -- showing ------------------------------------------------------------------------------
    def show_toast(self, text: str, on_screen: str = "") -> None:
        """``on_screen``: the words as drawn (the phone's language), for the log."""
        self._hide("toast")
        self.toast = self._new("toast", text, TOAST_S, on_screen)

    def show_snackbar(self, text: str, action: str = "", on_action: Callable[[], Any] | None = None,
                      page: object = None, on_screen: str = "") -> None:
        self._hide("snackbar")
        self.snackbar = self._new("snackbar", text, SNACKBAR_S, on_screen, action=action, on_action=on_action,
                                  page=page)

    def _new(self, kind: str, text: str, seconds: float, on_screen: str, **kw: Any) -> _Message:
        entry = {"kind": kind, "text": text, "on_screen": on_screen or text, "shown_at": time.time(),
                 "hidden_at": None}
        self.shown.append(entry)
        del self.shown[:-LOG_SIZE]
        return _Message(kind, text, until=time.monotonic() + seconds, entry=entry, **kw)

    def _hide(self, kind: str) -> None:
        msg = self.toast if kind == "toast" else self.snackbar
        if msg is None:
            return
        msg.entry["hidden_at"] = time.time()
        if kind == "toast":
            self.toast = None
        else:
            self.snackbar = None

    # -- going away -----------------------------------------------------------------------------
    def after_input(self, page: object) -> None:
        """An input reached the phone; ``page`` is the app page in front after it."""
        if self.snackbar is not None and self.snackbar.page is not None and self.snackbar.page is not page:
            self._hide("snackbar")
        if self.timed:
            return
        for kind in ("toast", "snackbar"):
            msg = self.toast if kind == "toast" else self.snackbar
            if msg is not None:
                msg.inputs_left -= 1
                if msg.inputs_left <= 0:
                    self._hide(kind)

    def tick(self, now: float | None = None) -> bool:
        """Timed phone: hide messages whose time is up; True when something went."""
        if not self.timed:
            return False
        now = time.monotonic() if now is None else now
        gone = False
        for kind in ("toast", "snackbar"):
            msg = self.toast if kind == "toast" else self.snackbar
            if msg is not None and now >= msg.until:
                self._hide(kind)
                gone = True
        return gone

    # -- what is drawn and read ---------------------------------------------------------------------
    def nodes(self, ui: Ui, *, dialog_open: bool) -> list[Node]:
        """The snackbar (under a dialog's scrim) and the toast (on top of all but a dialog)."""
        out: list[Node] = []
        if self.snackbar is not None:
            out.append(snackbar_node(ui, self.snackbar.text, self.snackbar.action, self._act))
        if self.toast is not None and not dialog_open:
            out.append(system.toast_node(ui, self.toast.text))
        return out

    def _act(self) -> None:
        msg = self.snackbar
        self._hide("snackbar")
        if msg is not None and msg.on_action is not None:
            msg.on_action()

    def oracle_view(self) -> list[dict[str, str]]:
        return [{"kind": e["kind"], "text": e["text"]} for e in self.shown]


def snackbar_node(ui: Ui, text: str, action: str, on_action: Callable[[], Any]) -> Node:
    """A Material snackbar: a dark bar above the navigation bar, the message on the left
    and the action (if any) on the right; it is part of the app, so it is in the tree."""
    h = ui.dp(48)
    bottom = ui.H - ui.nav_h - ui.keyboard_h - ui.dp(12)
    r = Rect(ui.dp(12), bottom - h, ui.W - ui.dp(12), bottom)
    bg = (50, 50, 54) if not ui.dark else (225, 225, 230)
    fg = (240, 240, 240) if not ui.dark else (30, 30, 32)
    accent = (168, 199, 250) if not ui.dark else (11, 87, 208)
    s = ui.tr(text)
    n = Node(rect=r, cls="android.widget.FrameLayout", rid="com.google.android.material:id/snackbar_layout",
             xml=True, block=("snackbar", s))
    n.ops.append(("rect", *r.as_tuple(), bg, ui.dp(4), None, 0))
    px = ui.sp(14)
    act = ui.tr(action) if action else ""
    act_w = ui.measure(act, px, "medium") + ui.dp(24) if act else 0
    msg = Node(rect=Rect(r.left + ui.dp(16), r.top, r.right - act_w - ui.dp(8), r.bottom), cls="android.widget.TextView",
               kind=K.TEXT, text=s, rid="com.google.android.material:id/snackbar_text")
    msg.ops.append(("text", msg.rect.left, r.center.y, ui.ellipsize(s, px, "regular", msg.rect.width), px, "regular",
                    fg, "lm"))
    n.add(msg)
    if act:
        br = Rect(r.right - act_w - ui.dp(4), r.top + ui.dp(4), r.right - ui.dp(4), r.bottom - ui.dp(4))
        btn = Node(rect=br, cls="android.widget.Button", kind=K.BUTTON, text=act, clickable=True, focusable=True,
                   rid="com.google.android.material:id/snackbar_action", on_tap=tapper(on_action))
        btn.ops.append(("text", br.center.x, br.center.y, act, px, "medium", accent, "mm"))
        n.add(btn)
    return n
