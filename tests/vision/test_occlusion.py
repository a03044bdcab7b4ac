"""Dialogs, sheets and menus over content: what they cover is marked, never described nor offered.

Screens come from the virtual phone, reached by tapping like a user: Calendar's delete
confirmation (a dialog window: the dump holds only the dialog), Shop's share sheet (a
dimmed ``touch_outside`` scrim and a ``design_bottom_sheet`` panel in one window) and the
overflow menu of Settings > Apps (a clear scrim and a popup list).
"""

from __future__ import annotations

import numpy as np
import pytest

from agent.screen_text import actionable, description, element_list
from vision.config import PipelineConfig
from vision.geometry import Rect
from vision.occlusion import mark_covered, pixel_occluder
from vision.pipeline import ScreenParser
from vision.types import Element, ElementKind

sim = pytest.importorskip("phone.virtual.phone", reason="the virtual phone is not available")


def _tap(phone, *, text: str | None = None, label: str | None = None) -> None:
    found = phone.ground_truth().find(text=text, label=label)
    assert found, f"nothing named {text or label!r} on the screen"
    c = found[0].rect.center
    phone.tap(c.x, c.y)


def confirm_dialog():
    phone = sim.VirtualPhone(profile="phone", seed=7)
    phone.open_app("Calendar")
    events = phone.state["calendar"]["events"]
    assert events, "the calendar starts with events"
    truth = phone.ground_truth()
    row = next(e for e in truth.elements if e.clickable and events[0]["title"] in (e.text + e.label))
    phone.tap(row.rect.center.x, row.rect.center.y)
    _tap(phone, label="Delete event")
    assert phone.ground_truth().dialog, "the delete confirmation is open"
    return phone


def share_sheet():
    phone = sim.VirtualPhone(profile="phone", seed=7)
    phone.open_app("Shop")
    truth = phone.ground_truth()
    card = next(e for e in truth.elements if e.clickable and e.resource_id.endswith("product_card"))
    phone.tap(card.rect.center.x, card.rect.center.y)
    _tap(phone, label="Share")
    assert phone.ground_truth().find(text="Copy link"), "the share sheet is open"
    return phone


def overflow_menu():
    phone = sim.VirtualPhone(profile="phone", seed=7)
    phone.open_app("Settings")
    _tap(phone, text="Apps")
    _tap(phone, label="More options")
    assert phone.ground_truth().find(text="Sort by size"), "the overflow menu is open"
    return phone


PANELS = {"confirm dialog": (confirm_dialog, ("Cancel", "Delete")),
          "bottom sheet": (share_sheet, ("Copy link", "Send in Messages", "Save to Notes")),
          "overflow menu": (overflow_menu, ("Show system apps", "Reset app preferences", "Sort by size"))}


@pytest.fixture(scope="module")
def fusion_parser(shared_parser):
    return ScreenParser(PipelineConfig(mode="fusion", detector="cv", remember_previous=False),
                        ocr=shared_parser.ocr_backend())


@pytest.fixture(scope="module", params=list(PANELS))
def panel_screen(request, fusion_parser):
    make, choices = PANELS[request.param]
    phone = make()
    screen = phone.screenshot(with_hierarchy=True)
    return request.param, phone, screen, fusion_parser.parse(screen), choices


def _words_behind(phone, parse) -> list[str]:
    """Words drawn on the screen that a person cannot reach now (from the phone's own truth:
    every visible text minus what the panel and the system bars show)."""
    reachable = {e.text for e in phone.ground_truth().elements if e.text}
    drawn = {e.text for e in parse.elements if e.covered and e.text and len(e.text) > 3}
    return sorted(drawn - reachable)


def test_panel_is_found_and_what_it_covers_is_marked(panel_screen):
    name, phone, screen, parse, choices = panel_screen
    assert parse.occluder is not None, f"{name}: no top panel found"
    assert any(e.covered for e in parse.elements), f"{name}: nothing marked as covered"
    for word in choices:
        hits = [e for e in parse.uncovered() if word in (e.text + " " + e.label)]
        assert hits, f"{name}: the panel's {word!r} is missing from the uncovered elements"
        assert all(parse.occluder.contains(h.rect.center) for h in hits)


def test_description_and_candidates_leave_covered_elements_out(panel_screen):
    name, phone, screen, parse, choices = panel_screen
    text = description(parse)
    behind = _words_behind(phone, parse)
    assert behind, f"{name}: expected words drawn behind the panel"
    for word in behind:
        assert f'"{word}"' not in text and f"({word})" not in text, f"{name}: covered {word!r} is described"
    covered = parse.covered_ids
    assert not covered & {e.id for e in actionable(parse)}
    listed = element_list(parse)
    assert not any(line.startswith(f"[{i}]") for i in covered for line in listed.splitlines())
    for word in choices:
        assert word in text
    assert "cannot be tapped" in text  # the model is told a panel is open


def test_no_disagreement_is_reported_for_what_a_dialog_covers(panel_screen):
    name, phone, screen, parse, choices = panel_screen
    missing = [d for d in parse.disagreements if d.kind == "missing_in_tree"]
    assert all(parse.occluder.contains(d.rect.center) for d in missing), f"{name}: {missing}"


def test_pixels_alone_find_the_dimmed_panels(shared_parser):
    for make in (confirm_dialog, share_sheet):
        phone = make()
        screen = phone.screenshot(with_hierarchy=True)
        tree = ScreenParser(PipelineConfig(mode="tree")).parse(screen)
        found = pixel_occluder(screen.image)
        assert found is not None and tree.occluder is not None
        assert found.iou(tree.occluder) > 0.8, (found, tree.occluder)


def test_pixels_see_no_panel_on_ordinary_screens():
    for app in ("Settings", "Shop", "Calendar", "Contacts", "Clock"):
        for theme in ("light", "dark"):
            phone = sim.VirtualPhone(profile="phone", seed=3, theme=theme)
            phone.open_app(app)
            assert pixel_occluder(phone.screenshot().image) is None, f"{app} ({theme}) has no dialog"


def test_dark_theme_dialog_is_found_from_pixels():
    phone = sim.VirtualPhone(profile="phone", seed=7, theme="dark")
    phone.open_app("Settings")
    _tap(phone, text="Display")
    _tap(phone, text="Screen timeout")
    screen = phone.screenshot(with_hierarchy=True)
    tree = ScreenParser(PipelineConfig(mode="tree")).parse(screen)
    found = pixel_occluder(screen.image)
    assert tree.occluder is not None and found is not None and found.iou(tree.occluder) > 0.8


def test_closing_the_panel_uncovers_the_page(fusion_parser):
    phone = share_sheet()
    phone.key("BACK")
    parse = ScreenParser(PipelineConfig(mode="tree")).parse(phone.screenshot(with_hierarchy=True))
    assert parse.occluder is None and not any(e.covered for e in parse.elements)
    assert "Add to cart" in description(parse)


def test_the_phone_truth_leaves_out_what_an_in_window_scrim_covers():
    phone = overflow_menu()
    texts = {e.text for e in phone.ground_truth().elements}
    assert "Sort by size" in texts and "Clock" not in texts


def test_mark_covered_keeps_system_bars_and_panel_contents():
    bar = Element("s", ElementKind.STATUS_BAR, Rect(0, 0, 100, 10))
    inside = Element("a", ElementKind.BUTTON, Rect(20, 40, 60, 50), text="OK")
    behind = Element("b", ElementKind.TEXT, Rect(0, 80, 100, 90), text="Wi-Fi")
    straddling = Element("c", ElementKind.TEXT, Rect(5, 30, 40, 40), text="Show yo")
    out = {e.id: e.covered for e in mark_covered([bar, inside, behind, straddling], Rect(10, 35, 90, 70))}
    assert out == {"s": False, "a": False, "b": True, "c": True}


def test_blank_and_tiny_images_have_no_panel():
    assert pixel_occluder(np.full((40, 40, 3), 128, np.uint8)) is None
    assert pixel_occluder(np.full((800, 400, 3), 250, np.uint8)) is None


def _page() -> np.ndarray:
    """A light page: a grey app bar, white list rows with light-grey separators, dark text marks."""
    img = np.full((1920, 1080, 3), 255, np.uint8)
    img[60:220] = 150
    for y in range(220, 1920, 200):
        img[y : y + 24] = 238
        img[y + 80 : y + 120, 60:500] = 40
    return img


def test_a_sheet_with_a_highlighted_row_over_a_dimmed_page_is_found():
    img = (_page() * 0.4).astype(np.uint8)  # the scrim
    img[1300:] = 255  # the sheet ...
    img[1640:1800] = 236  # ... whose last row is pressed (another light colour)
    img[1380:1420, 80:400] = 30
    found = pixel_occluder(img)
    assert found is not None and found.iou(Rect(0, 1300, 1080, 1920)) > 0.8, found


def test_a_light_list_under_a_grey_app_bar_is_not_a_sheet():
    assert pixel_occluder(_page()) is None
