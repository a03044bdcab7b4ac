"""Large and deep accessibility trees parse correctly (no element lost, none doubled), and the
spatial index and box statistics they rely on answer exactly what a full scan answers.
Timings are printed by bench/bench_vision.py --only trees, never asserted here."""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest

from tests.vision.large_trees import deep_dump, grid_dump
from vision.config import PipelineConfig
from vision.fusion import fuse
from vision.geometry import Point, Rect
from vision.hierarchy_read import MAX_DEPTH
from vision.pipeline import ScreenParser
from vision.spatial import GridIndex
from vision.tree_text import tree_spans, uniform_boxes, worded
from vision.types import Element, ElementKind, ElementSource, Screen

W, H = 1080, 2400


def _textured() -> np.ndarray:
    img = np.full((H, W, 3), 245, np.uint8)
    img[::7, :, :] = 40  # thin lines everywhere: no tree box is blank
    return img


def _parser(mode: str) -> ScreenParser:
    return ScreenParser(PipelineConfig(mode=mode, ocr="none", detector="none", icons="none", remember_previous=False))


@pytest.mark.parametrize("mode", ["tree", "fusion"])
def test_a_20k_node_list_keeps_every_visible_row_once(mode):
    xml, visible = grid_dump(20_000)
    parse = _parser(mode).parse(Screen(_textured(), hierarchy_xml=xml))
    texts = Counter(e.text for e in parse.elements if e.kind is ElementKind.TEXT)
    assert len(visible) > 2000
    missing = [t for t in visible if texts[t] == 0]
    doubled = [t for t in visible if texts[t] > 1]
    assert not missing and not doubled
    rows = [e for e in parse.elements if e.clickable and e.class_name.endswith("LinearLayout")]
    assert len(rows) == sum(t.startswith("Item ") for t in visible)
    assert all(0 <= e.rect.left <= e.rect.right <= W and 0 <= e.rect.top <= e.rect.bottom <= H for e in parse.elements)
    ids = [e.id for e in parse.elements]
    assert ids == [str(i + 1) for i in range(len(ids))]
    assert "Item 0" in parse.description


def test_fusing_a_large_tree_with_its_own_words_adds_nothing_and_notes_nothing():
    xml, _ = grid_dump(8_000)
    image = _textured()
    tree = list(_parser("tree").parse(Screen(image, hierarchy_xml=xml)).elements)
    spans = tree_spans(worded(tree, image))
    seen = [Element(f"v{i}", ElementKind.TEXT, s.rect, text=s.text, source=ElementSource.OCR) for i, s in enumerate(spans)]
    fused, notes = fuse(tree, seen, spans, image)
    assert len(spans) > 1000
    assert [e.id for e in fused] == [e.id for e in tree]
    assert not notes


def test_a_tree_deeper_than_the_reader_goes_is_cut_not_crashed():
    xml, levels = deep_dump(MAX_DEPTH + 200)
    parse = _parser("fusion").parse(Screen(_textured(), hierarchy_xml=xml))
    texts = {e.text for e in parse.elements}
    kept = [t for t in levels if t in texts]
    assert kept == levels[: len(kept)]  # the outer levels, in order, with no gap
    assert MAX_DEPTH - 10 <= len(kept) < len(levels)


def _random_rects(rng: random.Random, n: int) -> list[Rect]:
    out = []
    for _ in range(n):
        left, top = rng.randint(-50, W), rng.randint(-50, H)
        out.append(Rect(left, top, left + rng.choice([0, 1, 5, 40, 300, 1200]), top + rng.choice([0, 1, 8, 60, 900])))
    return out


def test_the_grid_index_answers_what_a_full_scan_answers():
    rng = random.Random(7)
    rects = _random_rects(rng, 800)
    index = GridIndex(list(range(len(rects))), lambda i: rects[i])
    for q in _random_rects(rng, 300):
        assert index.overlapping(q) == [i for i, r in enumerate(rects) if r.intersection(q) is not None]
        assert index.centred_in(q) == [i for i, r in enumerate(rects) if q.contains(r.center)]
        if not q.is_empty():
            assert index.containing(q) == [i for i, r in enumerate(rects) if r.contains_rect(q)]
        p = Point(max(0, q.left), max(0, q.top))
        assert index.at(p) == [i for i, r in enumerate(rects) if r.contains(p)]


def test_box_uniformity_matches_the_standard_deviation_of_the_pixels():
    rng = np.random.default_rng(3)
    image = np.full((300, 200, 3), 128, np.uint8)
    image[100:200, 50:150] = rng.integers(0, 255, (100, 100, 3), dtype=np.uint8)
    image[20:40, 10:60, 1] = 131  # a faint change in one channel only
    boxes = [Rect(0, 0, 40, 90), Rect(40, 90, 160, 210), Rect(0, 0, 200, 300), Rect(5, 15, 70, 45),
             Rect(150, 250, 150, 260), Rect(190, 290, 400, 400)]
    expected = []
    for r in boxes:
        crop = image[r.top : r.bottom, r.left : r.right]
        expected.append(crop.size == 0 or float(crop.reshape(-1, 3).std(axis=0).max()) < 2.0)
    assert uniform_boxes(image, boxes) == expected
    assert uniform_boxes(image, boxes, empty=False) == [e and r.area > 0 for e, r in zip(expected, boxes, strict=True)]


def test_many_boxes_are_judged_as_a_few_boxes_are():
    rng = np.random.default_rng(5)
    image = np.full((400, 300, 3), 200, np.uint8)
    image[50:350:3, 40:260] = rng.integers(0, 255, (100, 220, 3), dtype=np.uint8)
    rects = [Rect(int(x), int(y), int(x + w), int(y + h)) for x, y, w, h in
             zip(rng.integers(-20, 300, 600), rng.integers(-20, 400, 600), rng.integers(0, 120, 600), rng.integers(0, 90, 600), strict=True)]
    one_by_one = [flag for r in rects for flag in uniform_boxes(image, [r])]
    assert uniform_boxes(image, rects) == one_by_one
    assert 50 < sum(one_by_one) < 550  # both kinds are present
