"""A thread-safe view of the virtual phone for the wire services.

The ADB services and the scrcpy server run on several threads at once; this adapter
serialises every call into the phone with one lock and smooths over optional parts of
the phone's interface (``screenshot_png``, ``frame_id``, ``installed_apps``).  It does no
protocol work and no rendering of its own.
"""

from __future__ import annotations

import io
import threading
from typing import Any

import numpy as np

from agent.device import Device, Key
from vision.geometry import Size


class ServedPhone:
    """Wraps a ``Device`` (normally ``phone.virtual.phone.VirtualPhone``) for concurrent use."""

    def __init__(self, phone: Device, *, name: str = "Tapwise Virtual Phone") -> None:
        self.phone = phone
        self.name = name
        self.lock = threading.RLock()
        self._changes = 0  # bumped on every input when the phone has no frame_id
        self._change = threading.Condition()

    # -- observation -------------------------------------------------------------------
    def size(self) -> Size:
        with self.lock:
            return self.phone.screen_size()

    def density(self) -> int:
        info = self.phone.info
        return int(info.density_dpi or 420)

    def rgb(self) -> np.ndarray:
        with self.lock:
            return np.asarray(self.phone.screenshot().image)

    def png(self) -> bytes:
        with self.lock:
            fn = getattr(self.phone, "screenshot_png", None)
            if callable(fn):
                return bytes(fn())
            image = np.asarray(self.phone.screenshot().image)
        from PIL import Image

        buf = io.BytesIO()
        Image.fromarray(image).save(buf, format="PNG", compress_level=1)
        return buf.getvalue()

    def hierarchy(self) -> str:
        with self.lock:
            return self.phone.dump_hierarchy()

    def foreground(self) -> tuple[str, str]:
        with self.lock:
            return self.phone.foreground()

    def animating(self) -> bool:
        """Whether the screen keeps changing on its own (so uiautomator never sees it idle)."""
        fn = getattr(self.phone, "is_animating", None)
        if not callable(fn):
            return False
        with self.lock:
            return bool(fn())

    def frame_id(self) -> int:
        """A number that changes whenever the screen may have changed (a phone whose
        messages go by themselves, ``tick_flashes``, is given the chance first)."""
        tick = getattr(self.phone, "tick_flashes", None)
        if callable(tick):
            with self.lock:
                tick()
        fid = getattr(self.phone, "frame_id", None)
        if fid is None:
            return self._changes
        return int(fid() if callable(fid) else fid)

    def live_props(self) -> dict[str, str]:
        """System properties that follow the phone's state: its UI language as
        ``persist.sys.locale`` (changed in Settings > Languages, as on a phone)."""
        fn = getattr(self.phone, "ui_language", None)
        if not callable(fn):
            return {}
        with self.lock:
            return {"persist.sys.locale": str(fn())}

    def contact_names(self) -> list[str]:
        fn = getattr(self.phone, "contact_names", None)
        if not callable(fn):
            return []
        with self.lock:
            return [str(n) for n in fn()]

    def installed_apps(self) -> list[tuple[str, str]]:
        """(package, label) pairs."""
        fn = getattr(self.phone, "installed_apps", None)
        if not callable(fn):
            return []
        with self.lock:
            raw: Any = fn()
        out: list[tuple[str, str]] = []
        items = raw.items() if isinstance(raw, dict) else raw
        for item in items:
            if isinstance(item, tuple | list) and len(item) >= 2:
                a, b = str(item[0]), str(item[1])
                # accept (package, label) and (label, package): the package is the dotted id
                out.append((b, a) if _looks_like_package(b) and not _looks_like_package(a) else (a, b))
            elif isinstance(item, str):
                out.append((item, item))
            else:
                pkg = getattr(item, "package", None) or getattr(item, "package_name", None)
                label = getattr(item, "label", None) or getattr(item, "name", None) or pkg
                if pkg:
                    out.append((str(pkg), str(label)))
        return out

    # -- actuation ---------------------------------------------------------------------
    def _changed(self) -> None:
        with self._change:
            self._changes += 1
            self._change.notify_all()

    def wait_change(self, timeout: float) -> None:
        """Sleep up to ``timeout`` seconds, waking early when input reaches the phone."""
        with self._change:
            self._change.wait(timeout)

    def tap(self, x: int, y: int) -> None:
        with self.lock:
            self.phone.tap(x, y)
            self._changed()

    def long_press(self, x: int, y: int, duration_ms: int) -> None:
        with self.lock:
            self.phone.long_press(x, y, duration_ms)
            self._changed()

    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int) -> None:
        with self.lock:
            self.phone.swipe(x1, y1, x2, y2, duration_ms)
            self._changed()

    def text(self, text: str) -> None:
        with self.lock:
            self.phone.input_text(text)
            self._changed()

    def key(self, key: Key) -> None:
        with self.lock:
            self.phone.key(key)
            self._changed()

    def open_app(self, package: str) -> None:
        with self.lock:
            self.phone.open_app(package)
            self._changed()


def _looks_like_package(text: str) -> bool:
    return "." in text and " " not in text and text == text.lower()
