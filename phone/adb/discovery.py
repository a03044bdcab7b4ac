"""Finding phones: list what adb sees, describe each one, explain why one is unusable.

``list_devices()`` returns a ``DeviceInfo`` per serial with model, Android version,
resolution and density for usable devices, and a ``problem`` sentence saying what to do
for unauthorised, offline or no-permission ones.  ``connect()`` attaches a network
device (``host:port``).  Nothing here sends input to a phone.
"""

from __future__ import annotations

import logging
import re

from agent.device import DeviceError, DeviceInfo
from phone.adb.adb_host import AdbHost
from vision.geometry import Size

log = logging.getLogger(__name__)

STATE_HELP = {
    "unauthorized": (
        "the phone has not accepted this computer yet: unlock it and tap 'Allow' on the "
        "'Allow USB debugging?' prompt (tick 'Always allow'); if no prompt shows, revoke USB "
        "debugging authorisations in Developer options and replug the cable"
    ),
    "offline": (
        "adb sees the phone but it does not answer: unlock it, replug the cable (or re-run "
        "`adb connect` for a network phone), and if that fails run `adb kill-server`"
    ),
    "no permissions": (
        "this user may not open the USB device: add a udev rule for the phone's vendor "
        "(Debian: `sudo apt install android-sdk-platform-tools-common` and add yourself to the "
        "plugdev group), then replug; see https://developer.android.com/studio/run/device"
    ),
    "recovery": "the phone is in recovery mode: reboot it normally",
    "bootloader": "the phone is in the bootloader: reboot it normally",
    "sideload": "the phone is waiting for a sideload: reboot it normally",
    "authorizing": "the phone is still checking this computer's key: wait a second and list again",
    "connecting": "adb is still connecting: wait a second and list again",
}

_SIZE_RE = re.compile(r"(Override|Physical) size: (\d+)x(\d+)")
_DENSITY_RE = re.compile(r"(Override|Physical) density: (\d+)")


def explain_state(state: str) -> str:
    """What the user can do about a device in ``state`` ("" when it is usable)."""
    if state == "device":
        return ""
    for key, text in STATE_HELP.items():
        if state.startswith(key):
            return text
    return f"adb reports the state '{state}'; replug the phone or run `adb kill-server`"


def parse_wm_size(output: str) -> Size | None:
    """The effective size from ``wm size`` output (an override wins over the physical size)."""
    found = {m.group(1): Size(int(m.group(2)), int(m.group(3))) for m in _SIZE_RE.finditer(output)}
    return found.get("Override") or found.get("Physical")


def parse_wm_density(output: str) -> int | None:
    found = {m.group(1): int(m.group(2)) for m in _DENSITY_RE.finditer(output)}
    return found.get("Override") or found.get("Physical")


def describe(client, serial: str, state: str, timeout: float = 5.0) -> DeviceInfo:
    """Build a ``DeviceInfo``; queries the phone only when it is usable."""
    if state != "device":
        return DeviceInfo(serial=serial, state=state, problem=explain_state(state))
    d = client.device(serial)
    try:
        props = d.shell(
            "getprop ro.product.model; getprop ro.build.version.release; getprop tapwise.virtual; "
            "wm size; wm density",
            timeout=timeout,
        )
    except Exception as exc:  # adbutils raises AdbError, AdbTimeout or socket errors
        return DeviceInfo(serial=serial, state=state, problem=f"the phone did not answer ({exc}); replug it")
    lines = props.splitlines()
    model = lines[0].strip() if lines else ""
    version = lines[1].strip() if len(lines) > 1 else ""
    virtual = len(lines) > 2 and lines[2].strip() == "1"
    return DeviceInfo(
        serial=serial,
        state=state,
        model=model,
        android_version=version,
        size=parse_wm_size(props),
        density_dpi=parse_wm_density(props),
        is_virtual=virtual,
    )


def list_devices(host: AdbHost | None = None, timeout: float = 5.0) -> list[DeviceInfo]:
    """Every device adb knows about, usable or not (starts the adb server if needed)."""
    client = (host or AdbHost()).client(socket_timeout=timeout)
    try:
        entries = client.list()
    except Exception as exc:
        raise DeviceError(f"cannot list devices: {exc}", "run `adb devices` to see what adb says") from exc
    return [describe(client, e.serial, e.state, timeout) for e in entries]


def connect(address: str, host: AdbHost | None = None, timeout: float = 10.0) -> str:
    """``adb connect address``; returns the serial, or raises ``DeviceError`` explaining why not."""
    if ":" not in address:
        address = f"{address}:5555"
    client = (host or AdbHost()).client(socket_timeout=timeout)
    try:
        reply = client.connect(address, timeout=timeout)
    except Exception as exc:
        raise DeviceError(f"cannot connect to {address}: {exc}", "check the address and that the phone is on") from exc
    if "connected to" not in reply:
        raise DeviceError(
            f"cannot connect to {address}: {reply.strip()}",
            "enable wireless debugging (or run `adb tcpip 5555` over USB first) and check the port",
        )
    return address


def disconnect(address: str, host: AdbHost | None = None) -> None:
    client = (host or AdbHost()).client()
    try:
        client.disconnect(address)
    except Exception as exc:
        log.debug("disconnect %s: %s", address, exc)
