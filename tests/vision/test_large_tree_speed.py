"""The shortcuts that make a 20k-node tree parse fast give exactly what the plain way gives:
off-screen subtrees are counted but never built, box statistics and border colours are
worked out in batches, tab columns and hues are found with less work, ids are renamed
without ``dataclasses.replace``.  Work is measured in counts (nodes built), never seconds;
bench/bench_vision.py --only trees prints the timings."""

from __future__ import annotations

import random
from dataclasses import replace

import numpy as np
import pytest

import vision.hierarchy as hierarchy
import vision.hierarchy_read as hierarchy_read
from tests.vision.large_trees import deep_dump, grid_dump
from vision.blocks import _hue_signatures, _tab_items, hue_signature
from vision.geometry import Point, Rect, Size
from vision.hierarchy import clean_tree, parse_uiautomator, tree_to_parse
from vision.hierarchy_read import read_uiautomator_xml
from vision.pipeline import _renamed
from vision.spatial import GridIndex
from vision.tree_text import mask_tree_text, uniform_boxes
from vision.types import Element, ElementKind, ElementSource

SCREEN = Size(1080, 2400)


def _every_node_read(xml: str, screen: Size):
    """The plain way: build every node, then let the cleaning drop what lies off the screen."""
    roots, _ = read_uiautomator_xml(xml)
    total = hierarchy._count(roots)
    return tree_to_parse(clean_tree(roots, screen), screen), total


@pytest.mark.parametrize("xml", [grid_dump(20_000)[0], grid_dump(3_000, columns=3)[0], deep_dump(500)[0],
                                 grid_dump(400, height=900)[0]], ids=["20k", "3k-3-columns", "deep", "short-screen"])
def test_skipping_off_screen_subtrees_gives_the_parse_of_reading_every_node(xml):
    plain, total = _every_node_read(xml, SCREEN)
    fast = parse_uiautomator(xml, SCREEN)
    assert fast.elements == plain.elements
    assert fast.blocks == plain.blocks
    assert fast.node_count == total  # the skipped nodes are still counted


def test_nodes_below_the_screen_are_counted_but_never_built(monkeypatch):
    built = 0
    make = hierarchy_read._node_from_attrib

    def counting(*args, **kwargs):
        nonlocal built
        built += 1
        return make(*args, **kwargs)

    monkeypatch.setattr(hierarchy_read, "_node_from_attrib", counting)
    counts = {}
    for n in (20_000, 50_000):
        built = 0
        parse = parse_uiautomator(grid_dump(n)[0], SCREEN)
        counts[n] = (built, parse.node_count, len(parse.elements))
    assert counts[20_000][1] == 20_003 and counts[50_000][1] == 50_003
    # the same screenful of rows: the same nodes built, however long the list runs on below
    assert counts[20_000][0] == counts[50_000][0] <= counts[20_000][2] + 10


def test_a_screen_of_unknown_size_still_reads_every_node():
    xml, _ = grid_dump(2_000)
    plain, total = _every_node_read(xml, Size(0, 0))
    roots, _ = read_uiautomator_xml(xml)
    fast = parse_uiautomator(xml, Size(0, 0))
    assert fast.elements == tree_to_parse(clean_tree(roots, hierarchy._infer_size(roots)),
                                          hierarchy._infer_size(roots)).elements
    assert fast.node_count == total


def _naive_uniform(image: np.ndarray, rects: list[Rect], empty: bool) -> list[bool]:
    """Whole-number sums of each box, then the mean-of-squares formula the tables use."""
    h, w = image.shape[:2]
    out = []
    for r in rects:
        left, right = min(max(r.left, 0), w), min(max(r.right, 0), w)
        top, bottom = min(max(r.top, 0), h), min(max(r.bottom, 0), h)
        crop = image[top:bottom, left:right].reshape(-1, 3).astype(np.int64)
        n = float(len(crop))
        if n == 0:
            out.append(empty)
            continue
        mean = crop.sum(axis=0) / n
        var = np.maximum((crop * crop).sum(axis=0) / n - mean * mean, 0.0)
        out.append(bool(np.sqrt(var).max() < 2.0))
    return out


def test_box_statistics_agree_whichever_way_they_are_summed():
    rng = random.Random(11)
    image = np.full((200, 300, 3), 100, np.uint8)
    image[::2, :, 1] = 102  # rows alternating 102 / 98: a standard deviation of exactly 2
    image[1::2, :, 1] = 98
    image[60:120, 150:250] = np.random.default_rng(2).integers(0, 255, (60, 100, 3), dtype=np.uint8)
    rects = [Rect(x, y, x + rng.choice([0, 1, 2, 7, 60, 400]), y + rng.choice([0, 1, 2, 5, 40, 300]))
             for x, y in ((rng.randint(-20, 300), rng.randint(-20, 200)) for _ in range(120))]
    for empty in (True, False):
        expected = _naive_uniform(image, rects, empty)
        assert uniform_boxes(image, rects, empty=empty, summed=True) == expected
        assert uniform_boxes(image, rects * 5, empty=empty)[: len(rects)] == expected  # the frame-wide tables
    assert 10 < sum(expected) < 110


def _naive_mask(image: np.ndarray, elements: list[Element]) -> np.ndarray:
    out = image.copy()
    h, w = image.shape[:2]
    for e in elements:
        r = e.rect
        top, bottom, left, right = max(0, r.top), min(h, r.bottom), max(0, r.left), min(w, r.right)
        if bottom - top < 2 or right - left < 2:
            continue
        step = max(1, (right - left + bottom - top) // 64)
        border = np.concatenate([image[top, left:right:step], image[bottom - 1, left:right:step],
                                 image[top:bottom:step, left], image[top:bottom:step, right - 1]])
        out[top:bottom, left:right] = np.median(border, axis=0).astype(np.uint8)
    return out


def test_boxes_of_one_size_are_masked_as_one_at_a_time_would_be():
    rng = random.Random(5)
    image = np.random.default_rng(5).integers(0, 256, (400, 300, 3), dtype=np.uint8)
    sizes = [(37, 12), (37, 12), (120, 40), (3, 2), (1, 30)]
    elements = []
    for i in range(300):
        w, h = rng.choice(sizes) if i % 3 else (rng.randint(0, 200), rng.randint(0, 200))
        x, y = rng.randint(-40, 300), rng.randint(-40, 400)
        elements.append(Element(f"e{i}", ElementKind.TEXT, Rect(x, y, x + w, y + h), text="w"))
    assert np.array_equal(mask_tree_text(image, elements), _naive_mask(image, elements))  # overlaps painted in order


def _naive_columns(items: list[Element]) -> list[Element]:
    cols: list[Element] = []
    for m in sorted(items, key=lambda m: (m.kind is not ElementKind.BUTTON, m.rect.left)):
        if any(abs(m.rect.center.x - c.rect.center.x) < max(m.rect.width, c.rect.width) * 0.5 for c in cols):
            continue
        cols.append(m)
    return sorted(cols, key=lambda m: m.rect.left)


def test_tab_columns_found_by_bisection_are_those_a_full_comparison_finds():
    rng = random.Random(3)
    for _ in range(500):
        items = []
        for i in range(rng.randint(0, 40)):
            left, width = rng.randint(-20, 1080), rng.choice([0, 1, 2, 3, 45, 100, 300, rng.randint(0, 500)])
            kind = rng.choice([ElementKind.BUTTON, ElementKind.TEXT, ElementKind.IMAGE])
            items.append(Element(f"e{i}", kind, Rect(left, 0, left + width, 10)))
        assert [e.id for e in _tab_items(items)] == [e.id for e in _naive_columns(items)]


def test_hues_of_a_tab_row_read_from_one_conversion_equal_each_box_read_alone():
    rng = random.Random(9)
    image = np.random.default_rng(9).integers(0, 255, (300, 500, 3), dtype=np.uint8)
    image[:100] = (30, 120, 220)
    for _ in range(100):
        rects = [Rect(x, y, x + rng.randint(0, 120), y + rng.randint(0, 60))
                 for x, y in ((rng.randint(-10, 480), rng.randint(-10, 290)) for _ in range(rng.randint(0, 8)))]
        together = _hue_signatures(image, rects)
        alone = [hue_signature(image, r) for r in rects]
        assert len(together) == len(alone) and all(np.array_equal(a, b) for a, b in zip(together, alone, strict=True))


def test_a_renamed_element_differs_from_the_original_in_its_id_only():
    e = Element("t7", ElementKind.SWITCH, Rect(1, 2, 3, 4), text="Wi-Fi", label="net", resource_id="r", class_name="c",
                clickable=True, checkable=True, checked=True, selected=True, enabled=False, focused=True, scrollable=True,
                password=True, source=ElementSource.FUSED, confidence=0.5, covered=True)
    assert _renamed(e, "3") == replace(e, id="3")


def test_the_grid_index_treats_empty_boxes_and_single_cells_as_a_full_scan_does():
    rng = random.Random(21)
    rects = [Rect(x, y, x + rng.choice([0, 0, 1, 3, 20]), y + rng.choice([0, 1, 4, 20]))
             for x, y in ((rng.randint(0, 200), rng.randint(0, 200)) for _ in range(400))]
    index = GridIndex(list(range(len(rects))), lambda i: rects[i], cell=16)
    for _ in range(300):
        x, y = rng.randint(-5, 210), rng.randint(-5, 210)
        q = Rect(x, y, x + rng.choice([0, 1, 2, 15, 16, 40]), y + rng.choice([0, 1, 16, 33]))
        assert index.overlapping(q) == [i for i, r in enumerate(rects) if r.intersection(q) is not None]
        assert index.centred_in(q) == [i for i, r in enumerate(rects) if q.contains(r.center)]
        if not q.is_empty():  # an empty query is looked up from its corner's cell only
            assert index.containing(q) == [i for i, r in enumerate(rects) if r.contains_rect(q)]
        assert index.at(Point(x, y)) == [i for i, r in enumerate(rects) if r.contains(Point(x, y))]
