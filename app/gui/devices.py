"""Which phones the window can use, and opening one.

``list_choices`` asks adb for connected phones (when adb and the device layer are
available) and always adds the virtual phone, which is the default when no usable phone
is connected.  ``open_device`` builds the ``Device`` for a choice.  Both may be slow
(adb round trips, first render of the virtual phone): the window calls them on a worker
thread.  Qt-free.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from agent.device import Device, DeviceError

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


def virtual_choice(profile: str = "phone", theme: str = "light", lang: str = "en") -> DeviceChoice:
    """A virtual phone of another profile (size), theme or language."""
    if (profile, theme, lang) == ("phone", "light", "en"):
        return VIRTUAL_CHOICE
    return DeviceChoice(f"{VIRTUAL_SERIAL}:{profile}:{theme}:{lang}", f"Virtual {profile} ({theme}, {lang})",
                        is_virtual=True)


def list_choices(timeout: float = 5.0) -> tuple[list[DeviceChoice], str]:
    """Connected phones first, then the virtual phone; plus a note when adb could not be asked."""
    phones: list[DeviceChoice] = []
    note = ""
    try:
        from phone.adb.discovery import list_devices

        for info in list_devices(timeout=timeout):
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


def open_device(choice: DeviceChoice, command_timeout_s: float = 15.0) -> Device:
    """Build the device for ``choice``; ``DeviceError`` with a hint when it cannot be used."""
    if choice.problem:
        raise DeviceError(f"{choice.title} cannot be used", choice.problem)
    if choice.is_virtual and choice.serial.split(":")[0] == VIRTUAL_SERIAL:
        try:
            from phone.virtual.phone import VirtualPhone
        except ImportError as exc:
            raise DeviceError("the virtual phone is not available", f"its module failed to import: {exc}") from exc
        _, profile, theme, lang = (choice.serial + ":phone:light:en").split(":")[:4]
        try:
            return VirtualPhone(profile=profile, theme=theme, lang=lang)
        except ValueError as exc:
            raise DeviceError(f"no such virtual phone: {choice.title}", str(exc)) from exc
    try:
        from phone.adb.adb_device import AdbDevice
    except ImportError as exc:
        raise DeviceError(f"cannot drive {choice.title}: the adb device layer failed to import", str(exc)) from exc
    from phone.adb.mirror import MirroredDevice  # input through scrcpy's control socket while mirroring

    return MirroredDevice(AdbDevice(choice.serial, timeout=command_timeout_s))
