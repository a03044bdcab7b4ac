"""The proposal card while the model works: the stage, which call of the step it is and
the seconds so far (ticking once a second), with the model's reply streaming in.

``heard`` is called on the request's thread (a ``CancelToken`` listener); the text is
shown on the GUI thread, the newest only, one post at a time.  It stops ticking on its own
once ``settled()`` says a proposal or question took the card.  It starts no work.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from PySide6.QtCore import QTimer

from agent.events import Working
from app.gui.workers import GuiPoster
from widgets.proposal import ProposalCard


class WorkingCard:
    """Shows a ``Working`` event on the card until ``stop`` (or until ``settled()``)."""

    def __init__(self, card: ProposalCard, poster: GuiPoster, settled: Callable[[], bool]) -> None:
        self._card, self._poster, self._settled = card, poster, settled
        self.working: Working | None = None
        self._lock = threading.Lock()
        self._streamed = ""  # the reply so far, written on the request's thread
        self._posted = False
        self._ticker = QTimer()
        self._ticker.setInterval(1000)
        self._ticker.timeout.connect(self._tick)

    def show(self, working: Working) -> None:
        self.working = working
        with self._lock:
            self._streamed = ""
        self._card.set_working(working.stage, working.call, working.calls, max(0.0, time.time() - working.started))
        self._ticker.start()

    def stop(self) -> None:
        self._ticker.stop()
        self.working = None

    def heard(self, text: str) -> None:
        """The reply so far (on the request's thread): shown on the GUI thread, newest only."""
        with self._lock:
            self._streamed = text
            if self._posted:
                return
            self._posted = True
        self._poster.post(self._show_stream)

    def _tick(self) -> None:
        w = self.working
        if w is None or self._settled():
            self._ticker.stop()
            return
        self._card.set_working(w.stage, w.call, w.calls, max(0.0, time.time() - w.started))
        self._card.set_streamed(self._streamed)

    def _show_stream(self) -> None:
        with self._lock:
            self._posted = False
            text = self._streamed
        if self.working is not None and not self._settled():
            self._card.set_streamed(text)
