"""A tiny scripted phone for macro tests: screens are hand-made ScreenParses, taps on
elements follow a transition table, and variants change size, language and layout.

It implements the ``agent.device.Device`` calls the replayer uses; ``FakePhone.parser``
hands the runner the phone's hand-made parse of the screen it just showed.  Not a simulator:
just enough state to check recording and replay logic without the virtual phone.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from agent.device import DeviceError, DeviceInfo, Key
from agent.macros.recorder import Observation
from vision.geometry import Rect, Size
from vision.types import Block, Element, ElementKind, Screen, ScreenParse

PKG = "com.example.clock"

# (id, kind, rect in a 1000x2000 design space, text, label, resource id, block)
TABS: list[tuple] = [
    ("tab_alarm", ElementKind.BUTTON, (0, 100, 333, 200), "Alarm", "", "tab_alarm", "tabs"),
    ("tab_timer", ElementKind.BUTTON, (333, 100, 666, 200), "Timer", "", "tab_timer", "tabs"),
    ("tab_watch", ElementKind.BUTTON, (666, 100, 1000, 200), "Stopwatch", "", "tab_watch", "tabs"),
]
SCREENS: dict[str, list[tuple]] = {
    "home": [
        *TABS,
        ("title", ElementKind.TEXT, (50, 300, 950, 400), "Clock", "", "", "body"),
    ],
    "alarms": [
        *TABS,
        ("alarm_7", ElementKind.SWITCH, (800, 300, 950, 380), "", "", "alarm_switch", "body"),
        ("add", ElementKind.BUTTON, (400, 1700, 600, 1900), "", "add", "fab_add", "body"),
    ],
    "new_alarm": [
        ("name", ElementKind.EDIT_TEXT, (50, 300, 950, 400), "", "", "alarm_name", "form"),
        ("save", ElementKind.BUTTON, (700, 1800, 950, 1900), "Save", "", "save", "form"),
    ],
    "saved": [
        ("done", ElementKind.TEXT, (50, 300, 950, 400), "Saved", "", "done_text", "body"),
    ],
}

TRANSITIONS: dict[tuple[str, str], str] = {
    ("home", "tab_alarm"): "alarms",
    ("alarms", "add"): "new_alarm",
    ("new_alarm", "save"): "saved",
    ("alarms", "tab_timer"): "home",
}

FRENCH = {"Alarm": "Alarme", "Timer": "Minuteur", "Stopwatch": "Chrono", "Save": "Enregistrer",
          "Clock": "Horloge", "Saved": "Enregistré"}


@dataclass
class Variant:
    size: Size = field(default_factory=lambda: Size(1000, 2000))
    lang: dict[str, str] = field(default_factory=dict)
    drop_resource_ids: bool = False
    renumber_ids: bool = False
    shift_save: bool = False  # the Save button moves and is renamed: text/ids no longer help
    dark: bool = False


class FakePhone:
    def __init__(self, variant: Variant | None = None, installed: tuple[str, ...] = (PKG,)) -> None:
        self.v = variant or Variant()
        self.screen = "home"
        self.package = PKG
        self.typed: list[str] = []
        self.taps: list[tuple[int, int]] = []
        self.keys: list[Key] = []
        self.installed = installed
        self.opened: list[str] = []
        self._shown: dict[int, ScreenParse] = {}  # screenshot -> the parse of what it showed

    # ---- Device protocol (the parts replay uses) ----
    @property
    def info(self) -> DeviceInfo:
        return DeviceInfo(serial="fake", size=self.v.size, is_virtual=True)

    def screen_size(self) -> Size:
        return self.v.size

    def installed_apps(self) -> list[str]:
        return list(self.installed)

    def foreground(self) -> tuple[str, str]:
        return (self.package, "Main")

    def tap(self, x: int, y: int) -> None:
        self.taps.append((x, y))
        for e in self.parse().elements_at(x, y):
            key = e.id.split("#")[0]
            if (self.screen, key) in TRANSITIONS:
                self.screen = TRANSITIONS[(self.screen, key)]
                return

    def long_press(self, x: int, y: int, duration_ms: int = 800) -> None:
        self.tap(x, y)

    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 300) -> None:
        pass

    def input_text(self, text: str) -> None:
        self.typed.append(text)

    def key(self, key: Key) -> None:
        self.keys.append(key)
        if key is Key.BACK:
            self.screen = {"alarms": "home", "new_alarm": "alarms", "saved": "alarms"}.get(self.screen, self.screen)

    def open_app(self, name_or_package: str) -> None:
        if name_or_package not in self.installed:
            raise DeviceError(f"no app {name_or_package!r}", "install it first")
        self.opened.append(name_or_package)
        self.package = name_or_package
        self.screen = "home"

    def close(self) -> None:
        pass

    def screenshot(self, *, with_hierarchy: bool = False) -> Screen:
        shot = Screen(self.image(), foreground_package=self.package, device="fake")
        self._shown[id(shot)] = self.parse()
        return shot

    @property
    def parser(self) -> FakeParser:
        return FakeParser(self)

    # ---- observation ----
    def parse(self) -> ScreenParse:
        sx, sy = self.v.size.width / 1000, self.v.size.height / 2000
        els, blocks_members = [], {}
        for n, (eid, kind, (x0, t, r, b), text, label, rid, block) in enumerate(SCREENS[self.screen]):
            if self.v.shift_save and eid == "save":
                x0, t, r, b = 50, 1000, 300, 1100
                kind, text, rid, block = ElementKind.IMAGE, "OK", "confirm", "footer"
            text = self.v.lang.get(text, text)
            real_id = f"{eid}#{n + 7}" if self.v.renumber_ids else eid
            els.append(Element(
                id=real_id, kind=kind, rect=Rect(round(x0 * sx), round(t * sy), round(r * sx), round(b * sy)),
                text=text + (self.typed[-1] if kind is ElementKind.EDIT_TEXT and self.typed else ""),
                label=label,
                resource_id="" if self.v.drop_resource_ids or not rid else f"{PKG}:id/{rid}",
                clickable=kind is not ElementKind.TEXT, checkable=kind is ElementKind.SWITCH,
                checked=False if kind is ElementKind.SWITCH else None,
                focused=kind is ElementKind.EDIT_TEXT,
            ))
            blocks_members.setdefault(block, []).append(els[-1])
        blocks = []
        for name, members in blocks_members.items():
            r = members[0].rect
            for m in members[1:]:
                r = r.union(m.rect)
            role = "tab_bar" if name == "tabs" else name
            blocks.append(Block(id=f"b_{name}", role=role, rect=r, element_ids=tuple(m.id for m in members)))
        return ScreenParse(screen_size=self.v.size, elements=tuple(els), blocks=tuple(blocks))

    def image(self) -> np.ndarray:
        img = np.full((self.v.size.height, self.v.size.width, 3), 30 if self.v.dark else 230, np.uint8)
        for e in self.parse().elements:
            r = e.rect
            # a pattern of its own per element (by its base id), like a distinct icon
            seed = sum(map(ord, e.id.split("#")[0]))
            for k in range(4):
                if (seed >> k) & 1:
                    x0 = r.left + k * r.width // 4
                    img[r.top + r.height // 4:r.bottom - r.height // 4, x0:x0 + max(1, r.width // 8)] = (
                        230 if self.v.dark else 30)
        return img

    def observe(self) -> Observation:
        return Observation(self.parse(), self.image(), self.package)

    def center_of(self, eid: str) -> tuple[int, int]:
        for e in self.parse().elements:
            if e.id.split("#")[0] == eid:
                c = e.rect.center
                return c.x, c.y
        raise KeyError(eid)


@dataclass
class FakeParser:
    """Parses a FakePhone's screenshots (the parse of the screen each one showed)."""

    phone: FakePhone

    def parse(self, screen: Screen) -> ScreenParse:
        return self.phone._shown.pop(id(screen), None) or self.phone.parse()
