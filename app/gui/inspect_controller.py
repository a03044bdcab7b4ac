"""Parse inspection in the window: the tree-versus-pixels comparison and the mirror's mode.

- The session's parser is wrapped in ``vision.compare.ComparingParser``: while the Parse
  tab is open and no run is going, a live parse of a screen with its tree also reads the
  pixels alone and lists where the two disagree (the run's own parses stay as fast as
  before).
- A disagreement picked in the inspector's list is outlined on the mirror.
- The mirror's mode bar: Inspect (a click selects) or Control (a click, drag or long
  press goes to the phone, on the phone's executor; refused while a run drives the phone
  or the mirror shows something other than the live phone).

Owns no widgets (the window lays them out) and never imports the window.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject

from agent.types import Action
from widgets.notifications import Level
from widgets.screen_view import ViewMode

if TYPE_CHECKING:
    from vision.types import Disagreement

log = logging.getLogger(__name__)


def comparing_factory(base: Callable[[], Any] | None, settings: Callable[[], Any],
                      wanted: Callable[[], bool]) -> Callable[[], Any]:
    """A parser factory whose parsers add the tree-versus-pixels comparison while
    ``wanted()``; ``base`` (or, without one, a ``ScreenParser`` for ``settings()``)
    does the parsing."""

    def make() -> Any:
        from vision.compare import ComparingParser

        if base is not None:
            parser = base()
        else:
            from app.gui.session import pipeline_config_from
            from vision.pipeline import ScreenParser

            parser = ScreenParser(pipeline_config_from(settings()))
        return ComparingParser(parser, wanted)

    return make


class InspectController(QObject):
    """The comparison switch, disagreements on the mirror, and inspect / control mode."""

    def __init__(self, window: Any, compare_wanted: threading.Event) -> None:
        """``window``: the main window (its views, docks, session and ``notify``)."""
        super().__init__(window)
        self.window = window
        self._compare_wanted = compare_wanted
        self.gestures_sent = 0
        w = window
        w.inspector_dock.visibilityChanged.connect(self._inspector_shown)
        w.inspector.disagreementSelected.connect(self.show_disagreement)
        w.mode_bar.modeChosen.connect(self.set_mode)
        w.view.modeChanged.connect(w.mode_bar.set_mode)
        w.view.controlGesture.connect(self.send_gesture)
        self._inspector_shown(w.inspector_dock.isVisible())

    # ---- the comparison ------------------------------------------------------------------
    def _inspector_shown(self, shown: bool) -> None:
        if shown:
            self._compare_wanted.set()
        else:
            self._compare_wanted.clear()

    def show_disagreement(self, d: Disagreement) -> None:
        """Outline ``d`` on the mirror (its element is selected when it names one)."""
        view = self.window.view
        if d.element_id and view.parse is not None and view.parse.element(d.element_id) is not None:
            view.select_element(d.element_id)
        else:
            view.select_rect(d.rect)

    # ---- inspect / control -------------------------------------------------------------------
    def set_mode(self, mode: ViewMode) -> None:
        """The user's choice on the mode bar (or its shortcut)."""
        view = self.window.view
        if view.mode in (ViewMode.DEMONSTRATE, ViewMode.PICK):
            self.window.mode_bar.set_mode(view.mode)  # a demonstration or a pick is under way: it keeps the mirror
            self.window.notify(Level.INFO, "Finish the demonstration or the pick first; then switch the mirror's mode.",
                               key="mirror-mode")
            return
        view.set_mode(mode)

    def send_gesture(self, action: Action) -> None:
        """A tap, long press or swipe made on the mirror in control mode: send it to the phone."""
        w = self.window
        if w.run_active():
            w.notify(Level.INFO, "A task is driving the phone: the mirror only inspects until it ends.",
                     key="mirror-mode")
            return
        if not w.session.viewing.live:
            w.notify(Level.INFO, "The mirror shows a saved screen: press “Back to live” to control the phone.",
                     key="mirror-mode")
            return
        if w.session.device is None or w.session.executor is None:
            w.notify(Level.WARNING, "No phone is connected: connect one to control it from the mirror.",
                     key="mirror-mode")
            return
        from agent.execute import execute

        device = w.agent_device()
        self.gestures_sent += 1
        w.session.misc.submit(lambda: execute(action, device),
                      on_done=lambda _r: log.info("sent from the mirror: %s", action.describe()),
                      on_error=lambda f: w.notify_failure("Could not send the gesture to the phone", f))
