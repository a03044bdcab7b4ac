import json
import time

import pytest

from tests.vision.conftest import node, settings_dump
from vision.errors import HierarchyError
from vision.geometry import Rect, Size
from vision.hierarchy import parse_rico, parse_uiautomator
from vision.types import ElementKind

SCREEN = Size(540, 1200)


def test_dump_becomes_elements_with_kinds_text_and_state():
    p = parse_uiautomator(settings_dump(wifi_on=True), SCREEN)
    texts = [e.text for e in p.elements if e.text]
    assert "Wi-Fi" in texts and "Settings" in texts
    switches = [e for e in p.elements if e.kind is ElementKind.SWITCH]
    assert [s.checked for s in switches] == [True, False]


def test_invisible_and_offscreen_nodes_are_dropped():
    p = parse_uiautomator(settings_dump(), SCREEN)
    texts = {e.text for e in p.elements}
    assert "Ghost" not in texts
    assert "Below the screen" not in texts


def test_clickable_row_without_text_is_named_by_its_children():
    p = parse_uiautomator(settings_dump(), SCREEN)
    rows = [e for e in p.elements if e.kind is ElementKind.BUTTON and e.class_name.endswith("LinearLayout")]
    assert rows and rows[0].label.startswith("Wi-Fi")


def test_empty_container_chains_collapse():
    chain = node("android.widget.TextView", "[10,10][100,50]", text="Deep")
    for _ in range(50):
        chain = node("android.widget.FrameLayout", "[0,0][540,1200]", chain)
    p = parse_uiautomator(f"<hierarchy>{chain}</hierarchy>", SCREEN)
    assert [e.text for e in p.elements] == ["Deep"]
    assert p.node_count == 51


def test_partly_offscreen_boxes_are_clamped_to_the_screen():
    xml = "<hierarchy>" + node("android.widget.Button", "[500,1100][700,1300]", text="Edge", clickable="true") + "</hierarchy>"
    (e,) = parse_uiautomator(xml, SCREEN).elements
    assert e.rect == Rect(500, 1100, 540, 1200)


@pytest.mark.parametrize("bad", ["", "   ", "<hierarchy><node", "not xml at all", None, "<hierarchy></hierarchy>"])
def test_malformed_or_empty_dump_gives_empty_parse_with_warning(bad):
    p = parse_uiautomator(bad, SCREEN)
    assert p.elements == ()
    assert p.warnings


def test_strict_mode_raises_a_clear_error_on_garbage():
    with pytest.raises(HierarchyError):
        parse_uiautomator("<<<", SCREEN, strict=True)


def test_shell_noise_around_the_xml_is_tolerated():
    xml = "UI hierchary dumped to: /dev/tty\n" + settings_dump() + "\n"
    assert parse_uiautomator(xml, SCREEN).elements


def test_ten_thousand_nodes_parse_without_crash():
    # the time it takes is measured by bench/bench_vision.py (timings are never asserted here)
    kids = "".join(node("android.widget.TextView", f"[0,{i % 1200}][100,{i % 1200 + 10}]", text=f"t{i}") for i in range(10_000))
    xml = "<hierarchy>" + node("android.widget.FrameLayout", "[0,0][540,1200]", kids) + "</hierarchy>"
    p = parse_uiautomator(xml, SCREEN)
    assert len(p.elements) == 10_000


def test_deeply_nested_dump_does_not_overflow_the_stack():
    chain = node("android.widget.TextView", "[10,10][100,50]", text="Bottom")
    for i in range(3000):
        chain = node("android.widget.FrameLayout", "[0,0][540,1200]", chain, clickable="true" if i % 2 else "false")
    p = parse_uiautomator(f"<hierarchy>{chain}</hierarchy>", SCREEN)
    assert isinstance(p.elements, tuple)


def test_normal_screen_tree_parse_is_well_under_30_ms():
    xml = settings_dump()
    parse_uiautomator(xml, SCREEN)
    t0 = time.perf_counter()
    for _ in range(20):
        parse_uiautomator(xml, SCREEN)
    assert (time.perf_counter() - t0) / 20 < 0.03


def test_rico_json_is_scaled_to_the_screenshot():
    data = {"activity": {"root": {"class": "android.widget.FrameLayout", "bounds": [0, 0, 1440, 2560], "visible-to-user": True,
            "children": [{"class": "android.widget.Button", "text": "OK", "clickable": True, "visible-to-user": True,
                          "bounds": [100, 200, 500, 400], "content-desc": [None]},
                         {"class": "android.widget.TextView", "text": "hidden", "visible-to-user": False, "bounds": [0, 0, 10, 10]}]}}}
    p = parse_rico(json.loads(json.dumps(data)), Size(1080, 1920))
    (ok,) = p.elements
    assert ok.text == "OK" and ok.kind is ElementKind.BUTTON
    assert ok.rect == Rect(75, 150, 375, 300)


def test_rico_json_without_root_gives_warning():
    p = parse_rico({"foo": 1}, Size(1080, 1920))
    assert p.elements == () and p.warnings
