"""Start the virtual phone in a process of its own and reach it like a real phone.

``launch(...)`` starts ``python -m phone.virtual.serve`` (the virtual phone served over
the ADB protocol on loopback), waits for its ``serving SERIAL`` line, and ``adb connect``s
the adb server to it, so every later call goes through adb, the scrcpy v3 server and the
uiautomator2 server exactly as with a phone on a cable.  ``LaunchedPhone.stop()``
disconnects adb and ends the process (it also ends by itself when its parent goes away:
its standard input closes).

Knows nothing of the phone's internals (only its command line) and nothing of Qt.
``DeviceError`` with a hint when the process will not start or adb cannot reach it.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field

from agent.device import DeviceError
from phone.adb.adb_device import AdbDevice
from phone.adb.mirror import MirroredDevice

log = logging.getLogger(__name__)

READY_PREFIX = "serving "  # what phone.virtual.serve prints once it accepts connections


@dataclass
class LaunchedPhone:
    """A running served virtual phone: its adb serial and its process."""

    serial: str
    process: subprocess.Popen[bytes]
    started_s: float = 0.0  # seconds from launch to ready
    profile: str = "phone"  # the configuration it was started with (``serve_command``'s arguments)
    theme: str = "light"
    lang: str = "en"
    seed: int = 0
    layout: str = "default"
    _stopped: bool = field(default=False, repr=False)

    @property
    def running(self) -> bool:
        return self.process.poll() is None

    def stop(self, timeout: float = 5.0) -> None:
        """Disconnect adb from the phone and end its process (idempotent, never raises)."""
        if self._stopped:
            return
        self._stopped = True
        try:
            from phone.adb.discovery import disconnect

            disconnect(self.serial)
        except Exception as exc:  # adb gone already: nothing to disconnect
            log.debug("adb disconnect %s: %s", self.serial, exc)
        try:
            if self.process.stdin is not None:
                self.process.stdin.close()
            self.process.terminate()
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout)
        except OSError as exc:
            log.debug("stopping the virtual phone: %s", exc)


def serve_command(profile: str = "phone", theme: str = "light", lang: str = "en", seed: int = 0,
                  layout: str = "default") -> list[str]:
    """The command line that serves a virtual phone on a free loopback port (in the desktop
    bundle, whose executable is no Python interpreter, its entry point's own switch)."""
    head = ([sys.executable, "--virtual-phone-process"] if getattr(sys, "frozen", False)
            else [sys.executable, "-m", "phone.virtual.serve"])
    return [*head, "--port", "0", "--profile", profile, "--theme", theme,
            "--lang", lang, "--seed", str(seed), *(("--layout", layout) if layout != "default" else ())]


def _read_ready_line(proc: subprocess.Popen[bytes], timeout: float) -> str:
    """The serial from the process's first line, or ``DeviceError`` after ``timeout``."""
    line: list[bytes] = []
    reader = threading.Thread(target=lambda: line.append(proc.stdout.readline() if proc.stdout else b""),
                              daemon=True)
    reader.start()
    reader.join(timeout)
    text = line[0].decode("utf-8", "replace").strip() if line else ""
    if not text.startswith(READY_PREFIX):
        err = b""
        if proc.poll() is not None and proc.stderr is not None:
            err = proc.stderr.read()[-800:]
        proc.kill()
        why = err.decode("utf-8", "replace").strip() or (text or f"no answer within {timeout:.0f} s")
        raise DeviceError("the virtual phone did not start", why)
    return text[len(READY_PREFIX):]


@dataclass
class PendingPhone:
    """A virtual phone's process that was started and may not be ready yet: ``ready()``
    waits for it and connects adb (once); ``discard()`` ends it unused."""

    profile: str
    theme: str
    lang: str
    process: subprocess.Popen[bytes]
    started_at: float = field(default_factory=time.perf_counter)
    layout: str = "default"
    seed: int = 0

    def matches(self, profile: str, theme: str, lang: str, layout: str = "default") -> bool:
        return ((self.profile, self.theme, self.lang, self.layout) == (profile, theme, lang, layout)
                and self.process.poll() is None)

    def ready(self, timeout: float = 30.0) -> LaunchedPhone:
        from phone.adb.discovery import connect

        serial = _read_ready_line(self.process, timeout)
        phone = LaunchedPhone(serial, self.process, profile=self.profile, theme=self.theme, lang=self.lang,
                              seed=self.seed, layout=self.layout)
        try:
            connect(serial, timeout=timeout)
            _wait_online(serial, timeout)
        except DeviceError:
            phone.stop()
            raise
        phone.started_s = time.perf_counter() - self.started_at
        log.info("virtual phone served in its own process on %s (%.2f s)", serial, phone.started_s)
        return phone

    def discard(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(5)


def start(profile: str = "phone", theme: str = "light", lang: str = "en", *, seed: int = 0,
          layout: str = "default") -> PendingPhone:
    """Start the phone's process and return at once (``PendingPhone.ready`` waits for it);
    ``DeviceError`` with the install hint when adb is missing."""
    from phone.adb.adb_host import AdbHost

    AdbHost().ensure_server()
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(serve_command(profile, theme, lang, seed, layout), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    return PendingPhone(profile, theme, lang, proc, layout=layout, seed=seed)


def launch(profile: str = "phone", theme: str = "light", lang: str = "en", *, seed: int = 0,
           timeout: float = 30.0, layout: str = "default") -> LaunchedPhone:
    """Serve a virtual phone in its own process and connect adb to it (blocks until both)."""
    return start(profile, theme, lang, seed=seed, layout=layout).ready(timeout)


def _wait_online(serial: str, timeout: float) -> None:
    """Wait until adb lists ``serial`` as a ready device."""
    from phone.adb.adb_host import AdbHost

    client = AdbHost().client(socket_timeout=timeout)
    end = time.monotonic() + timeout
    state = ""
    while time.monotonic() < end:
        try:
            state = next((d.state for d in client.list() if d.serial == serial), "")
        except Exception as exc:  # the server is still settling
            state = str(exc)
        if state == "device":
            return
        time.sleep(0.05)
    raise DeviceError(f"adb does not see the virtual phone at {serial} ({state or 'not listed'})",
                      "run `adb devices`; restarting the adb server (`adb kill-server`) usually helps")



class LaunchedDevice(MirroredDevice):
    """A served virtual phone as a ``Device``: adb, the scrcpy mirror and uiautomator2 as
    with a real phone (``phone.adb``); ``close`` also ends the phone's process."""

    def __init__(self, launched: LaunchedPhone, command_timeout_s: float = 15.0) -> None:
        super().__init__(AdbDevice(launched.serial, timeout=command_timeout_s))
        self.launched = launched

    def close(self) -> None:
        try:
            super().close()
        finally:
            self.launched.stop()


def launch_device(profile: str = "phone", theme: str = "light", lang: str = "en", *, seed: int = 0,
                  command_timeout_s: float = 15.0, timeout: float = 30.0,
                  pending: PendingPhone | None = None, layout: str = "default") -> LaunchedDevice:
    """Serve a virtual phone in its own process (or take ``pending``, already started) and
    open it like a real phone."""
    launched = (pending.ready(timeout) if pending is not None
                else launch(profile, theme, lang, seed=seed, timeout=timeout, layout=layout))
    try:
        return LaunchedDevice(launched, command_timeout_s)
    except Exception:
        launched.stop()
        raise
