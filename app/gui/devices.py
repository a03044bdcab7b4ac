"""Which phones the window can use, and opening one.

``list_choices`` asks adb for connected phones (when adb and the device layer are
available) and always adds the virtual phone, which is the default when no usable phone
is connected.  ``open_device`` builds the ``Device`` for a choice.  Both may be slow
(adb round trips, first render of the virtual phone): the window calls them on a worker
thread.  Qt-free.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agent.device import Device, DeviceError
from app.settings import DeviceSettings

if TYPE_CHECKING:
    from phone.virtual.launcher import PendingPhone

log = logging.getLogger(__name__)

VIRTUAL_SERIAL = "virtual"


@dataclass(frozen=True, slots=True)
class DeviceChoice:
    serial: str
    title: str
    is_virtual: bool = False
    problem: str = ""

    @property
    def usable(self) -> bool:
        return not self.problem


VIRTUAL_CHOICE = DeviceChoice(VIRTUAL_SERIAL, "Virtual phone (1080x2400)", is_virtual=True)


def virtual_choice(profile: str = "phone", theme: str = "light", lang: str = "en",
                   layout: str = "default") -> DeviceChoice:
    """A virtual phone of another profile (size), theme, language or layout."""
    if (profile, theme, lang, layout) == ("phone", "light", "en", "default"):
        return VIRTUAL_CHOICE
    if layout != "default":
        return DeviceChoice(f"{VIRTUAL_SERIAL}:{profile}:{theme}:{lang}:{layout}",
                            f"Virtual {profile} ({theme}, {lang}, {layout} layout)", is_virtual=True)
    return DeviceChoice(f"{VIRTUAL_SERIAL}:{profile}:{theme}:{lang}", f"Virtual {profile} ({theme}, {lang})",
                        is_virtual=True)


def list_choices(timeout: float = 5.0) -> tuple[list[DeviceChoice], str]:
    """Connected phones first, then the virtual phone; plus a note when adb could not be asked."""
    phones: list[DeviceChoice] = []
    note = ""
    try:
        from phone.adb.discovery import list_devices

        for info in list_devices(timeout=timeout):
            if info.is_virtual and info.serial.startswith("127.0.0.1:"):
                continue  # a served virtual phone on this machine: the "Virtual phone" entry opens one
            title = f"{info.model or info.serial} ({info.serial})"
            if info.android_version:
                title += f" · Android {info.android_version}"
            phones.append(DeviceChoice(info.serial, title, is_virtual=info.is_virtual, problem=info.problem))
    except ImportError as exc:
        note = f"the adb device layer is not available ({exc}); only the virtual phone is offered"
    except DeviceError as exc:
        note = f"could not list phones: {exc}"
    except Exception as exc:  # adb missing, server refused… never fatal for the window
        note = f"could not list phones: {exc}"
    if note:
        log.info(note)
    return [*phones, VIRTUAL_CHOICE], note


def default_choice(choices: list[DeviceChoice], hint: str | None = None) -> DeviceChoice:
    """The hinted device ('sim' or a serial), else the first usable phone, else the virtual phone."""
    if hint:
        if hint in ("sim", "virtual", VIRTUAL_SERIAL):
            return next(c for c in choices if c.is_virtual)
        for c in choices:
            if c.serial == hint:
                return c
    for c in choices:
        if c.usable and not c.is_virtual:
            return c
    return next((c for c in choices if c.is_virtual), VIRTUAL_CHOICE)


@dataclass(frozen=True, slots=True)
class OpenedDevice:
    """A phone ready to use, and a note for the user when it is not what they asked for
    (the virtual phone inside the window because adb is missing)."""

    device: Device
    note: str = ""


def _virtual(choice: DeviceChoice, settings: DeviceSettings, early: PendingPhone | None = None) -> OpenedDevice:
    """The virtual phone for ``choice``: in its own process, reached through adb, scrcpy and
    uiautomator2 (the real-phone path), or inside the window when so set or when adb is missing."""
    parts = choice.serial.split(":")[1:]
    profile, theme, lang, layout = (*parts, *("phone", "light", "en", "default")[len(parts):])[:4]
    note = ""
    if settings.virtual_phone == "process":
        from phone.virtual.launcher import launch_device

        if early is not None and not early.matches(profile, theme, lang, layout):
            early.discard()
            early = None
        try:
            return OpenedDevice(launch_device(profile, theme, lang, command_timeout_s=settings.command_timeout_s,
                                              pending=early, layout=layout))
        except DeviceError as exc:
            note = (f"The virtual phone runs inside the window ({exc}); it is slower to draw and does not "
                    "take the real-phone path. Install adb to serve it in its own process.")
            log.warning("%s", note)
    elif early is not None:
        early.discard()
    try:
        from phone.virtual.phone import VirtualPhone
    except ImportError as exc:
        raise DeviceError("the virtual phone is not available", f"its module failed to import: {exc}") from exc
    try:
        return OpenedDevice(VirtualPhone(profile=profile, theme=theme, lang=lang, layout=layout), note)
    except ValueError as exc:
        raise DeviceError(f"no such virtual phone: {choice.title}", str(exc)) from exc


def open_device(choice: DeviceChoice, settings: DeviceSettings | None = None,
                early: PendingPhone | None = None) -> OpenedDevice:
    """Build the device for ``choice``; ``DeviceError`` with a hint when it cannot be used.
    ``early`` is a virtual phone whose process was started before the window was built: the
    virtual choice it matches takes it, anything else ends it."""
    settings = settings or DeviceSettings()
    if choice.problem:
        if early is not None:
            early.discard()
        raise DeviceError(f"{choice.title} cannot be used", choice.problem)
    if choice.is_virtual and choice.serial.split(":")[0] == VIRTUAL_SERIAL:
        return _virtual(choice, settings, early)
    if early is not None:
        early.discard()
    try:
        from phone.adb.adb_device import AdbDevice
    except ImportError as exc:
        raise DeviceError(f"cannot drive {choice.title}: the adb device layer failed to import", str(exc)) from exc
    from phone.adb.mirror import MirroredDevice  # input through scrcpy's control socket while mirroring

    return OpenedDevice(MirroredDevice(AdbDevice(choice.serial, timeout=settings.command_timeout_s)))


class DeviceOpener:
    """The window's way to open phones: ``open_device``, handing the virtual phone started
    early (``start_early``) to the first phone opened, or ending it when that is another one."""

    def __init__(self, early: PendingPhone | None = None) -> None:
        self._early = early
        self._lock = threading.Lock()

    def __call__(self, choice: DeviceChoice, settings: DeviceSettings | None = None) -> OpenedDevice:
        with self._lock:
            early, self._early = self._early, None
        return open_device(choice, settings, early)

    def discard(self) -> None:
        with self._lock:
            early, self._early = self._early, None
        if early is not None:
            early.discard()


def start_early(settings: DeviceSettings, device_hint: str | None) -> PendingPhone | None:
    """Start the virtual phone's process now, while the window is still being built, when it
    will most likely be the phone shown (asked for, or the default with no phone known yet).
    None when it will not be, or when it cannot be started (the window then says why)."""
    hint = device_hint or settings.default
    if settings.virtual_phone != "process" or hint not in ("sim", "virtual", VIRTUAL_SERIAL, "auto"):
        return None
    if hint == "auto":
        try:
            from phone.adb.discovery import list_devices

            if any(not d.problem and not d.is_virtual for d in list_devices(timeout=2.0)):
                return None  # a phone is connected: it will be the default
        except Exception:  # adb missing or refusing: the window will say so
            return None
    try:
        from phone.virtual.launcher import start

        return start()
    except Exception as exc:  # the window's own attempt reports it properly
        log.info("could not start the virtual phone early: %s", exc)
        return None
