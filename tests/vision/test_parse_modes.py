"""One strategy per parse mode; OCR only where it adds something; OCR remembered by pixels."""

from __future__ import annotations

import numpy as np
import pytest

from tests.vision.conftest import settings_dump
from vision.config import PipelineConfig
from vision.geometry import Rect
from vision.ocr import incremental_read
from vision.ocr_cache import PixelCache
from vision.parse_modes import STRATEGIES, ParseJob, StageTimer, choose_mode
from vision.pipeline import ScreenParser
from vision.tree_text import mask_tree_text, named_icons
from vision.types import Element, ElementKind, Screen, TextSpan


class CountingOcr:
    """A stand-in engine that says where it was asked to look (and reads one word there)."""

    def __init__(self) -> None:
        self.calls: list[tuple[int, int]] = []

    def read(self, image: np.ndarray) -> list[TextSpan]:
        self.calls.append(image.shape[:2])
        return [TextSpan("word", Rect(1, 1, 9, 9), 0.99)]


def _job(mode: str, screen: Screen) -> ParseJob:
    return ParseJob(screen, PipelineConfig(mode=mode), ScreenParser(PipelineConfig(mode=mode)), StageTimer())


@pytest.mark.parametrize(("mode", "with_tree", "expected"), [
    ("auto", True, "fusion"), ("auto", False, "vision"), ("tree", True, "tree"), ("fusion", True, "fusion"),
    ("vision", True, "vision"), ("fusion", False, "vision"), ("tree", False, "vision"),
])
def test_each_mode_has_its_strategy_and_a_missing_tree_falls_back_to_pixels(settings_image, mode, with_tree, expected):
    screen = Screen(settings_image, hierarchy_xml=settings_dump() if with_tree else None)
    job = _job(mode, screen)
    strategy, tree = choose_mode(job)
    assert strategy is STRATEGIES[expected]
    assert (tree is not None) == (expected in ("tree", "fusion"))
    fell_back = mode in ("tree", "fusion") and not with_tree
    assert fell_back == any("pixels only" in w for w in job.warnings)


def test_the_pixel_cache_reads_each_distinct_image_once_and_forgets_the_oldest():
    engine = CountingOcr()
    cache = PixelCache(max_entries=2)
    a, b, c = (np.full((20, 30, 3), v, np.uint8) for v in (10, 20, 30))
    for img in (a, a.copy(), b, a, c, b, a):
        assert [s.text for s in cache.read(img, engine.read)] == ["word"]
    # a read, a hit, b read, a hit, c read (b, least recently used, goes), b read (a goes), a read
    assert len(engine.calls) == 5 and cache.hits == 2 and cache.misses == 5
    with pytest.raises(ValueError):
        PixelCache(0)


def test_after_a_tap_only_the_changed_row_is_read_again():
    engine = CountingOcr()
    before = np.full((400, 300, 3), 250, np.uint8)
    before[100:130, 20:200] = 30
    after = before.copy()
    after[300:340, 0:300] = 200  # the pressed row darkens
    first = engine.read(before)
    spans, change = incremental_read(engine, after, before, first)
    assert len(engine.calls) == 2 and engine.calls[1][0] < 200  # one band around the row, not the frame
    assert change.regions and all(r.top >= 240 for r in change.regions)  # nothing above the row
    assert any(s.rect.top >= 240 for s in spans) and any(s.rect.top < 10 for s in spans)  # new read + kept old


def test_icons_the_tree_names_are_masked_before_ocr_and_big_images_are_not():
    image = np.full((800, 400, 3), 255, np.uint8)
    image[10:50, 10:50] = 0  # an icon glyph
    image[100:500, 0:400] = 90  # a banner that may hold words of its own
    icon = Element("t1", ElementKind.BUTTON, Rect(10, 10, 50, 50), label="Search", clickable=True)
    banner = Element("t2", ElementKind.IMAGE, Rect(0, 100, 400, 500), label="Summer sale")
    worded_icon = Element("t3", ElementKind.BUTTON, Rect(60, 10, 100, 50), text="OK", label="Confirm")
    assert named_icons([icon, banner, worded_icon], image) == [icon]
    masked = mask_tree_text(image, [icon])
    assert masked[10:50, 10:50].std() == 0 and (masked[100:500] == image[100:500]).all()


def test_a_fused_parse_does_not_ask_the_engine_about_what_the_tree_already_says(settings_image):
    engine = CountingOcr()
    parser = ScreenParser(PipelineConfig(mode="fusion", detector="cv", icons="none", remember_previous=False), ocr=engine)
    parse = parser.parse(Screen(settings_image, hierarchy_xml=settings_dump()))
    assert [t.stage for t in parse.timings][:2] == ["tree", "ocr_tree_gaps"]
    assert any(s.text == "Wi-Fi" and s.confidence == 1.0 for s in parse.text_spans)  # the tree's word, not OCR's
    assert len(engine.calls) == 1
