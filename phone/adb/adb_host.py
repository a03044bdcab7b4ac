"""The adb server on this computer: where it is, starting it, and talking to it.

Wraps ``adbutils.AdbClient`` with the port from ``ANDROID_ADB_SERVER_PORT`` (so tests can
run an isolated server), starts ``adb start-server`` when nothing answers, and turns
"no adb at all" into a ``DeviceError`` with install instructions.  It lists and connects
devices but does not drive them.
"""

from __future__ import annotations

import logging
import os
import shutil
import socket
import subprocess
from dataclasses import dataclass

from agent.device import DeviceError

log = logging.getLogger(__name__)

ADB_INSTALL_HINT = (
    "install the Android platform tools (Debian/Ubuntu: `sudo apt install adb`), or "
    "`pip install adbutils` which bundles one; set ADBUTILS_ADB_PATH to use a specific binary"
)


def adb_path() -> str | None:
    """The adb binary adbutils would use (env override, PATH, then the bundled one)."""
    env = os.environ.get("ADBUTILS_ADB_PATH")
    if env and os.path.isfile(env):
        return env
    found = shutil.which("adb")
    if found:
        return found
    try:
        import adbutils

        path = adbutils.adb_path()
        return path if path and os.path.isfile(path) else None
    except Exception:  # adbutils raises plain errors when it has no binary
        return None


@dataclass(frozen=True, slots=True)
class AdbHost:
    """Address of an adb server (``127.0.0.1:5037`` unless the environment says otherwise)."""

    host: str = ""
    port: int = 0

    def resolved(self) -> tuple[str, int]:
        host = self.host or os.environ.get("ANDROID_ADB_SERVER_HOST", "127.0.0.1")
        port = self.port or int(os.environ.get("ANDROID_ADB_SERVER_PORT", "5037"))
        return host, port

    def is_running(self, timeout: float = 1.0) -> bool:
        host, port = self.resolved()
        try:
            with socket.create_connection((host, port), timeout=timeout):
                return True
        except OSError:
            return False

    def ensure_server(self, timeout: float = 20.0) -> None:
        """Start the adb server if nothing is listening; raise ``DeviceError`` if impossible."""
        if self.is_running():
            return
        path = adb_path()
        if path is None:
            raise DeviceError("adb is not installed", ADB_INSTALL_HINT)
        host, port = self.resolved()
        env = dict(os.environ, ANDROID_ADB_SERVER_PORT=str(port))
        try:
            proc = subprocess.run(
                [path, "start-server"], env=env, capture_output=True, text=True, timeout=timeout
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise DeviceError(f"could not start the adb server ({exc})", f"run `{path} start-server` by hand") from exc
        if proc.returncode != 0 or not self.is_running(timeout=2.0):
            raise DeviceError(
                f"the adb server did not start on {host}:{port}: {(proc.stderr or proc.stdout).strip()}",
                "another program may hold the port; try `adb kill-server` and run again",
            )

    def client(self, socket_timeout: float = 10.0):
        """An ``adbutils.AdbClient`` for this server (started if needed)."""
        import adbutils

        self.ensure_server()
        host, port = self.resolved()
        return adbutils.AdbClient(host=host, port=port, socket_timeout=socket_timeout)

    def kill_server(self) -> None:
        if not self.is_running():
            return
        import adbutils

        host, port = self.resolved()
        try:
            adbutils.AdbClient(host=host, port=port).server_kill()
        except Exception as exc:  # the server may already be going away
            log.debug("kill-server: %s", exc)
