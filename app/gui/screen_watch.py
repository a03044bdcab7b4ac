"""Whether the phone still shows the screen a waiting proposal was planned on, judged as
the agent's feedback judges screens.

A warning on every card is read as noise and then missed when it matters, so the check
is made the way the decision memory tells screens apart (``agent.effects.screen_identity``:
the app in front and the words on the screen, digits, the status bar and covered elements
left out), and only on a settled screen: a new mirror frame only restarts a quiet-period
clock (``SettledParse``); once no frame has changed for ``settle_ms`` the phone's screen
is identified off the GUI thread (``identify``: a fresh screenshot with its tree, parsed
like a run's observation) and compared with the planned one.  A ticking clock, a battery
icon or a running stopwatch never warn; an animation that never stops never settles and
never warns; a dialog or a keyboard that opened over the screen, another page or another
app does.

Owns a ``SettledParse`` and nothing else: no parsing or device I/O of its own (the caller's
``identify`` does them: ``identify_on(session)`` for the window's phone), no widgets
(``verdict`` says what to show).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

from agent.effects import screen_identity
from app.gui.mirror import frame_signature
from app.gui.settle import SettledParse
from vision.types import Screen, ScreenParse

if TYPE_CHECKING:
    from app.gui.session import Session

#: How long the screen must stay unchanged before it is identified (an opening keyboard
#: or a page transition takes 250-400 ms on phones).
SETTLE_MS = 700

#: ``identify(screen, done)``: identify the phone's screen now (``screen`` is the settled
#: mirror frame that asked) off the GUI thread, then call ``done`` on the GUI thread with
#: its identity, or with None when it could not be told.
Identify = Callable[[Screen, Callable[[str | None], None]], None]


class ScreenWatch(QObject):
    """Watches the live frames while a proposal waits; ``verdict(True)`` when the screen changed in a way that matters."""

    verdict = Signal(bool)

    def __init__(self, identify: Identify, settle_ms: int = SETTLE_MS, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._identify = identify
        self._settle = SettledParse(self._settled, settle_ms, self)
        self._planned = ""
        self._last_sig = ""
        self._wait = 0  # which wait an answer belongs to
        self._active = False
        self._changed = False
        self.checks = 0  # screens identified while watching (for tests and the log)

    @property
    def watching(self) -> bool:
        return self._active

    @property
    def changed(self) -> bool:
        return self._changed

    def watch(self, planned: str, frame: Screen | None = None) -> None:
        """A proposal for the screen with identity ``planned`` waits; ``frame`` is the
        mirror's frame now (later frames that look the same start no check)."""
        self._settle.reset()
        self._wait += 1
        self._active = True
        self._planned = planned
        self._last_sig = frame_signature(frame) if frame is not None else ""
        self._set(False)

    def stop(self) -> None:
        """The proposal was decided: nothing to watch until the next one."""
        self._settle.reset()
        self._wait += 1
        self._active = False
        self._planned = ""
        self._set(False)

    def frame(self, screen: Screen) -> None:
        """A live frame arrived: when its pixels are new, wait for the screen to settle."""
        if not self.watching or not self._planned:
            return
        sig = frame_signature(screen)
        if sig == self._last_sig:
            return
        self._last_sig = sig
        self._settle.frame_changed(screen)

    def _settled(self, screen: Screen) -> None:
        wait = self._wait

        def done(identity: str | None) -> None:
            self._settle.parse_finished()
            if wait != self._wait or not self._active or identity is None:
                return  # decided meanwhile, or the screen could not be told
            self.checks += 1
            self._set(identity != self._planned)

        self._identify(screen, done)

    def _set(self, changed: bool) -> None:
        if changed != self._changed:
            self._changed = changed
            self.verdict.emit(changed)


def planned_identity(parse: ScreenParse, screen: Screen) -> str:
    """The identity of the screen a step was planned on (its parse and screenshot)."""
    return screen_identity(parse, screen.foreground_package)


def identify_on(session: Session) -> Identify:
    """``identify`` for the session's phone: a fresh screenshot with its tree (through the
    phone's own executor), parsed as a run observes it, on the misc worker."""

    def identify(_frame: Screen, done: Callable[[str | None], None]) -> None:
        device, executor = session.device, session.executor

        def job() -> str:
            if device is None or executor is None:
                raise RuntimeError("no phone")
            shot = executor.call(lambda: device.screenshot(with_hierarchy=True), timeout=20)
            return planned_identity(session.parse_screen(shot), shot)

        session.misc.submit(job, on_done=done, on_error=lambda _failure: done(None))

    return identify
