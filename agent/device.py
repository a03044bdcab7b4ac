"""The device interface every phone implements: the real phone over adb (``phone.adb``)
and the virtual phone (``phone.virtual``).  It lives in ``agent`` because the agent loop drives
devices and imports must point ``app -> widgets -> agent -> vision``.  Qt-free.
Implementations put a timeout on every operation and raise ``DeviceError`` (or a
subclass) rather than hang.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from enum import Enum
from typing import Protocol, runtime_checkable

from vision.errors import HintedError
from vision.geometry import Size
from vision.types import Screen

log = logging.getLogger(__name__)


class DeviceError(HintedError):
    """A device operation failed; ``hint`` says what the user can do about it."""


class DeviceGone(DeviceError):
    """The device disconnected (unplugged, emulator stopped, served phone closed)."""


class Key(str, Enum):
    BACK = "BACK"
    HOME = "HOME"
    ENTER = "ENTER"
    APP_SWITCH = "APP_SWITCH"
    DEL = "DEL"
    TAB = "TAB"


@dataclass(frozen=True, slots=True)
class DeviceInfo:
    serial: str
    state: str = "device"
    model: str = ""
    android_version: str = ""
    size: Size | None = None
    density_dpi: int | None = None
    is_virtual: bool = False
    problem: str = ""


@runtime_checkable
class Device(Protocol):
    """What the agent, the recorder and the GUI need from a phone."""

    @property
    def info(self) -> DeviceInfo: ...

    def screen_size(self) -> Size: ...

    def screenshot(self, *, with_hierarchy: bool = False) -> Screen: ...

    def dump_hierarchy(self) -> str: ...

    def foreground(self) -> tuple[str, str]:
        """(package, activity) of the app in front."""
        ...

    def tap(self, x: int, y: int) -> None: ...

    def long_press(self, x: int, y: int, duration_ms: int = 800) -> None: ...

    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 300) -> None: ...

    def input_text(self, text: str) -> None: ...

    def key(self, key: Key) -> None: ...

    def open_app(self, name_or_package: str) -> None: ...

    def close(self) -> None: ...


@runtime_checkable
class KnowsApps(Protocol):
    """A phone that can list its launchable apps as (name, package) pairs."""

    def installed_apps(self) -> list[tuple[str, str]]: ...


def app_names(device: object) -> list[str]:
    """The names of the apps a structured reply may open (empty: the phone cannot say, any name)."""
    if not isinstance(device, KnowsApps):
        return []
    try:
        return [name for name, _pkg in device.installed_apps()]
    except Exception as exc:  # a phone that went away: the reply form then takes any app name
        log.warning("could not list the phone's apps: %s", exc)
        return []


@runtime_checkable
class NamesApps(Protocol):
    """A phone that can name some of its apps without listing them all (adb: the names it
    was told or knows for the common system apps)."""

    def label_of(self, package: str) -> str | None: ...


def app_label(device: object, package: str) -> str:
    """The app's name as the phone gives it (its app list, else the names it knows), else the package."""
    try:
        if isinstance(device, KnowsApps):
            for name, pkg in device.installed_apps():
                if pkg == package:
                    return name
        if isinstance(device, NamesApps):
            return device.label_of(package) or package
    except Exception as exc:  # a phone that cannot say: the package will do
        log.info("could not name the phone's app %s: %s", package, exc)
    return package
