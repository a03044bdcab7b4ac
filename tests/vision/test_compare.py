"""Tree versus pixels (``vision.compare``): what each reading has that the other does not."""

from __future__ import annotations

import numpy as np
import pytest

from vision.compare import ComparingParser, compare
from vision.geometry import Rect, Size
from vision.types import Element, ElementKind, ElementSource, Screen, ScreenParse, StageTiming

SIZE = Size(1080, 2400)


def tree_el(i: str, kind: ElementKind, rect: Rect, text: str = "", label: str = "", clickable: bool = False) -> Element:
    return Element(i, kind, rect, text=text, label=label, clickable=clickable, source=ElementSource.HIERARCHY)


def seen_el(i: str, kind: ElementKind, rect: Rect, text: str = "", label: str = "") -> Element:
    source = ElementSource.OCR if kind is ElementKind.TEXT else ElementSource.DETECTOR
    return Element(i, kind, rect, text=text, label=label, source=source, confidence=0.9)


def test_readings_that_agree_give_no_disagreement():
    tree = [tree_el("t1", ElementKind.TEXT, Rect(40, 200, 400, 260), "Network & internet"),
            tree_el("t2", ElementKind.BUTTON, Rect(900, 100, 1040, 220), label="Search", clickable=True)]
    seen = [seen_el("v1", ElementKind.TEXT, Rect(42, 205, 390, 255), "Network & internet"),
            seen_el("v2", ElementKind.BUTTON, Rect(910, 110, 1030, 210), label="search")]
    assert compare(tree, seen, SIZE) == ()


def test_words_on_the_screen_that_no_node_has_are_reported_with_their_place():
    tree = [tree_el("t1", ElementKind.TEXT, Rect(40, 200, 400, 260), "Settings")]
    seen = [seen_el("v1", ElementKind.TEXT, Rect(40, 200, 300, 260), "Settings"),
            seen_el("v2", ElementKind.TEXT, Rect(40, 900, 700, 960), "Terms of service apply")]
    [d] = compare(tree, seen, SIZE)
    assert d.kind == "only_on_screen" and d.rect == Rect(40, 900, 700, 960)
    assert "Terms of service apply" in d.detail


def test_tree_words_the_screen_does_not_show_are_reported():
    tree = [tree_el("t1", ElementKind.TEXT, Rect(40, 200, 400, 260), "Settings"),
            tree_el("t2", ElementKind.TEXT, Rect(40, 1200, 600, 1260), "Stale banner")]
    seen = [seen_el("v1", ElementKind.TEXT, Rect(40, 200, 300, 260), "Settings")]
    [d] = compare(tree, seen, SIZE)
    assert (d.kind, d.element_id) == ("only_in_tree", "t2") and "Stale banner" in d.detail


def test_tree_words_over_drawn_pixels_that_ocr_missed_are_not_blamed_on_the_tree():
    image = np.full((2400, 1080, 3), 255, np.uint8)
    image[1210:1250, 50:400] = 40  # something is written there; OCR just did not read it
    tree = [tree_el("t1", ElementKind.TEXT, Rect(40, 1200, 600, 1260), "0 items")]
    assert compare(tree, [], SIZE, image) == ()
    blank = np.full((2400, 1080, 3), 255, np.uint8)
    assert [d.kind for d in compare(tree, [], SIZE, blank)] == ["only_in_tree"]


def test_a_single_character_read_from_a_glyph_is_not_words_on_the_screen():
    seen = [seen_el("v1", ElementKind.TEXT, Rect(974, 125, 1039, 192), "Q")]  # the magnifier
    assert compare([], seen, SIZE) == ()


def test_different_words_at_one_place_are_a_text_mismatch_said_once():
    tree = [tree_el("t1", ElementKind.TEXT, Rect(40, 200, 400, 260), "Airplane mode")]
    seen = [seen_el("v1", ElementKind.TEXT, Rect(40, 200, 300, 260), "Battery saver")]
    [d] = compare(tree, seen, SIZE)
    assert d.kind == "text_mismatch" and "Airplane mode" in d.detail and "Battery saver" in d.detail


def test_a_tappable_node_without_a_name_over_a_recognised_icon_is_unnamed():
    tree = [tree_el("t1", ElementKind.BUTTON, Rect(900, 100, 1040, 220), clickable=True)]
    seen = [seen_el("v1", ElementKind.BUTTON, Rect(910, 110, 1030, 210), label="search")]
    [d] = compare(tree, seen, SIZE)
    assert d.kind == "unnamed_in_tree" and "search" in d.detail


def test_one_opaque_node_over_the_screen_accounts_for_nothing():
    """A WebView or canvas: the tree has one big node, the pixels a whole page."""
    tree = [tree_el("t1", ElementKind.IMAGE, Rect(0, 80, 1080, 2300))]
    seen = [seen_el("v1", ElementKind.TEXT, Rect(40, 200, 400, 260), "Wi-Fi"),
            seen_el("v2", ElementKind.SWITCH, Rect(900, 190, 1040, 270))]
    kinds = [d.kind for d in compare(tree, seen, SIZE)]
    assert kinds == ["only_on_screen", "only_on_screen"]


def test_system_bars_and_what_a_dialog_covers_are_not_compared():
    bar = seen_el("v0", ElementKind.STATUS_BAR, Rect(0, 0, 1080, 80))
    clock = seen_el("v1", ElementKind.TEXT, Rect(20, 10, 120, 70), "10:30")
    covered = Element("v2", ElementKind.TEXT, Rect(40, 900, 700, 960), text="Behind the dialog", covered=True)
    assert compare([], [bar, clock, covered], SIZE) == ()


class _Fixed:
    """A parser that returns the parse it was built with."""

    def __init__(self, fused: ScreenParse) -> None:
        from vision.config import PipelineConfig

        self.config = PipelineConfig()
        self.fused, self.calls = fused, 0

    def parse(self, screen: Screen, *args: object, **kwargs: object) -> ScreenParse:
        self.calls += 1
        return self.fused


def test_comparing_parser_adds_the_comparison_only_while_enabled(monkeypatch):
    xml = ('<hierarchy rotation="0"><node index="0" text="Stale banner" resource-id="" class="android.widget.TextView" '
           'package="p" content-desc="" checkable="false" checked="false" clickable="false" enabled="true" '
           'focusable="false" focused="false" scrollable="false" long-clickable="false" password="false" '
           'selected="false" bounds="[40,1200][600,1260]" /></hierarchy>')
    image = np.full((2400, 1080, 3), 255, np.uint8)
    fused = ScreenParse(SIZE, elements=(Element("1", ElementKind.TEXT, Rect(40, 1200, 600, 1260), "Stale banner"),),
                        timings=(StageTiming("tree", 1.0), StageTiming("total", 2.0)))
    base = _Fixed(fused)
    wanted = [False]
    parser = ComparingParser(base, lambda: wanted[0])

    class Pixels:
        def parse(self, screen: Screen) -> ScreenParse:
            assert screen.hierarchy_xml is None  # the pixels are read alone
            return ScreenParse(SIZE)

    monkeypatch.setattr(parser, "_pixel_parser", lambda: Pixels())
    screen = Screen(image=image, hierarchy_xml=xml)
    assert parser.parse(screen).disagreements == ()
    wanted[0] = True
    out = parser.parse(screen)
    assert [(d.kind, d.element_id) for d in out.disagreements] == [("only_in_tree", "1")]
    assert [t.stage for t in out.timings] == ["tree", "compare", "total"]
    assert parser.config is base.config  # everything else is the base parser's


@pytest.mark.slow
def test_an_opaque_app_on_the_virtual_phone_shows_its_screen_as_disagreements(shared_parser):
    """The count was 0 on screens where tree and pixels plainly differ: an app drawn as
    one opaque view (no children in the dump) must show what the pixels found."""
    from phone.virtual.noise import NoiseConfig
    from phone.virtual.phone import VirtualPhone
    from vision.config import PipelineConfig
    from vision.pipeline import ScreenParser

    phone = VirtualPhone(noise=NoiseConfig(opaque_packages=("*",)))
    phone.open_app("Settings")
    base = ScreenParser(PipelineConfig(mode="fusion", detector="cv", remember_previous=False),
                        ocr=shared_parser.ocr_backend())
    parse = ComparingParser(base, lambda: True).parse(phone.screenshot(with_hierarchy=True))
    words = " ".join(d.detail for d in parse.disagreements if d.kind == "only_on_screen")
    assert "Network & internet" in words and "Battery" in words
    clean = VirtualPhone()
    clean.open_app("Settings")
    agreed = ComparingParser(base, lambda: True).parse(clean.screenshot(with_hierarchy=True))
    assert len(agreed.disagreements) <= 2 < len(parse.disagreements)
