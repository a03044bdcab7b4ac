"""A tiny phone double implementing the ``agent.device.Device`` protocol for device tests.

Two screens: a launcher (app labels) and a settings screen with a Wi-Fi switch and a
text field.  It renders flat colours with numpy so tests stay fast.  The integration
tests prefer the real ``phone.virtual.phone.VirtualPhone`` when it exists.
"""

from __future__ import annotations

import io
import threading

import numpy as np

from agent.device import DeviceInfo, Key
from vision.geometry import Point, Rect, Size
from vision.types import Screen

APPS = [("com.android.settings", "Settings"), ("com.example.notes", "Notes")]


class FakePhone:
    def __init__(self, width: int = 360, height: int = 800) -> None:
        self.size = Size(width, height)
        self.app = "com.android.launcher"
        self.wifi = True
        self.text = ""
        self.frame_id = 0
        self.taps: list[tuple[int, int]] = []
        self.swipes: list[tuple[int, int, int, int, int]] = []
        self.keys: list[Key] = []
        self._lock = threading.Lock()
        w, h = width, height
        self.switch_rect = Rect(int(w * 0.75), int(h * 0.15), int(w * 0.95), int(h * 0.2))
        self.field_rect = Rect(int(w * 0.05), int(h * 0.3), int(w * 0.95), int(h * 0.36))
        self.icon_rects = {
            pkg: Rect(int(w * (0.1 + 0.45 * i)), int(h * 0.7), int(w * (0.4 + 0.45 * i)), int(h * 0.8))
            for i, (pkg, _label) in enumerate(APPS)
        }

    # Device protocol -----------------------------------------------------------------
    @property
    def info(self) -> DeviceInfo:
        return DeviceInfo(serial="fake", model="FakePhone", android_version="14", size=self.size,
                          density_dpi=320, is_virtual=True)

    def screen_size(self) -> Size:
        return self.size

    def render(self) -> np.ndarray:
        h, w = self.size.height, self.size.width
        img = np.full((h, w, 3), 250, dtype=np.uint8)
        img[: int(h * 0.04)] = (30, 30, 30)  # status bar
        if self.app == "com.android.settings":
            r = self.switch_rect
            img[r.top : r.bottom, r.left : r.right] = (26, 115, 232) if self.wifi else (150, 150, 150)
            f = self.field_rect
            img[f.top : f.bottom, f.left : f.right] = (235, 235, 235)
            n = min(len(self.text) * 6, f.right - f.left)
            img[f.top + 4 : f.bottom - 4, f.left : f.left + n] = (20, 20, 20)
            for i, ch in enumerate(self.text.encode()[:60]):
                img[f.bottom + 2 : f.bottom + 8, f.left + i * 5 : f.left + i * 5 + 4] = (ch, 255 - ch, ch // 2)
        else:
            for pkg, r in self.icon_rects.items():
                img[r.top : r.bottom, r.left : r.right] = (200, 80, 80) if "settings" in pkg else (80, 160, 80)
        return img

    def screenshot(self, *, with_hierarchy: bool = False) -> Screen:
        with self._lock:
            return Screen(image=self.render(), hierarchy_xml=self.dump_hierarchy() if with_hierarchy else None,
                          foreground_package=self.app, density_dpi=320, device="fake")

    def screenshot_png(self) -> bytes:
        from PIL import Image

        buf = io.BytesIO()
        Image.fromarray(self.render()).save(buf, format="PNG", compress_level=1)
        return buf.getvalue()

    def dump_hierarchy(self) -> str:
        w, h = self.size.width, self.size.height
        nodes = []
        if self.app == "com.android.settings":
            r, f = self.switch_rect, self.field_rect
            checked = "true" if self.wifi else "false"
            nodes.append(f'<node index="0" text="Wi-Fi" resource-id="android:id/switch_widget" class="android.widget.Switch" '
                         f'package="{self.app}" checkable="true" checked="{checked}" clickable="true" '
                         f'bounds="[{r.left},{r.top}][{r.right},{r.bottom}]" />')
            text = (self.text.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;"))
            nodes.append(f'<node index="1" text="{text}" resource-id="com.android.settings:id/search" '
                         f'class="android.widget.EditText" package="{self.app}" clickable="true" '
                         f'bounds="[{f.left},{f.top}][{f.right},{f.bottom}]" />')
        else:
            for i, (pkg, label) in enumerate(APPS):
                r = self.icon_rects[pkg]
                nodes.append(f'<node index="{i}" text="{label}" class="android.widget.TextView" '
                             f'package="com.android.launcher" clickable="true" content-desc="{label}" '
                             f'bounds="[{r.left},{r.top}][{r.right},{r.bottom}]" />')
        body = "".join(nodes)
        return ("<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">"
                f'<node index="0" text="" class="android.widget.FrameLayout" package="{self.app}" '
                f'bounds="[0,0][{w},{h}]">{body}</node></hierarchy>')

    def foreground(self) -> tuple[str, str]:
        act = ".Settings" if self.app == "com.android.settings" else ".Launcher"
        return self.app, act

    def _bump(self) -> None:
        self.frame_id += 1

    def tap(self, x: int, y: int) -> None:
        with self._lock:
            self.taps.append((x, y))
            if self.app == "com.android.settings" and self.switch_rect.contains(Point(x, y)):
                self.wifi = not self.wifi
            elif self.app == "com.android.launcher":
                for pkg, r in self.icon_rects.items():
                    if r.contains(Point(x, y)):
                        self.app = pkg
            self._bump()

    def long_press(self, x: int, y: int, duration_ms: int = 800) -> None:
        self.tap(x, y)

    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 300) -> None:
        with self._lock:
            self.swipes.append((x1, y1, x2, y2, duration_ms))
            self._bump()

    def input_text(self, text: str) -> None:
        with self._lock:
            self.text += text
            self._bump()

    def key(self, key: Key) -> None:
        with self._lock:
            self.keys.append(key)
            if key is Key.HOME:
                self.app = "com.android.launcher"
            elif key is Key.DEL:
                self.text = self.text[:-1]
            self._bump()

    def open_app(self, name_or_package: str) -> None:
        with self._lock:
            for pkg, label in APPS:
                if name_or_package in (pkg, label):
                    self.app = pkg
                    self._bump()
                    return
        from agent.device import DeviceError

        raise DeviceError(f"no app {name_or_package!r}", "check installed_apps()")

    def installed_apps(self) -> list[tuple[str, str]]:
        return list(APPS)

    def close(self) -> None:
        pass
