"""The phone's uiautomator2 server, driven through the ``uiautomator2`` library.

``U2Link.start`` checks the ``u2.jar`` that ships inside the installed library against a
pinned SHA-256, pushes it to the phone when the copy there differs, checks the pushed copy's
SHA-256 on the phone (where the phone has ``sha256sum``), and only then lets the library
start its server (``app_process … com.wetest.uia2.Main``) and wait for ``/ping``.  After that
the link dumps the hierarchy without waiting for an idle screen, and clicks, swipes, pastes
text and reads or sets the clipboard through JSON-RPC.  Anything that stops the server from
running becomes a ``U2Unavailable`` carrying a reason a person can act on.

It does not decide when to use the server or what to do when it fails: ``AdbDevice`` does.
Qt-free; no threads of its own (the library keeps one per server to drain its output).
"""

from __future__ import annotations

import hashlib
import logging
import socket
from dataclasses import dataclass
from importlib import metadata, resources
from pathlib import Path
from typing import Any, Literal

import adbutils

log = logging.getLogger(__name__)

DEVICE_JAR = "/data/local/tmp/u2.jar"
#: SHA-256 of ``uiautomator2/assets/u2.jar`` per released library version we checked.
PINNED_JAR_SHA256 = {
    "3.7.1": "87c8ac9505970d42aa5922baa90114808fda6f47f9e5fbd4caa0f621c2c8d30d",
}
INSTALL_HINT = "pip install 'uiautomator2==3.7.1' (its u2.jar SHA-256 is pinned in phone/adb/u2_link.py)"

Method = Literal["uiautomator2", "uiautomator dump"]


@dataclass(frozen=True, slots=True)
class HierarchyPath:
    """Which way a device reads the accessibility hierarchy, and why (status bar, doctor)."""

    method: Method
    reason: str

    def describe(self) -> str:
        return f"hierarchy via {self.method} ({self.reason})"


class U2Unavailable(Exception):
    """The uiautomator2 server cannot run (or stopped answering); ``str()`` says why."""


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def bundled_jar() -> tuple[str, Path]:
    """(library version, path of the ``u2.jar`` inside the installed ``uiautomator2``)."""
    try:
        version = metadata.version("uiautomator2")
    except metadata.PackageNotFoundError as exc:
        raise U2Unavailable(f"the uiautomator2 library is not installed; {INSTALL_HINT}") from exc
    path = Path(str(resources.files("uiautomator2") / "assets" / "u2.jar"))
    if not path.is_file():
        raise U2Unavailable(f"uiautomator2 {version} has no assets/u2.jar; {INSTALL_HINT}")
    return version, path


def verified_jar() -> tuple[Path, str]:
    """The bundled jar and its SHA-256, when that digest is the pinned one."""
    version, path = bundled_jar()
    digest = sha256_of(path.read_bytes())
    want = PINNED_JAR_SHA256.get(version)
    if want is None:
        raise U2Unavailable(f"uiautomator2 {version} has an unchecked u2.jar (sha256 {digest[:12]}…); {INSTALL_HINT}")
    if digest != want:
        raise U2Unavailable(f"u2.jar of uiautomator2 {version} does not match its pinned SHA-256; {INSTALL_HINT}")
    return path, digest


class NoDelayAdbDevice(adbutils.AdbDevice):
    """An adbutils device whose forwarded sockets send small writes at once (``TCP_NODELAY``).

    ``http.client`` writes a request's headers and its body separately; with Nagle's
    algorithm on, the body waits for the adb server's delayed ACK of the headers, which
    adds about 40 ms to every JSON-RPC call.  The library makes its sockets through
    ``create_connection`` of the device it is given, so giving it this device removes that.
    """

    def create_connection(self, network: adbutils.Network, address: int | str) -> socket.socket:
        sock = super().create_connection(network, address)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return sock


class U2Link:
    """A running uiautomator2 server on one phone."""

    def __init__(self, device: Any, timeout: float) -> None:
        self._u2 = device  # a uiautomator2.Device
        self.timeout = timeout

    @classmethod
    def start(cls, client: adbutils.AdbClient, serial: str, timeout: float = 10.0) -> U2Link:
        """Verify and push the jar, start the server and wait until it answers."""
        adb_device = NoDelayAdbDevice(client, serial=serial)
        try:
            import uiautomator2
            from uiautomator2.exceptions import BaseException as U2Error
        except ImportError as exc:
            raise U2Unavailable(f"the uiautomator2 library is not installed; {INSTALL_HINT}") from exc
        jar, digest = verified_jar()
        _push_verified(adb_device, jar, digest, timeout)
        try:
            device = uiautomator2.connect(adb_device)
        except U2Error as exc:
            raise U2Unavailable(f"the phone could not start the uiautomator2 server: {_short(exc)}") from exc
        except Exception as exc:  # adbutils and socket errors from the library's start-up
            raise U2Unavailable(f"starting the uiautomator2 server failed: {_short(exc)}") from exc
        return cls(device, timeout)

    def _rpc(self, method: str, *params: Any, timeout: float | None = None) -> Any:
        call = getattr(self._u2.jsonrpc, method)
        return call(*params, http_timeout=timeout or self.timeout)

    def dump_hierarchy(self) -> str:
        """The window hierarchy XML, taken without waiting for the screen to go idle."""
        xml = self._rpc("dumpWindowHierarchy", False, 50, timeout=max(self.timeout, 15.0))
        if not isinstance(xml, str) or "<hierarchy" not in xml:
            raise U2Unavailable(f"dumpWindowHierarchy returned no hierarchy: {str(xml)[:80]!r}")
        if '<hierarchy rotation="0" />' in xml:
            raise U2Unavailable("dumpWindowHierarchy returned an empty hierarchy")
        return xml

    def click(self, x: int, y: int) -> None:
        self._rpc("click", int(x), int(y))

    def long_click(self, x: int, y: int, duration_ms: int) -> None:
        self._rpc("click", int(x), int(y), int(duration_ms))

    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int) -> None:
        steps = max(2, int(duration_ms / 5))  # uiautomator runs one step per 5 ms
        self._rpc("swipe", int(x1), int(y1), int(x2), int(y2), steps, timeout=self.timeout + duration_ms / 1000)

    def get_clipboard(self) -> str:
        clip = self._rpc("getClipboard")
        return "" if clip is None else str(clip)

    def set_clipboard(self, text: str) -> None:
        self._rpc("setClipboard", None, text)

    def paste_text(self, text: str) -> None:
        """Type ``text`` (any Unicode) into the focused field by pasting it; the user's clip is restored."""
        previous = self.get_clipboard()
        self.set_clipboard(text)
        if self.get_clipboard() != text:
            raise U2Unavailable("the phone did not take the text into its clipboard")
        try:
            self._rpc("pasteClipboard")
        finally:
            if previous != text:
                self.set_clipboard(previous)

    def close(self) -> None:
        try:
            self._u2.stop_uiautomator(wait=False)
        except Exception as exc:  # the phone may already be gone
            log.debug("stopping the uiautomator2 server: %s", exc)


def probe_path(client: adbutils.AdbClient, serial: str, timeout: float = 3.0) -> HierarchyPath:
    """Which path ``AdbDevice`` will take on this phone, found without pushing or starting anything."""
    try:
        verified_jar()
    except U2Unavailable as exc:
        return HierarchyPath("uiautomator dump", str(exc))
    if server_answers(client, serial, timeout):
        return HierarchyPath("uiautomator2", "its server is running on the phone")
    return HierarchyPath("uiautomator2", "u2.jar verified; the server starts with the first observation")


def server_answers(client: adbutils.AdbClient, serial: str, timeout: float = 3.0, port: int = 9008) -> bool:
    """Whether a uiautomator2 server answers ``GET /ping`` on the phone's ``tcp:PORT``."""
    import http.client

    try:
        sock = NoDelayAdbDevice(client, serial=serial).create_connection(adbutils.Network.TCP, port)
    except Exception as exc:  # nothing listens there, or the phone is gone
        log.debug("tcp:%d on %s: %s", port, serial, exc)
        return False
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    sock.settimeout(timeout)
    conn.sock = sock  # already connected through adb
    try:
        conn.request("GET", "/ping")
        return conn.getresponse().read() == b"pong"
    except (OSError, http.client.HTTPException):
        return False
    finally:
        conn.close()


def _push_verified(adb_device: Any, jar: Path, digest: str, timeout: float) -> None:
    """Make the phone's ``u2.jar`` the verified one, and check it there when the phone can."""
    remote = _remote_sha256(adb_device, timeout)
    if remote == digest:
        return
    log.info("pushing u2.jar (%d bytes) to %s", jar.stat().st_size, getattr(adb_device, "serial", "?"))
    try:
        adb_device.sync.push(jar, DEVICE_JAR, check=True)
    except Exception as exc:
        raise U2Unavailable(f"pushing u2.jar to {DEVICE_JAR} failed: {_short(exc)}") from exc
    remote = _remote_sha256(adb_device, timeout)
    if remote is not None and remote != digest:
        raise U2Unavailable(f"{DEVICE_JAR} on the phone does not match the pushed u2.jar (sha256 {remote[:12]}…)")
    if remote is None:
        log.info("the phone has no sha256sum; trusting the push of the verified u2.jar")


def _remote_sha256(adb_device: Any, timeout: float) -> str | None:
    try:
        out = str(adb_device.shell(["sha256sum", DEVICE_JAR], timeout=timeout))
    except Exception as exc:
        log.debug("sha256sum on the phone failed: %s", exc)
        return None
    word = out.strip().split(" ", 1)[0]
    return word if len(word) == 64 and all(c in "0123456789abcdef" for c in word) else None


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:200]
