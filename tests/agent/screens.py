"""Small hand-built screen parses for agent tests (no vision pipeline, no phone)."""

from __future__ import annotations

from vision.describe import describe
from vision.geometry import Rect, Size
from vision.types import Element, ElementKind, ScreenParse

SIZE = Size(1080, 2400)


def el(eid: str, text: str, top: int, kind: ElementKind = ElementKind.BUTTON, label: str = "", **kw) -> Element:
    return Element(eid, kind, Rect(40, top, 1040, top + 120), text=text, label=label,
                   clickable=kind is not ElementKind.TEXT, **kw)


def settings_parse() -> ScreenParse:
    elements = (
        el("1", "Settings", 100, ElementKind.TEXT),
        el("2", "Network & internet", 300),
        el("3", "Display", 450),
        el("4", "Sound & vibration", 600),
        el("5", "Search settings", 750, ElementKind.EDIT_TEXT),
    )
    return ScreenParse(SIZE, elements, description=describe(SIZE, elements, (), app="com.android.settings"))


def clock_parse() -> ScreenParse:
    elements = (
        el("1", "Timer", 200, ElementKind.TEXT),
        el("2", "Alarm", 2200),
        el("3", "Clock", 2200 - 130),
        el("4", "Timer", 2200 - 260, selected=True),
    )
    return ScreenParse(SIZE, elements, description=describe(SIZE, elements, (), app="com.google.android.deskclock"))
