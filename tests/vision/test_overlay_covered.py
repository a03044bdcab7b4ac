"""The overlay shows covered elements greyed, and places captions where they hide no screen text."""

from __future__ import annotations

import pytest

from vision.config import PipelineConfig
from vision.geometry import Rect, Size
from vision.pipeline import ScreenParser
from vision.types import Element, ElementKind, ScreenParse

pytest.importorskip("PySide6", reason="Qt is not installed (core-only environment)")
sim = pytest.importorskip("phone.virtual.phone", reason="the virtual phone is not available")

from PySide6.QtCore import QRectF  # noqa: E402
from PySide6.QtGui import QColor, QFont, QImage, QPainter  # noqa: E402

from widgets.captions import CaptionPlacer  # noqa: E402
from widgets.overlays import (  # noqa: E402
    CLASS_COLORS,
    COVERED_COLOR,
    DEFAULT_STYLES,
    Layer,
    OverlayLayerItem,
    qrect,
)


def _menu_parse():
    phone = sim.VirtualPhone(profile="phone", seed=7)
    phone.open_app("Settings")
    apps = phone.ground_truth().find(text="Apps")[0].rect.center
    phone.tap(apps.x, apps.y)
    more = phone.ground_truth().find(label="More options")[0].rect.center
    phone.tap(more.x, more.y)
    return ScreenParser(PipelineConfig(mode="tree")).parse(phone.screenshot(with_hierarchy=True))


def _render(parse, layer: Layer) -> QImage:
    item = OverlayLayerItem(layer, DEFAULT_STYLES[layer], 1)
    item.set_parse(parse)
    size = parse.screen_size
    img = QImage(size.width, size.height, QImage.Format.Format_ARGB32)
    img.fill(0)
    p = QPainter(img)
    item.paint(p, None)
    p.end()
    return img


def _edge_colours(img: QImage, rect) -> list[tuple[int, int, int]]:
    """Colours painted along a box's left edge (dashed lines leave gaps: those are skipped)."""
    out = []
    for y in range(rect.top + 2, rect.bottom - 2):
        c = img.pixelColor(rect.left, y)
        if c.alpha() > 0:
            out.append((c.red(), c.green(), c.blue()))
    return out


def test_covered_elements_are_drawn_grey_and_uncovered_ones_in_their_class_colour(qapp):
    screen = Size(400, 800)
    behind = Element("1", ElementKind.BUTTON, Rect(20, 100, 180, 160), text="Wi-Fi", clickable=True, covered=True)
    ok = Element("2", ElementKind.BUTTON, Rect(220, 400, 380, 460), text="OK", clickable=True)
    parse = ScreenParse(screen, elements=(behind, ok), occluder=Rect(200, 350, 400, 500))
    img = _render(parse, Layer.WIDGETS)
    grey, blue = QColor(COVERED_COLOR), QColor(CLASS_COLORS[ElementKind.BUTTON])
    greyed = _edge_colours(img, behind.rect)
    assert greyed and all(c == (grey.red(), grey.green(), grey.blue()) for c in greyed)
    shown = _edge_colours(img, ok.rect)
    assert shown and all(c == (blue.red(), blue.green(), blue.blue()) for c in shown)


def test_the_menu_screen_greys_rows_behind_the_menu(qapp):
    parse = _menu_parse()
    img = _render(parse, Layer.WIDGETS)
    grey = QColor(COVERED_COLOR)
    rows = [e for e in parse.elements if e.covered and e.clickable and parse.occluder.intersection(e.rect) is None]
    assert rows
    for e in rows:
        colours = _edge_colours(img, e.rect)
        assert colours and all(max(c) - min(c) < 10 for c in colours), e  # grey: no class colour anywhere
        assert sum(c == (grey.red(), grey.green(), grey.blue()) for c in colours) > 0.5 * len(colours)


def test_marks_name_only_what_can_be_tapped(qapp):
    parse = _menu_parse()
    img = _render(parse, Layer.MARKS)
    # no tag pixels inside covered rows that lie wholly outside the menu
    outside = [e for e in parse.elements if e.covered and parse.occluder.intersection(e.rect) is None and e.rect.height > 30]
    assert outside
    for e in outside:
        r = e.rect
        painted = sum(img.pixelColor(x, y).alpha() > 0 for x in range(r.left + 2, min(r.right, r.left + 60), 4)
                      for y in range(r.top + 2, min(r.bottom, r.top + 30), 4))
        assert painted == 0, e


@pytest.mark.parametrize("font_px", [24, 48])
def test_captions_never_cover_screen_text(qapp, font_px):
    parse = _menu_parse()
    font = QFont()
    font.setPixelSize(font_px)
    placer = CaptionPlacer(parse, font)
    words = [qrect(s.rect) for s in parse.text_spans] + [qrect(e.rect) for e in parse.uncovered() if e.text and e.rect.area < 0.05 * parse.screen_size.area]
    placed: list[QRectF] = []
    for e in parse.uncovered():
        cap = placer.place(e.kind.value, e.rect)
        if cap is None:
            continue
        assert not any(cap.rect.intersects(r) for r in words), e
        assert not any(cap.rect.intersects(t) for t in placed)
        placed.append(cap.rect)
    assert placed, "some captions find a free place"
