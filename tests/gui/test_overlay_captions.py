"""Overlay captions belong to their box: the virtual phone's Settings list, launcher and a
screen with the soft keyboard up, parsed by the full pipeline (tree, OCR, detector, icon
labels) and drawn by the mirror at the size a 1366x800 window gives it."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPointF, QRectF

from phone.virtual.phone import VirtualPhone
from vision.config import PipelineConfig
from vision.hierarchy import parse_hierarchy
from vision.keyboard import ROLE as KEYBOARD
from vision.pipeline import ScreenParser
from vision.types import ElementKind, Screen, ScreenParse
from widgets.captions import Caption, qrect
from widgets.overlays import Layer, LayerStyle, own_name
from widgets.screen_view import ScreenView

PARSER = ScreenParser(PipelineConfig(remember_previous=False))
KIND_WORDS = {k.value.replace("_", " ") for k in ElementKind} | {"content", "list", "group", "app bar", "card"}


def _settings(phone: VirtualPhone) -> None:
    phone.open_app("Settings")


def _launcher(phone: VirtualPhone) -> None:
    phone.go_home()


def _keyboard(phone: VirtualPhone) -> None:
    phone.open_app("Settings")
    shot = phone.screenshot(with_hierarchy=True)
    field = next(e for e in parse_hierarchy(shot.hierarchy_xml or "", shot.size).elements
                 if e.kind is ElementKind.EDIT_TEXT)
    phone.tap(field.rect.center.x, field.rect.center.y)


SCREENS = {"settings": _settings, "launcher": _launcher, "keyboard": _keyboard}


@pytest.fixture(scope="module")
def parsed() -> dict[str, tuple[Screen, ScreenParse]]:
    out = {}
    for name, setup in SCREENS.items():
        phone = VirtualPhone()
        setup(phone)
        shot = phone.screenshot(with_hierarchy=True)
        out[name] = (shot, PARSER.parse(shot))
    return out


def _drawn(qtbot, shot: Screen, parse: ScreenParse, **styles: LayerStyle) -> dict[Layer, list[Caption]]:
    view = ScreenView()
    qtbot.addWidget(view)
    view.resize(300, 660)  # the mirror's size in a 1366x800 window
    view.show()
    for layer, style in styles.items():
        view.set_layer_style(Layer(layer), style)
    view.set_frame(shot)
    view.flush()
    view.set_parse(parse)
    return {layer: list(view.layer_item(layer).captions) for layer in Layer if view.layer_style(layer).visible}


def _holds(outer: QRectF, inner: QRectF) -> bool:
    return outer.adjusted(-1, -1, 1, 1).contains(inner)


def _strictly_in(p: QPointF, r: QRectF) -> bool:
    return r.left() < p.x() < r.right() and r.top() < p.y() < r.bottom()


def _check_belonging(parse: ScreenParse, captions: dict[Layer, list[Caption]]) -> int:
    boxes = [qrect(e.rect) for e in parse.elements if not e.covered]
    count = 0
    for layer, caps in captions.items():
        for cap in caps:
            count += 1
            where = f"{layer.value} caption {cap.text!r}"
            assert cap.owner.adjusted(-1, -1, 1, 1).contains(cap.anchor), f"{where}: its anchor is off its own box"
            strangers = [b for b in boxes if _strictly_in(cap.anchor, b) and not _holds(b, cap.owner)]
            assert not strangers, f"{where}: its anchor lies in another element's box {strangers[0]}"
            under = [b for b in boxes if cap.rect.intersects(b) and not _holds(b, cap.owner)]
            assert not under, f"{where}: it lies on a neighbour's box {under[0]}"
    return count


@pytest.mark.parametrize("name", ["settings", "launcher", "keyboard"])
def test_no_caption_is_anchored_in_another_elements_box(qtbot, parsed, name):
    shot, parse = parsed[name]
    everything = {layer.value: LayerStyle(True, "#8e24aa", 0.9) for layer in (Layer.OCR_TEXT, Layer.MARKS)}
    captions = _drawn(qtbot, shot, parse, **everything)
    assert _check_belonging(parse, captions) >= 5


def test_settings_rows_carry_their_own_names(qtbot, parsed):
    shot, parse = parsed["settings"]
    captions = _drawn(qtbot, shot, parse)[Layer.ICON_LABELS]
    rows = [e for e in parse.elements if e.kind is ElementKind.BUTTON and " · " in e.label]
    assert len(rows) >= 6
    on_rows = 0
    for cap in captions:
        row = next((r for r in rows if r.rect.contains(_point(cap.anchor))), None)
        if row is not None and cap.owner == qrect(row.rect):
            assert cap.text == own_name(row) == row.label.split(" · ")[0]
            on_rows += 1
    assert on_rows >= 6, [c.text for c in captions]
    names = {c.text for c in captions}
    assert "Apps" in names and "Battery" in names
    assert not any(" · " in c.text for c in captions), "a row is captioned with its own name, not its summary"


def test_the_launcher_dock_names_each_icon_under_itself(qtbot, parsed):
    shot, parse = parsed["launcher"]
    captions = _drawn(qtbot, shot, parse)[Layer.ICON_LABELS]
    named = {c.text: c for c in captions}
    for app in ("Contacts", "Messages"):
        assert app in named, sorted(named)
        icon = next(e for e in parse.elements if own_name(e) == app and not e.text)
        assert icon.rect.contains(_point(named[app].anchor))


@pytest.mark.parametrize("name", ["settings", "launcher"])
def test_kind_words_are_off_by_default_and_on_when_asked(qtbot, parsed, name):
    shot, parse = parsed[name]
    shown = _drawn(qtbot, shot, parse)
    words = {c.text for caps in shown.values() for c in caps}
    assert not words & KIND_WORDS, words & KIND_WORDS
    tagged = _drawn(qtbot, shot, parse, widgets=LayerStyle(True, "#1e88e5", 0.85, tags=True))
    assert {c.text for c in tagged[Layer.WIDGETS]} & {"button", "image"}


def test_the_soft_keyboard_is_one_block_and_its_keys_no_disagreement(qtbot, parsed):
    shot, parse = parsed["keyboard"]
    boards = [b for b in parse.blocks if b.role == KEYBOARD]
    assert len(boards) == 1
    board = boards[0].rect
    assert board.top > 0.5 * shot.size.height and board.width == shot.size.width
    keys = [e for e in parse.elements if board.contains(e.rect.center) and e.kind is not ElementKind.NAVIGATION_BAR]
    assert len(keys) >= 15 and set(boards[0].element_ids) >= {e.id for e in keys}
    assert not [d for d in parse.disagreements if board.contains(d.rect.center)]
    others = [b for b in parse.blocks if b.role != KEYBOARD and board.intersection(b.rect) is not None
              and board.intersection(b.rect).area > 0.6 * b.rect.area]
    assert not others, "the keys' own blocks are replaced by the keyboard's"
    captions = _drawn(qtbot, shot, parse)
    assert [c.text for c in captions[Layer.BLOCKS] if c.text == "keyboard"] == ["keyboard"]
    assert not [c for c in captions[Layer.DISAGREEMENTS] if board.contains(_point(c.anchor))]


def test_the_tree_versus_pixels_comparison_leaves_the_keys_alone(parsed):
    from vision.compare import ComparingParser

    shot, _ = parsed["keyboard"]
    parse = ComparingParser(PARSER, lambda: True).parse(shot)
    board = next(b.rect for b in parse.blocks if b.role == KEYBOARD)
    screen_only = [d for d in parse.disagreements if d.kind == "only_on_screen" and board.contains(d.rect.center)]
    assert not screen_only


def _point(p: QPointF):  # type: ignore[no-untyped-def]
    from vision.geometry import Point

    return Point(int(p.x()), int(p.y()))
