"""List rows found between border lines: a band holding text becomes a list item, except
the first band of the content (the app bar with the screen's title)."""

from vision.blocks import Border, list_rows
from vision.geometry import Rect
from vision.types import Element, ElementKind

W, H = 1080, 1920


def _el(i: int, kind: ElementKind, rect: Rect, text: str = "") -> Element:
    return Element(id=str(i), kind=kind, rect=rect, text=text)


def _cuts(*ys: int) -> list[Border]:
    return [Border(y, 0, W, 1.0, True) for y in ys]


def test_the_band_under_the_status_bar_is_the_app_bar_not_a_row():
    els = [_el(1, ElementKind.STATUS_BAR, Rect(0, 0, W, 63), "10:34"),
           _el(2, ElementKind.TEXT, Rect(40, 100, 400, 160), "Settings"),
           _el(3, ElementKind.TEXT, Rect(40, 280, 500, 330), "Record calls")]
    rows = list_rows(_cuts(63, 236, 400), els, W, H)
    assert [r.label for r in rows] == ["Record calls"]
    assert rows[0].rect == Rect(0, 236, W, 400)


def test_without_a_status_bar_seen_the_band_under_a_thin_top_band_is_the_app_bar():
    els = [_el(2, ElementKind.TEXT, Rect(40, 100, 400, 160), "Settings"),
           _el(3, ElementKind.TEXT, Rect(40, 280, 500, 330), "Record calls")]
    rows = list_rows(_cuts(63, 236, 400), els, W, H)
    assert [r.label for r in rows] == ["Record calls"]


def test_a_band_with_text_lower_down_is_a_row():
    els = [_el(1, ElementKind.STATUS_BAR, Rect(0, 0, W, 63), "10:34"),
           _el(2, ElementKind.TEXT, Rect(40, 700, 400, 760), "Wi-Fi")]
    rows = list_rows(_cuts(63, 236, 640, 820), els, W, H)
    assert [r.label for r in rows] == ["Wi-Fi"]
