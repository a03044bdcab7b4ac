"""The phone side of the window: finding phones, opening one, its mirror and live parsing.

``PhoneController`` takes the ``Session`` and the few widgets it drives (a ``PhoneUi``:
the device picker, the status labels, the mirror view and the toolbar toggles) and owns
what happens between a chosen phone and a parse shown on the mirror:

- listing phones and opening the chosen one on its own serial executor;
- the mirror loop, its frame rate in the status bar and a gone phone coming back;
- live parsing paced by ``SettledParse``: a frame is parsed once the screen has been still
  for a moment, never more than one parse at a time, the newest frame winning;
- after each parse of the live phone, which way the device read its hierarchy (status bar).

It never imports the window and builds no widgets; slow calls run on workers.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

import numpy as np
from PySide6.QtCore import QObject, QTimer, Signal

from agent.device import Device, DeviceGone
from app.gui.devices import DeviceChoice, OpenedDevice, default_choice, list_choices, open_device
from app.gui.mirror import MirrorLoop, frame_signature
from app.gui.session import LIVE, Session, Viewing
from app.gui.settle import DEFAULT_SETTLE_MS, SettledParse
from app.gui.workers import Failure, SerialExecutor
from app.settings import DeviceSettings
from vision.types import Screen, ScreenParse
from widgets.icons import icon
from widgets.notifications import Level

if TYPE_CHECKING:
    from PySide6.QtGui import QAction
    from PySide6.QtWidgets import QComboBox, QLabel

    from widgets.screen_view import ScreenView

log = logging.getLogger(__name__)


class PhoneUi(Protocol):
    """What the phone controller shows things in (``MainWindow`` has all of it)."""

    view: ScreenView
    device_combo: QComboBox
    device_status: QLabel
    fps_status: QLabel
    live_action: QAction
    parse_action: QAction

    def notify(self, level: Level | str, message: str, detail: str = "", key: str = "") -> None: ...

    def notify_failure(self, what: str, failure: Failure) -> None: ...

    def busy(self, text: str) -> None: ...

    def show_parse(self, parse: ScreenParse | None, marks: dict[str, str] | None = None) -> None: ...


def hierarchy_note(device: Device | None) -> str:
    """How the device reads its accessibility tree now ("" when it does not say)."""
    path = getattr(device, "hierarchy_path", None) if device is not None else None
    describe = getattr(path, "describe", None)
    return str(describe()) if callable(describe) else ""


class PhoneController(QObject):
    """Opens phones for the window, mirrors them and parses the live screen when it settles."""

    deviceReady = Signal(str)  # serial: a phone is open and its mirror started
    liveFrame = Signal(object)  # Screen: every mirrored frame (before the viewing check)
    firstFrame = Signal(float)  # seconds from the window's start to the first mirrored frame

    def __init__(self, session: Session, ui: PhoneUi, *, device_hint: str | None = None,
                 device_factory: Callable[..., OpenedDevice] | None = None, live_parse: bool = True,
                 run_active: Callable[[], bool] = lambda: False, started_at: float | None = None,
                 settle_ms: int = DEFAULT_SETTLE_MS, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.ui = ui
        self.device_hint = device_hint
        self.device_choice: DeviceChoice | None = None
        self.live_parse_enabled = live_parse
        self.first_frame_s: float | None = None
        self.hierarchy_note = ""
        self._started_at = time.perf_counter() if started_at is None else started_at
        self._device_factory = device_factory or open_device
        self._run_active = run_active
        self._parser_error: str | None = None
        self._last_sig = ""
        self._closing = False
        #: phones switched away from with ``park=True`` (Run on…), kept open as they were
        self._parked: dict[str, tuple[Device, SerialExecutor, DeviceChoice]] = {}
        self._combo_hooked = False
        self.settle = SettledParse(self._screen_settled, settle_ms=settle_ms, parent=self)
        self._fps_timer = QTimer(self)
        self._fps_timer.timeout.connect(self._update_fps)
        self._fps_timer.start(1000)

    # ---- finding and opening phones -----------------------------------------------------
    def refresh_devices(self) -> None:
        self.ui.busy("Looking for phones…")
        self.session.misc.submit(list_choices, on_done=self._on_choices,
                                 on_error=lambda f: self.ui.notify_failure("Device list", f))

    def _on_choices(self, result: tuple[list[DeviceChoice], str]) -> None:
        choices, note = result
        self.ui.busy("")
        self._hook_combo()
        combo = self.ui.device_combo
        combo.clear()
        for c in choices:
            combo.addItem(icon("mdi6.cellphone" if not c.is_virtual else "mdi6.cellphone-cog"),
                          c.title + (f" — {c.problem}" if c.problem else ""), c)
        chosen = default_choice(choices, self.device_hint)
        for i in range(combo.count()):
            if combo.itemData(i) == chosen:
                combo.setCurrentIndex(i)
        if self.device_choice is not None:  # the box names what is mirrored
            self._name_in_box(self.device_choice)
        if note and not chosen.is_virtual:
            self.ui.notify(Level.WARNING, note)
        if self.session.device is None and self.device_choice is None:
            self.connect_device(chosen)

    def connect_selected(self) -> None:
        choice = self.ui.device_combo.currentData()
        if choice is not None:
            self.connect_device(choice)

    def _hook_combo(self) -> None:
        """Picking a phone in the device box switches to it (the window builds the box after us)."""
        if not self._combo_hooked:
            self._combo_hooked = True
            self.ui.device_combo.activated.connect(lambda _i: self._picked())

    def _picked(self) -> None:
        choice = self.ui.device_combo.currentData()
        if choice is not None and choice != self.device_choice:
            self.connect_device(choice)

    def _name_in_box(self, choice: DeviceChoice) -> None:
        """The device box names what is mirrored (adding the choice when it is not listed)."""
        combo = self.ui.device_combo
        found = [i for i in range(combo.count()) if combo.itemData(i) == choice]
        if not found:
            combo.addItem(icon("mdi6.cellphone-cog" if choice.is_virtual else "mdi6.cellphone"), choice.title, choice)
            found = [combo.count() - 1]
        combo.setCurrentIndex(found[0])

    def connect_device(self, choice: DeviceChoice) -> None:
        """Switch to ``choice``.  A virtual phone switched away from (Run on… another one) is
        parked, not closed: switching back finds it exactly as it was.  Connecting the phone
        already shown opens it afresh."""
        if self._run_active():
            self.ui.notify(Level.WARNING, "Stop the running task before switching phones.")
            return
        self._hook_combo()
        self._name_in_box(choice)
        current = self.device_choice
        if current is not None and current.is_virtual and current != choice:
            self._park()
        else:
            self.close_phone()
        parked = self._parked.pop(choice.serial, None)
        if parked is not None:  # back to a parked phone: as it was, nothing reopened
            self.session.device, self.session.executor, self.device_choice = parked
            self._on_device_open(parked[0])
            return
        self.ui.busy(f"Connecting to {choice.title}…")
        self.ui.device_status.setText(f"connecting: {choice.title}")
        self.session.executor = SerialExecutor(choice.serial, self.session.poster)
        self.device_choice = choice
        self.session.executor.submit(self._device_factory, choice, self._device_settings(),
                                     on_done=self._on_device_open, on_error=self._on_device_failed)

    def _device_settings(self) -> DeviceSettings:
        settings = self.session.settings
        return settings.device if settings is not None else DeviceSettings()

    def use_device(self, device: Device, choice: DeviceChoice | None = None) -> None:
        """Attach an already-open device (tests, embedding)."""
        self.close_phone()
        choice = choice or DeviceChoice(device.info.serial, device.info.model or device.info.serial,
                                        is_virtual=device.info.is_virtual)
        self.session.executor = SerialExecutor(choice.serial, self.session.poster)
        self.device_choice = choice
        self._on_device_open(device)

    def _title(self, device: Device) -> str:
        return self.device_choice.title if self.device_choice else device.info.serial

    def _on_device_open(self, opened: OpenedDevice | Device) -> None:
        self.ui.busy("")
        device = opened.device if isinstance(opened, OpenedDevice) else opened
        if isinstance(opened, OpenedDevice) and opened.note:
            self.ui.notify(Level.WARNING, opened.note, key="Virtual phone")
        self.session.device = device
        info = device.info
        size = f" · {info.size}" if info.size else ""
        self.ui.device_status.setText(f"📱 {self._title(device)}{size}")
        executor = self.session.executor
        assert executor is not None
        max_fps = self._device_settings().mirror_max_fps
        mirror = MirrorLoop(device, executor, max_fps=max_fps, parent=self)
        self.session.mirror = mirror
        mirror.frameArrived.connect(self._on_frame)
        mirror.failed.connect(self._on_mirror_failed)
        mirror.deviceBack.connect(self._on_device_back)
        if self.ui.live_action.isChecked():
            mirror.start()
        self.deviceReady.emit(info.serial)

    def _on_device_failed(self, failure: Failure) -> None:
        self.ui.busy("")
        self.device_choice = None
        self.ui.device_status.setText("no device")
        self.ui.notify_failure("Could not open the phone", failure)

    def _on_mirror_failed(self, failure: Failure) -> None:
        mirror = self.session.mirror
        if isinstance(failure.error, DeviceGone):
            if mirror is not None:
                mirror.stop()
                mirror.resume_when_back()  # mirroring resumes when the phone answers again
            self.ui.device_status.setText("📵 phone gone — waiting for it")
        self.ui.notify_failure("Mirror", failure)

    def _on_device_back(self) -> None:
        device = self.session.device
        if device is not None:
            self.ui.device_status.setText(f"📱 {self._title(device)}")
        self.ui.notify(Level.INFO, "The phone is back: mirroring resumed.", key="Mirror")

    def _park(self) -> None:
        """Stop mirroring the current phone but keep it (and its executor) open."""
        session = self.session
        device, executor, choice = session.device, session.executor, self.device_choice
        if device is None or executor is None or choice is None:
            self.close_phone()
            return
        self.settle.reset()
        session.live_parse = None
        self._last_sig = ""
        if session.mirror is not None:
            session.mirror.stop()
            session.mirror.deleteLater()
            session.mirror = None
        session.device = None
        session.executor = None
        old = self._parked.pop(choice.serial, None)
        if old is not None:
            _close(old[0], old[1])
        self._parked[choice.serial] = (device, executor, choice)

    def close_phone(self) -> None:
        """Stop the mirror and close the phone (waits for its executor to finish)."""
        self.settle.reset()
        self.session.live_parse = None
        self._last_sig = ""
        session = self.session
        if session.mirror is not None:
            session.mirror.stop()
            session.mirror.deleteLater()
            session.mirror = None
        device, executor = session.device, session.executor
        session.device = None
        session.executor = None
        if executor is not None:
            if device is not None:
                try:
                    executor.call(device.close, timeout=10)
                except Exception as exc:  # closing a dead phone must not block shutdown
                    log.warning("closing the device failed: %s", exc)
            executor.shutdown(wait=True)

    def shutdown(self) -> None:
        self._closing = True
        self._fps_timer.stop()
        self.close_phone()
        for device, executor, _choice in self._parked.values():
            _close(device, executor)
        self._parked.clear()

    # ---- the mirror ------------------------------------------------------------------------
    def toggle_mirror(self, on: bool) -> None:
        mirror = self.session.mirror
        if mirror is None:
            return
        if on:
            mirror.start()
        else:
            mirror.stop()

    def _on_frame(self, screen: Screen) -> None:
        if self.first_frame_s is None:
            self.first_frame_s = time.perf_counter() - self._started_at
            log.info("first mirrored frame after %.2f s", self.first_frame_s)
            self.firstFrame.emit(self.first_frame_s)
        self.session.live_screen = screen
        self.liveFrame.emit(screen)
        if not self.session.viewing.live:
            return
        view = self.ui.view
        sig = frame_signature(screen)
        if sig == self._last_sig and view.frame is not None:
            return  # the same pixels: nothing to convert, repaint or parse
        self._last_sig = sig
        view.set_frame(screen.image, screen.captured_at)
        if self.live_parse_enabled and not self._run_active():
            # parsed once the screen stops changing; a phone's first frame at once, so the
            # overlays are there when it opens
            self.settle.frame_changed(screen, at_once=self.session.live_parse is None
                                      and self.settle.requested == 0)

    def frame_shown_again(self) -> None:
        """The view went back to the live phone: the next frame is drawn even if unchanged."""
        self._last_sig = ""

    def _update_fps(self) -> None:
        mirror = self.session.mirror
        fps = mirror.fps() if mirror is not None and mirror.running else 0.0
        text = f"mirror: {fps:.0f} fps" if fps else "mirror: paused" if mirror else "mirror: —"
        note = getattr(mirror, "source_note", "")  # scrcpy v3, or why screenshots are polled
        self.ui.fps_status.setText(f"{text} · {note}" if note and mirror is not None else text)

    # ---- parsing -----------------------------------------------------------------------------
    def toggle_live_parse(self, on: bool) -> None:
        self.live_parse_enabled = on
        if not on:
            self.settle.cancel()
        elif self.session.live_screen is not None:
            self.settle.frame_changed(self.session.live_screen)

    def request_parse(self, screen: Screen, fetch_tree: bool = False, viewing: Viewing = LIVE,
                      *, settled: bool = False) -> None:
        """Parse ``screen`` on the parse thread; a newer request replaces a waiting one.
        ``settled`` marks the requests ``SettledParse`` makes (it is told when they end)."""
        session = self.session
        device, executor = session.device, session.executor

        def job() -> tuple[Viewing, ScreenParse, bool]:
            s = screen
            if fetch_tree and s.hierarchy_xml is None and device is not None and executor is not None:
                # pixels and tree must come from the same moment: a tree dumped after the
                # phone moved on would be fused with the wrong picture
                try:
                    s = executor.call(lambda: device.screenshot(with_hierarchy=True), timeout=20)
                except Exception as exc:  # the parse still works from the mirrored pixels
                    log.info("no hierarchy for this frame: %s", exc)
            return viewing, session.parse_screen(s), settled

        def failed(failure: Failure) -> None:
            if settled:
                self.settle.parse_finished()
            self._on_parse_failed(failure)

        self.ui.busy("Parsing screen…")
        session.parse_worker.submit(job, on_done=self._on_parsed, on_error=failed)

    def _screen_settled(self, screen: Screen) -> None:
        if self._run_active() or not self.live_parse_enabled or self._closing:
            self.settle.parse_finished()  # a run parses its own observations: nothing to do
            return
        self.request_parse(screen, fetch_tree=True, settled=True)

    def parse_now(self) -> None:
        session = self.session
        screen = session.live_screen if session.viewing.live else None
        frame = self.ui.view.frame
        if screen is None and frame is not None:
            screen = Screen(image=np.ascontiguousarray(frame))
        if screen is None:
            self.ui.notify(Level.WARNING, "Nothing to parse yet: connect a phone or open a screenshot.")
            return
        self.request_parse(screen, fetch_tree=session.viewing.live, viewing=session.viewing)

    def _on_parsed(self, result: tuple[Viewing, ScreenParse, bool]) -> None:
        viewing, parse, settled = result
        if settled:
            self.settle.parse_finished()
        if not self.session.parse_worker.busy:
            self.ui.busy("")
        if self._closing:
            return
        if viewing.live:
            self.session.live_parse = parse
        if viewing != self.session.viewing:
            return  # the user moved on (e.g. to a file) before this parse finished
        self.ui.show_parse(parse)

    def show_hierarchy_note(self) -> None:
        """Say in the status bar which way the phone's hierarchy was read (after a live
        parse or a run's observation; reads a cached property, no device I/O)."""
        device = self.session.device
        note = hierarchy_note(device)
        if device is None or not note:
            return
        self.hierarchy_note = note
        label = self.ui.device_status
        base = label.text().split(" · hierarchy via ", 1)[0]
        short = note.split(" (", 1)[0]
        label.setText(f"{base} · {short}")
        label.setToolTip(note)

    def _on_parse_failed(self, failure: Failure) -> None:
        self.ui.busy("")
        if isinstance(failure.error, (ImportError, ModuleNotFoundError)):
            if self._parser_error is None:
                self._parser_error = failure.message
                self.ui.notify(Level.ERROR, "The vision pipeline is not available; live parsing is off.",
                               failure.detail)
            self.ui.parse_action.setChecked(False)
            return
        self.ui.notify_failure("Parsing failed", failure)


def _close(device: Device, executor: SerialExecutor) -> None:
    """Close a parked phone on its own executor, then the executor."""
    try:
        executor.call(device.close, timeout=10)
    except Exception as exc:  # closing a dead phone must not block shutdown
        log.warning("closing the device failed: %s", exc)
    executor.shutdown(wait=True)
