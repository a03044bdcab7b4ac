"""``AdbDevice``: a real phone (or anything adb talks to) behind the ``Device`` protocol.

Observation: screenshots through raw ``screencap`` over ``exec:`` (no PNG encoding on the
phone), falling back to ``screencap -p``; the hierarchy through the phone's uiautomator2
server (``u2_link``: no wait for an idle screen), falling back to ``uiautomator dump`` with a
timeout and retries on its known transient failures; ``hierarchy_path`` says which way is in
use and why.  Foreground app, size, density, rotation, screen on/locked.
Actuation: taps and swipes through the uiautomator2 server once it runs, else ``input``;
safely quoted ``input text`` (non-ASCII text is pasted through the uiautomator2 server, or
typed by ADB Keyboard), keys, the clipboard, opening apps by package or label.  Every call
has a timeout; a phone that vanished raises ``DeviceGone`` instead of hanging.  Qt-free; no
threads of its own.
"""

from __future__ import annotations

import io
import logging
import re
import socket
import struct
import time
from collections.abc import Callable
from typing import TypeVar

import numpy as np

from agent.device import DeviceError, DeviceGone, DeviceInfo, Key
from phone.adb import text_input
from phone.adb.adb_host import AdbHost
from phone.adb.discovery import describe, explain_state, parse_wm_density, parse_wm_size
from phone.adb.u2_link import HierarchyPath, U2Link, U2Unavailable
from vision.geometry import Size
from vision.types import Screen

log = logging.getLogger(__name__)

T = TypeVar("T")

KEYCODES = {Key.BACK: 4, Key.HOME: 3, Key.ENTER: 66, Key.APP_SWITCH: 187, Key.DEL: 67, Key.TAB: 61}
DUMP_PATH = "/sdcard/tapwise_window_dump.xml"
#: After the uiautomator2 server failed, how long to use ``uiautomator dump`` before trying it again.
U2_RETRY_AFTER_S = 60.0
#: uiautomator's transient failures (worth a retry) as they appear in its output.
DUMP_TRANSIENT = ("could not get idle state", "null root node", "killed", "no such file", "uiautomation not connected")
_FOCUS_RE = re.compile(r"mCurrentFocus=Window\{[^}]*?\s(?P<pkg>[\w.]+)/(?P<act>[\w.$]+)\}")
_FOCUSED_APP_RE = re.compile(r"mFocusedApp=.*?\s(?P<pkg>[\w.]+)/(?P<act>[\w.$]+)")
_RESUMED_RE = re.compile(r"(?:mResumedActivity|topResumedActivity)[:=].*?\s(?P<pkg>[\w.]+)/(?P<act>[\w.$]+)")
_ORIENTATION_RE = re.compile(r"(?:mCurrentOrientation|orientation)=(\d)")
_LOCK_RE = re.compile(
    r"\b(?:mDreamingLockscreen|mShowingLockscreen|isStatusBarKeyguard|mKeyguardShowing|isKeyguardShowing)=true"
)

#: Labels of common system apps whose package names do not contain the label.
KNOWN_LABELS = {
    "settings": "com.android.settings",
    "chrome": "com.android.chrome",
    "camera": "com.android.camera2",
    "clock": "com.google.android.deskclock",
    "contacts": "com.google.android.contacts",
    "phone": "com.google.android.dialer",
    "messages": "com.google.android.apps.messaging",
    "gmail": "com.google.android.gm",
    "maps": "com.google.android.apps.maps",
    "play store": "com.android.vending",
    "youtube": "com.google.android.youtube",
    "photos": "com.google.android.apps.photos",
    "files": "com.google.android.documentsui",
    "calculator": "com.google.android.calculator",
    "calendar": "com.google.android.calendar",
}


def decode_raw_screencap(data: bytes) -> np.ndarray:
    """RGB image from raw ``screencap`` output (12- or 16-byte header, RGBA_8888 / RGBX)."""
    if len(data) < 12:
        raise ValueError(f"raw screencap too short ({len(data)} bytes)")
    w, h, fmt = struct.unpack_from("<III", data)
    if w == 0 or h == 0 or w > 10000 or h > 10000:
        raise ValueError(f"raw screencap reports {w}x{h}")
    pixels = w * h * 4
    header = len(data) - pixels
    if header not in (12, 16):
        raise ValueError(f"raw screencap has {len(data)} bytes for {w}x{h} (format {fmt})")
    if fmt not in (1, 2, 5):  # RGBA_8888, RGBX_8888, BGRA_8888
        raise ValueError(f"raw screencap pixel format {fmt} is not a 32-bit RGB format")
    arr = np.frombuffer(data, dtype=np.uint8, count=pixels, offset=header).reshape(h, w, 4)
    return np.ascontiguousarray(arr[..., 2::-1] if fmt == 5 else arr[..., :3])


def decode_png(data: bytes) -> np.ndarray:
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as im:
            return np.asarray(im.convert("RGB"))
    except (UnidentifiedImageError, OSError) as exc:
        raise ValueError(f"screencap -p returned no PNG ({data[:60]!r})") from exc


def _read_all(sock: socket.socket, chunk: int = 1 << 20) -> bytes:
    """Read until the peer closes, in linear time (adbutils' reader is quadratic)."""
    buf = bytearray()
    while True:
        data = sock.recv(chunk)
        if not data:
            return bytes(buf)
        buf += data


def content_rows(out: str, columns: tuple[str, ...]) -> list[dict[str, str]]:
    """The rows ``adb shell content query --projection a:b`` printed, one ``Row: N a=..., b=...``
    line each, as {column: value}.  Values are not quoted and may hold ", " themselves (a
    name "Lopez, Maria"), so a value runs up to the next ", <one of columns>=" or the line's end."""
    split = re.compile(r", (?=(?:" + "|".join(re.escape(c) for c in columns) + r")=)")
    rows = []
    for line in out.splitlines():
        head = re.match(r"Row: \d+ ", line)
        if head is None:
            continue
        row = {}
        for cell in split.split(line[head.end():]):
            name, eq, value = cell.partition("=")
            if eq and name in columns:
                row[name] = value
        rows.append(row)
    return rows


class AdbDevice:
    """One phone reached through the adb server."""

    def __init__(self, serial: str, host: AdbHost | None = None, timeout: float = 10.0, *, use_u2: bool = True) -> None:
        self.serial = serial
        self.host = host or AdbHost()
        self.timeout = timeout
        self._client = self.host.client(socket_timeout=timeout)
        self._dev = self._client.device(serial)
        self._info: DeviceInfo | None = None
        self._raw_screencap_ok = True
        self._closed = False
        self._labels: dict[str, str] = {}  # package -> the name the user or the launcher called it by
        self._frame_source: Callable[[], np.ndarray | None] | None = None
        self.use_u2 = use_u2
        self._u2: U2Link | None = None
        self._u2_retry_at = 0.0
        self._path = (
            HierarchyPath("uiautomator2", "starts with the first hierarchy dump")
            if use_u2
            else HierarchyPath("uiautomator dump", "uiautomator2 is turned off for this device")
        )

    # -- plumbing ------------------------------------------------------------------------
    @property
    def adb(self):
        """The underlying ``adbutils.AdbDevice`` (for the scrcpy client)."""
        return self._dev

    def state(self) -> str:
        """adb's state for this serial, or ``"gone"``."""
        try:
            for entry in self._client.list():
                if entry.serial == self.serial:
                    return entry.state
        except Exception as exc:
            log.debug("device list failed: %s", exc)
            return "no-adb-server"
        return "gone"

    def _failed(self, what: str, exc: BaseException) -> DeviceError:
        state = self.state()
        if state != "device":
            problem = explain_state(state) if state not in ("gone", "no-adb-server") else ""
            return DeviceGone(
                f"{self.serial} disconnected during {what} (adb state: {state})",
                problem or "reconnect the phone (USB cable or `adb connect`) and resume; the episode is kept",
            )
        if isinstance(exc, socket.timeout | TimeoutError) or type(exc).__name__ == "AdbTimeout":
            return DeviceError(f"{what} timed out after {self.timeout:.0f}s on {self.serial}", "the phone may be busy; retry")
        return DeviceError(f"{what} failed on {self.serial}: {exc}", "check `adb devices`")

    def _call(self, what: str, fn: Callable[[], T]) -> T:
        if self._closed:
            raise DeviceError(f"{self.serial} is closed")
        try:
            return fn()
        except DeviceError:
            raise
        except Exception as exc:  # adbutils raises AdbError/AdbTimeout plus socket errors
            raise self._failed(what, exc) from exc

    def shell(self, cmd: str | list[str], timeout: float | None = None) -> str:
        return self._call(
            f"`{cmd if isinstance(cmd, str) else ' '.join(cmd)}`"[:80],
            lambda: self._dev.shell(cmd, timeout=timeout or self.timeout),
        )

    def exec_out(self, cmd: str, timeout: float | None = None) -> bytes:
        """Binary-safe output of ``cmd`` (adb ``exec:``, no pty, no shell_v2 framing)."""

        def run() -> bytes:
            c = self._dev.open_transport(timeout=timeout or self.timeout)
            try:
                c.send_command("exec:" + cmd)
                c.check_okay()
                return _read_all(c.conn)
            finally:
                c.close()

        return self._call(f"`{cmd}`", run)

    # -- the uiautomator2 server -----------------------------------------------------------
    @property
    def hierarchy_path(self) -> HierarchyPath:
        """Which way the hierarchy is read now, and why (for the status bar and ``tapwise doctor``)."""
        return self._path

    def start_u2(self) -> U2Link | None:
        """The running uiautomator2 server, started when allowed; ``None`` means ``uiautomator dump``."""
        if self._u2 is not None or not self.use_u2 or self._closed:
            return self._u2
        if time.monotonic() < self._u2_retry_at:
            return None
        t0 = time.perf_counter()
        try:
            self._u2 = U2Link.start(self._client, self.serial, self.timeout)
        except U2Unavailable as exc:
            self._u2_down("starting the uiautomator2 server", exc)
            return None
        self._path = HierarchyPath(
            "uiautomator2", f"its server runs on the phone (u2.jar SHA-256 verified, started in {time.perf_counter() - t0:.1f}s)"
        )
        log.info("%s: %s", self.serial, self._path.describe())
        return self._u2

    def _u2_down(self, what: str, exc: BaseException) -> None:
        """The server is unusable: raise ``DeviceGone`` if the phone left, else fall back for a while."""
        if self._u2 is not None:
            self._u2.close()
            self._u2 = None
        self._u2_retry_at = time.monotonic() + U2_RETRY_AFTER_S
        failure = self._failed(what, exc)
        if isinstance(failure, DeviceGone):
            raise failure from exc
        reason = str(exc) if isinstance(exc, U2Unavailable) else f"{what} failed: {' '.join(str(exc).split())[:160]}"
        self._path = HierarchyPath("uiautomator dump", f"{reason}; trying uiautomator2 again in {U2_RETRY_AFTER_S:.0f}s")
        log.warning("%s: %s", self.serial, self._path.describe())

    def _with_u2(self, what: str, fn: Callable[[U2Link], T]) -> tuple[bool, T | None]:
        """Run ``fn`` on the running server: (True, result), or (False, None) to use adb instead."""
        link = self._u2
        if link is None or self._closed:
            return False, None
        try:
            return True, fn(link)
        except Exception as exc:  # the library raises its own errors, adbutils' and socket errors
            self._u2_down(what, exc)
            return False, None

    def _act_u2(self, what: str, fn: Callable[[U2Link], object]) -> bool:
        """Send an action through the running server: True once sent, False when it is not running.

        An action is never sent twice: when the call fails midway the action may or may not
        have reached the phone, so this raises ``DeviceError`` (``DeviceGone`` if the phone
        left) instead of repeating it through ``input``; later actions use ``input``.
        """
        link = self._u2
        if link is None or self._closed:
            return False
        try:
            fn(link)
            return True
        except Exception as exc:  # the library raises its own errors, adbutils' and socket errors
            self._u2_down(what, exc)
            raise DeviceError(
                f"{what} through uiautomator2 failed on {self.serial}: {' '.join(str(exc).split())[:160]}",
                "it may or may not have reached the phone: check the screen before retrying "
                "(adb `input` is used from now on)",
            ) from exc

    def get_clipboard(self) -> str:
        """The phone's clipboard text (needs the uiautomator2 server)."""
        self._require_u2("reading the clipboard")
        ok, clip = self._with_u2("reading the clipboard", lambda u: u.get_clipboard())
        if not ok or clip is None:
            raise DeviceError(f"reading the clipboard of {self.serial} failed", self._path.reason)
        return clip

    def set_clipboard(self, text: str) -> None:
        """Put ``text`` on the phone's clipboard (needs the uiautomator2 server)."""
        self._require_u2("setting the clipboard")
        ok, _ = self._with_u2("setting the clipboard", lambda u: u.set_clipboard(text))
        if not ok:
            raise DeviceError(f"setting the clipboard of {self.serial} failed", self._path.reason)

    def _require_u2(self, what: str) -> U2Link:
        link = self.start_u2()
        if link is None:
            raise DeviceError(f"{what} on {self.serial} needs the uiautomator2 server", self._path.reason)
        return link

    # -- Device protocol: observation -----------------------------------------------
    @property
    def info(self) -> DeviceInfo:
        if self._info is None:
            self._info = self._call("reading device info", lambda: describe(self._client, self.serial, "device", self.timeout))
        return self._info

    def screen_size(self) -> Size:
        out = self.shell("wm size")
        size = parse_wm_size(out)
        if size is None:
            raise DeviceError(f"cannot read the screen size from `wm size`: {out[:80]!r}")
        if self.rotation() % 2 == 1:
            size = Size(size.height, size.width)
        return size

    def density(self) -> int | None:
        return parse_wm_density(self.shell("wm density"))

    def rotation(self) -> int:
        m = _ORIENTATION_RE.search(self.shell("dumpsys display | grep -E 'mCurrentOrientation|orientation='"))
        if m is None:
            m = _ORIENTATION_RE.search(self.shell("dumpsys display"))
        return int(m.group(1)) if m else 0

    def screen_state(self) -> tuple[bool, bool]:
        """(screen on, keyguard showing)."""
        power = self.shell("dumpsys power")
        on = "mWakefulness=Awake" in power or "Display Power: state=ON" in power
        window = self.shell("dumpsys window")
        return on, bool(_LOCK_RE.search(window))

    def screenshot_image(self) -> np.ndarray:
        """RGB pixels of the screen: raw framebuffer first, PNG when that is unavailable."""
        if self._raw_screencap_ok:
            data = self.exec_out("screencap")
            try:
                return decode_raw_screencap(data)
            except ValueError as exc:
                if len(data) < 4096:  # an error message or nothing: a failure, not a format problem
                    text = data.decode("utf-8", "replace").strip() or "no output"
                    raise DeviceError(f"screenshot failed on {self.serial}: {text[:200]}", "retry") from exc
                log.info("raw screencap unusable on %s (%s); using PNG from now on", self.serial, exc)
                self._raw_screencap_ok = False
        data = self.exec_out("screencap -p")
        try:
            return decode_png(data)
        except ValueError as exc:
            raise DeviceError(f"screenshot failed on {self.serial}: {exc}", "retry; if it persists, replug the phone") from exc

    def use_frames_from(self, source: Callable[[], np.ndarray | None] | None) -> None:
        """Take ``screenshot`` images from ``source`` (a running mirror's newest frame) while it
        returns one, instead of a ``screencap`` round trip; ``None`` goes back to ``screencap``."""
        self._frame_source = source

    def screenshot(self, *, with_hierarchy: bool = False) -> Screen:
        captured = time.time()
        t0 = time.perf_counter()
        image = self._frame_source() if self._frame_source is not None else None
        if image is None:
            image = self.screenshot_image()
        timings: list[tuple[str, float]] = [("frame", (time.perf_counter() - t0) * 1000)]
        xml = pkg = act = None
        if with_hierarchy:
            t0 = time.perf_counter()
            xml = self.dump_hierarchy()
            timings.append(("hierarchy", (time.perf_counter() - t0) * 1000))
            pkg, act = self.foreground()
        return Screen(
            timings_ms=tuple(timings),
            image=image,
            captured_at=captured,
            hierarchy_xml=xml,
            foreground_package=pkg,
            foreground_activity=act,
            density_dpi=self.info.density_dpi,
            device=self.serial,
        )

    def dump_hierarchy(self, attempts: int = 3, timeout: float = 15.0) -> str:
        """The window hierarchy XML: through the uiautomator2 server, else ``uiautomator dump``."""
        if self.start_u2() is not None:
            ok, xml = self._with_u2("dumping the hierarchy", lambda u: u.dump_hierarchy())
            if ok and xml is not None:
                return xml
        return self.uiautomator_dump(attempts, timeout)

    def uiautomator_dump(self, attempts: int = 3, timeout: float = 15.0) -> str:
        """The hierarchy through Android's ``uiautomator dump`` (waits for an idle screen)."""
        last = ""
        for attempt in range(attempts):
            out = self.shell(f"uiautomator dump {DUMP_PATH}", timeout=timeout)
            low = out.lower()
            if "dumped to" in low and "error" not in low:
                xml = self.exec_out(f"cat {DUMP_PATH}", timeout=timeout).decode("utf-8", "replace")
                end = xml.rfind("</hierarchy>")
                if xml.lstrip().startswith("<?xml") and end >= 0:
                    return xml[: end + len("</hierarchy>")]
                last = f"the dump is not XML: {xml[:80]!r}"
            else:
                last = out.strip() or "no output"
                if not any(t in low for t in DUMP_TRANSIENT):
                    break
            log.info("uiautomator dump attempt %d on %s failed: %s", attempt + 1, self.serial, last)
            time.sleep(0.3 * (attempt + 1))
        raise DeviceError(
            f"uiautomator dump failed on {self.serial}: {last}",
            "the screen may be animating or showing secure content; wait and retry, or use vision only",
        )

    def foreground(self) -> tuple[str, str]:
        out = self.shell("dumpsys window")
        m = _FOCUS_RE.search(out) or _FOCUSED_APP_RE.search(out)
        if m is None:
            m = _RESUMED_RE.search(self.shell("dumpsys activity activities"))
        if m is None:
            raise DeviceError(f"cannot tell which app is in front on {self.serial}", "unlock the phone")
        return m.group("pkg"), m.group("act")

    # -- Device protocol: actuation ---------------------------------------------------
    def tap(self, x: int, y: int) -> None:
        if not self._act_u2("tapping", lambda u: u.click(x, y)):
            self.shell(f"input tap {int(x)} {int(y)}")

    def long_press(self, x: int, y: int, duration_ms: int = 800) -> None:
        if not self._act_u2("long-pressing", lambda u: u.long_click(x, y, duration_ms)):
            self.shell(f"input swipe {int(x)} {int(y)} {int(x)} {int(y)} {int(duration_ms)}")

    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 300) -> None:
        if not self._act_u2("swiping", lambda u: u.swipe(x1, y1, x2, y2, duration_ms)):
            self.shell(f"input swipe {int(x1)} {int(y1)} {int(x2)} {int(y2)} {int(duration_ms)}")

    def key(self, key: Key) -> None:
        self.shell(f"input keyevent {KEYCODES[Key(key)]}")

    def input_text(self, text: str) -> None:
        if not text:
            return
        if not text_input.is_typable(text):
            if not self._act_u2("pasting text", lambda u: u.paste_text(text)):
                self._input_via_ime(text)
            return
        for step in text_input.plan_input(text):
            if isinstance(step, text_input.TypeText):
                out = self.shell(f"input text {step.quoted}")
            else:
                out = self.shell(f"input keyevent {step.keycode}")
            if "Exception" in out or "Error" in out:
                raise DeviceError(f"typing failed on {self.serial}: {out.strip()[:200]}")

    def _input_via_ime(self, text: str) -> None:
        imes = self.shell("ime list -s")
        if text_input.ADB_KEYBOARD_IME not in imes:
            raise DeviceError(f"cannot type {text!r} on {self.serial}", text_input.ADB_KEYBOARD_HINT)
        previous = self.shell("settings get secure default_input_method").strip()
        switch = previous not in ("", "null", text_input.ADB_KEYBOARD_IME)
        if switch:
            self.shell(f"ime enable {text_input.ADB_KEYBOARD_IME}; ime set {text_input.ADB_KEYBOARD_IME}")
        try:
            out = self.shell(text_input.ime_broadcast(text))
            if "result=0" not in out and "completed" not in out:
                raise DeviceError(f"ADB Keyboard did not accept the text: {out.strip()[:200]}")
        finally:
            if switch:
                self.shell(f"ime set {previous}")

    def installed_packages(self) -> list[str]:
        out = self.shell("pm list packages")
        return [line.split(":", 1)[1].strip() for line in out.splitlines() if line.startswith("package:")]

    def resolve_package(self, name: str) -> str | None:
        """A package for an app name or package: exact package, known label, then fuzzy match."""
        packages = self.installed_packages()
        if name in packages:
            return name
        low = name.strip().lower()
        known = KNOWN_LABELS.get(low)
        if known and known in packages:
            return known
        from rapidfuzz import fuzz, process

        def key(pkg: str) -> str:
            return pkg.rsplit(".", 1)[-1].lower()

        match = process.extractOne(low, {p: key(p) for p in packages}, scorer=fuzz.ratio, score_cutoff=85)
        return match[2] if match else None

    def label_of(self, package: str) -> str | None:
        """The app's name: the one it was opened by (a launcher label, a name the user gave),
        else the common system app's name, else None (adb lists packages, not names)."""
        if package in self._labels:
            return self._labels[package]
        return next((name.title() for name, pkg in KNOWN_LABELS.items() if pkg == package), None)

    def contact_names(self) -> list[str]:
        """The names the phone's contacts hold (the contacts provider, through ``content query``)."""
        out = self.shell("content query --uri content://com.android.contacts/contacts --projection display_name")
        names = (row.get("display_name", "").strip() for row in content_rows(out, ("display_name",)))
        return [n for n in names if n not in ("NULL", "")]

    def open_app(self, name_or_package: str) -> None:
        package = self.resolve_package(name_or_package)
        if package is not None and package != name_or_package and "." not in name_or_package:
            self._labels.setdefault(package, name_or_package.strip())
        if package is not None:
            out = self.shell(f"monkey -p {package} -c android.intent.category.LAUNCHER 1")
            if "No activities found" in out or "monkey aborted" in out:
                raise DeviceError(f"{package} has no launcher activity on {self.serial}")
            return
        if self._tap_launcher_label(name_or_package):
            try:
                self._labels.setdefault(self.foreground()[0], name_or_package.strip())
            except DeviceError as exc:  # the app opened; only its name is not learnt
                log.info("no foreground app after opening %r: %s", name_or_package, exc)
            return
        raise DeviceError(
            f"no app called {name_or_package!r} on {self.serial}",
            "pass the package name (see `adb shell pm list packages`)",
        )

    def _tap_launcher_label(self, label: str) -> bool:
        """Go home and tap an icon whose text or description is ``label``."""
        from xml.etree import ElementTree as ET

        from vision.geometry import Rect

        self.key(Key.HOME)
        try:
            root = ET.fromstring(self.dump_hierarchy().encode("utf-8"))
        except (DeviceError, ET.ParseError) as exc:
            log.info("launcher search for %r failed: %s", label, exc)
            return False
        want = label.strip().lower()
        for node in root.iter("node"):
            if want in (node.get("text", "").strip().lower(), node.get("content-desc", "").strip().lower()):
                rect = Rect.from_bounds_string(node.get("bounds", ""))
                c = rect.center
                self.tap(c.x, c.y)
                return True
        return False

    def close(self) -> None:
        if self._u2 is not None:
            self._u2.close()
            self._u2 = None
        self._closed = True
