"""Live parsing paced by the screen: parse a mirrored frame once the screen has settled.

A parse costs seconds of CPU while the mirror delivers up to 60 frames a second, so
parsing every changed frame starves the mirror.  ``SettledParse`` waits until no new
frame has arrived for ``settle_ms``, then hands the newest frame to its ``request``
callback; while a parse is in flight it never asks for another one, and when that parse
ends it asks once more only if the screen changed meanwhile (and has settled again).

Owns a single-shot Qt timer and nothing else: no parsing, no device I/O, no widgets.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer

from vision.types import Screen

#: How long the screen must stay unchanged before a live parse starts.
DEFAULT_SETTLE_MS = 500


class SettledParse(QObject):
    """Turns a stream of changed frames into at most one parse request at a time."""

    def __init__(self, request: Callable[[Screen], None], settle_ms: int = DEFAULT_SETTLE_MS,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._request = request
        self._newest: Screen | None = None
        self._in_flight = False
        self._due = False  # the screen settled while a parse was running
        self.requested = 0
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(max(0, int(settle_ms)))
        self._timer.timeout.connect(self._settled)

    @property
    def settle_ms(self) -> int:
        return int(self._timer.interval())

    @property
    def in_flight(self) -> bool:
        return self._in_flight

    def frame_changed(self, screen: Screen, *, at_once: bool = False) -> None:
        """A frame with new pixels arrived: (re)start the quiet-period clock; ``at_once``
        asks for it without waiting (the first frame of a phone) unless a parse runs."""
        self._newest = screen
        self._due = False
        if at_once and not self._in_flight:
            self._timer.stop()
            self._fire()
            return
        self._timer.start()

    def parse_finished(self) -> None:
        """The parse asked for earlier has ended (with a result or an error)."""
        self._in_flight = False
        if self._due:
            self._due = False
            self._fire()

    def cancel(self) -> None:
        """Forget the waiting frame (live parsing switched off, phone changed)."""
        self._timer.stop()
        self._newest = None
        self._due = False

    def reset(self) -> None:
        """Forget everything, including a parse believed in flight (its result is dropped)."""
        self.cancel()
        self._in_flight = False

    def _settled(self) -> None:
        if self._in_flight:
            self._due = True  # asked for when the running parse ends: never two at once
            return
        self._fire()

    def _fire(self) -> None:
        screen, self._newest = self._newest, None
        if screen is None:
            return
        self._in_flight = True
        self.requested += 1
        self._request(screen)
