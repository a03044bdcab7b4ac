"""The virtual phone's input: taps, long presses, swipes, typed text and keys (the
``agent.device.Device`` input methods) turned into the handlers of the view tree's nodes,
with the noise knobs (dropped taps, tap offset) applied; the soft keyboard and the
navigation bar's keys.  ``PhoneInput`` is a base of ``VirtualPhone``: it holds no state of
its own (what it reads is declared below) and draws nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from agent.device import DeviceError, Key
from phone.virtual import system
from phone.virtual.apps.base import App
from phone.virtual.apps.launcher import Launcher, Recents
from phone.virtual.noise import NoiseConfig
from phone.virtual.view import Node, Ui
from vision.geometry import Size

log = logging.getLogger(__name__)


class PhoneInput:
    """Input on the virtual phone (see the module docstring)."""

    if TYPE_CHECKING:  # set or defined by VirtualPhone
        noise: NoiseConfig
        current: App
        launcher: Launcher
        recents_view: Recents
        apps: dict[str, App]
        recent: list[str]
        dialog: system.Dialog | None
        focus: Any
        shifted: bool
        symbols: bool
        _rng_tap: Any

        def _check(self) -> None: ...
        def _build(self) -> tuple[Node, Ui]: ...
        def _after_input(self, changed: bool = True) -> None: ...
        def _insert(self, text: str) -> None: ...
        def screen_size(self) -> Size: ...
        def find_app(self, name_or_package: str) -> App | None: ...
        def installed_apps(self) -> list[tuple[str, str]]: ...
        def launch(self, package: str) -> None: ...
        def go_home(self) -> None: ...
        def close_dialog(self) -> None: ...
        def clear_focus(self) -> None: ...

    # ---- Device protocol: input ---------------------------------------------------------
    def tap(self, x: int, y: int) -> None:
        self._check()
        if self.noise.drop_taps and self._rng_tap.random() < self.noise.drop_taps:
            log.debug("noise: dropped tap at (%d, %d)", x, y)
            self._after_input(changed=False)
            return
        x, y = self._offset(x, y)
        node = self._hit(x, y, lambda n: n.on_tap is not None)
        if node is not None and node.on_tap is not None:
            node.on_tap(x, y)
        self._after_input()

    def long_press(self, x: int, y: int, duration_ms: int = 800) -> None:
        self._check()
        if self.noise.drop_taps and self._rng_tap.random() < self.noise.drop_taps:
            self._after_input(changed=False)
            return
        x, y = self._offset(x, y)
        node = self._hit(x, y, lambda n: n.on_long is not None or n.on_tap is not None)
        if node is not None and node.on_long is not None:
            node.on_long()
        self._after_input()

    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 300) -> None:
        self._check()
        dx, dy = x2 - x1, y2 - y1
        if abs(dx) < 8 and abs(dy) < 8:
            self.tap(x1, y1)
            return
        _tree, ui = self._build()
        if abs(dy) >= abs(dx):
            if self.current is self.launcher and self.dialog is None and self.launcher.swipe(dy, y1, ui):
                pass
            else:
                node = self._hit(x1, y1, lambda n: n.on_scroll is not None)
                if node is not None and node.on_scroll is not None:
                    node.on_scroll(-dy)
        else:
            node = self._hit(x1, y1, lambda n: n.on_hswipe is not None)
            if node is not None and node.on_hswipe is not None:
                node.on_hswipe(1 if dx < 0 else -1)
        self._after_input()

    def input_text(self, text: str) -> None:
        self._check()
        if self.focus is None:
            log.info("input_text with no focused field; text dropped")
            self._after_input(changed=False)
            return
        self._insert(text)
        self._after_input()

    def key(self, key: Key | str) -> None:
        self._check()
        try:
            k = Key(key) if not isinstance(key, Key) else key
        except ValueError:
            raise DeviceError(f"unknown key {key!r}", f"use one of {[k.value for k in Key]}") from None
        if k is Key.BACK:
            self._back()
        elif k is Key.HOME:
            self.go_home()
        elif k is Key.APP_SWITCH:
            self.dialog = None
            self.clear_focus()
            self.current = self.recents_view
        elif k is Key.ENTER:
            self._enter()
        elif k is Key.DEL:
            if self.focus is not None:
                f = self.focus
                f.holder[f.key] = str(f.holder.get(f.key, ""))[:-1]
        elif k is Key.TAB:
            pass
        self._after_input()

    def open_app(self, name_or_package: str) -> None:
        self._check()
        app = self.find_app(name_or_package)
        if app is None:
            known = ", ".join(f"{lbl} ({pkg})" for lbl, pkg in self.installed_apps())
            raise DeviceError(f"no app called {name_or_package!r} on the virtual phone", f"installed: {known}")
        self.launch(app.package)
        self._after_input()

    def _offset(self, x: int, y: int) -> tuple[int, int]:
        if self.noise.tap_offset_px:
            x = int(round(x + self._rng_tap.gauss(0, self.noise.tap_offset_px)))
            y = int(round(y + self._rng_tap.gauss(0, self.noise.tap_offset_px)))
            w, h = self.screen_size().width, self.screen_size().height
            x, y = min(max(0, x), w - 1), min(max(0, y), h - 1)
        return x, y

    def _hit(self, x: int, y: int, want: Callable[[Node], bool]) -> Node | None:
        tree, _ = self._build()
        best = None
        for n in tree.walk():
            r = n.rect if n.clip is None else n.rect.intersection(n.clip)
            if r is None or not (r.left <= x < r.right and r.top <= y < r.bottom):
                continue
            if want(n):
                best = n
        return best

    def _back(self) -> None:
        if self.focus is not None and self.dialog is None:
            self.clear_focus()
            return
        if self.dialog is not None:
            if self.dialog.cancelable or self.dialog.kind == "ad":
                self.close_dialog()
            return
        if self.current is self.recents_view:
            self.current = self.apps.get(self.recent[0], self.launcher) if self.recent else self.launcher
            return
        if self.current is self.launcher:
            self.launcher.back()
            return
        if not self.current.back():
            self.current.reset()
            self.go_home()

    def _enter(self) -> None:
        f = self.focus
        if f is None:
            return
        if f.multiline:
            f.holder[f.key] = str(f.holder.get(f.key, "")) + "\n"
        elif f.on_submit is not None:
            cb = f.on_submit
            cb()

    def _type_char(self, ch: str) -> None:
        if self.focus is not None:
            self._insert(ch)
            if self.shifted:
                self.shifted = False

    def _kb_special(self, what: str) -> None:
        if what == "shift":
            self.shifted = not self.shifted
        elif what == "symbols":
            self.symbols = not self.symbols
        elif what == "del":
            if self.focus is not None:
                f = self.focus
                f.holder[f.key] = str(f.holder.get(f.key, ""))[:-1]
        elif what == "enter":
            self._enter()

    def _nav_key(self, key: str) -> None:
        {"BACK": self._back, "HOME": self.go_home,
         "APP_SWITCH": lambda: self.key(Key.APP_SWITCH)}[key]()
