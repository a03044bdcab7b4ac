"""Fusion lists each control once: a vision element repeating a tree node merges into it.

A duplicate pair is an element fusion added from the pixels and a tree element with the
same words whose boxes overlap.  Checked on the virtual phone's main screens (OCR and the
OpenCV detector against the phone's own uiautomator dump) and on hand-built cases.
"""

from __future__ import annotations

import pytest

from vision.config import PipelineConfig
from vision.fusion import fuse
from vision.geometry import Rect
from vision.pipeline import ScreenParser
from vision.types import Element, ElementKind, ElementSource, TextSpan

sim = pytest.importorskip("phone.virtual.phone", reason="the virtual phone is not available")

APPS = ("Settings", "Shop", "Calendar", "Contacts", "Clock", "Notes", "Messages")


def _norm(s: str) -> str:
    return " ".join(s.lower().split())


def duplicate_pairs(fused, tree) -> list[tuple[Element, Element]]:
    tree_boxes = {(e.rect, e.kind) for e in tree.elements}
    added = [e for e in fused.uncovered() if (e.rect, e.kind) not in tree_boxes]
    kept = [e for e in fused.uncovered() if (e.rect, e.kind) in tree_boxes]
    pairs = []
    for v in added:
        words = _norm(v.text or v.label)
        if not words:
            continue
        for t in kept:
            names = {_norm(t.text), _norm(t.label), *(_norm(p) for p in t.label.split(" · "))}
            if words in names and v.rect.intersection(t.rect) is not None:
                pairs.append((v, t))
    return pairs


@pytest.fixture(scope="module")
def parsers(shared_parser):
    fusion = ScreenParser(PipelineConfig(mode="fusion", detector="cv", remember_previous=False),
                          ocr=shared_parser.ocr_backend())
    return fusion, ScreenParser(PipelineConfig(mode="tree"))


@pytest.mark.parametrize("app", APPS)
def test_fusion_on_sim_screens_has_no_duplicate_pairs(parsers, app):
    fusion, tree_only = parsers
    phone = sim.VirtualPhone(profile="phone", seed=11)
    phone.open_app(app)
    screen = phone.screenshot(with_hierarchy=True)
    fused, tree = fusion.parse(screen), tree_only.parse(screen)
    pairs = duplicate_pairs(fused, tree)
    assert not pairs, [(v.display_name, v.rect, t.display_name, t.rect) for v, t in pairs]
    assert len({e.id for e in fused.elements}) == len(fused.elements)


def test_a_chip_read_by_ocr_merges_into_its_tree_node_and_keeps_the_tree_id():
    chip = Element("t4", ElementKind.BUTTON, Rect(100, 500, 420, 580), label="Vegetarian options", clickable=True)
    seen = Element("v9", ElementKind.BUTTON, Rect(80, 490, 460, 600), text="Vegetarian options", source=ElementSource.DETECTOR)
    text = TextSpan("Vegetarian options", Rect(130, 520, 400, 560))
    out, notes = fuse([chip], [seen], [text])
    assert [e.id for e in out] == ["t4"] and not notes


def test_a_wordless_tree_button_takes_the_words_of_its_vision_twin():
    icon = Element("t2", ElementKind.BUTTON, Rect(10, 10, 60, 60), clickable=True)
    seen = Element("v1", ElementKind.BUTTON, Rect(12, 12, 58, 58), label="search", source=ElementSource.DETECTOR)
    out, notes = fuse([icon], [seen], [])
    assert [(e.id, e.label) for e in out] == [("t2", "search")] and not notes


def test_real_gaps_are_still_reported():
    title = Element("t1", ElementKind.TEXT, Rect(10, 10, 200, 40), text="Inbox")
    banner = Element("v3", ElementKind.BUTTON, Rect(10, 300, 300, 360), text="Try Premium", source=ElementSource.DETECTOR)
    out, notes = fuse([title], [banner], [TextSpan("Try Premium", Rect(20, 310, 280, 350))])
    assert [n.kind for n in notes] == ["missing_in_tree"] and len(out) == 2
    covered = Element("v4", ElementKind.BUTTON, Rect(10, 400, 300, 460), text="Behind", covered=True)
    _, notes = fuse([title], [covered], [])
    assert notes == []  # under a dialog: not a gap in the tree
