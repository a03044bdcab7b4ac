"""Demonstrating a step on the mirror, for any loop that waits for a decision (a task
run or a macro replay): ``start`` switches the mirror to demonstration mode and shows
the live phone; the user's next gesture (tap, hold, drag, or typed text) is handed to
``on_action`` once and the mirror goes back to inspecting.

One helper so the run and macro controllers demonstrate the same way.  Never imports
the window; no I/O.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agent.types import Action
from widgets.screen_view import ViewMode


class Demonstration:
    """Demonstration mode on the mirror for one decision at a time."""

    def __init__(self, ui: Any, on_action: Callable[[Action], None]) -> None:
        self.ui = ui
        self.active = False
        self._on_action = on_action
        ui.view.actionDemonstrated.connect(self._gesture)

    def start(self) -> None:
        """The next gesture on the mirror answers the waiting decision."""
        self.active = True
        self.ui.show_live()
        self.ui.view.set_mode(ViewMode.DEMONSTRATE)

    def stop(self) -> None:
        """Leave demonstration mode (the decision was answered another way, or the loop ended)."""
        self.active = False
        if self.ui.view.mode is ViewMode.DEMONSTRATE:
            self.ui.view.set_mode(ViewMode.INSPECT)

    def _gesture(self, action: Action) -> None:
        if not self.active:
            return
        self.stop()
        self._on_action(action)
