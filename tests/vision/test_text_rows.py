"""Flat rows are left out before text detection, and what is read lands back where it was."""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw

from tests.vision.conftest import font
from vision.geometry import Rect
from vision.ocr import RapidOcrBackend
from vision.text_rows import MARGIN, Band, ink_bands, stack, unstack
from vision.types import TextSpan


def _screen() -> np.ndarray:
    im = Image.new("RGB", (540, 1200), (250, 250, 250))
    d = ImageDraw.Draw(im)
    d.text((30, 100), "Battery saver", font=font(30), fill=(20, 20, 20))
    d.line([0, 400, 540, 400], fill=(200, 200, 200), width=2)  # a divider: no text, no band
    d.text((30, 900), "Storage used 42%", font=font(30), fill=(20, 20, 20))
    return np.asarray(im, dtype=np.uint8).copy()


def test_bands_cover_the_written_rows_with_a_margin_and_skip_the_rest():
    bands = ink_bands(_screen())
    assert len(bands) == 2
    assert 100 - 2 * MARGIN <= bands[0].top < 100 and 130 <= bands[0].bottom < 400
    assert bands[1].top > 400 and bands[1].top <= 900 and bands[1].bottom >= 925
    assert [b.at for b in bands] == [0, bands[0].height]
    assert ink_bands(np.full((50, 50, 3), 7, np.uint8)) == []


def test_spans_read_on_the_stack_go_back_to_their_rows():
    bands = [Band(100, 140, 0), Band(880, 940, 40)]
    stacked = stack(_screen(), bands)
    assert stacked.shape[0] == 100
    back = unstack([TextSpan("a", Rect(30, 5, 200, 35), 0.99), TextSpan("b", Rect(30, 50, 250, 90), 0.98)], bands)
    assert [(s.text, s.rect.top, s.rect.bottom) for s in back] == [("a", 105, 135), ("b", 890, 930)]


def test_reading_only_the_written_rows_finds_the_same_words_in_the_same_places():
    image = _screen()
    ocr = RapidOcrBackend(0.9, 960)
    rows = ocr.read(image, written_rows_only=True)
    whole = ocr.read(image)
    assert sorted(s.text for s in rows) == sorted(s.text for s in whole) == ["Battery saver", "Storage used 42%"]
    for a, b in zip(sorted(rows, key=lambda s: s.text), sorted(whole, key=lambda s: s.text), strict=True):
        assert a.rect.iou(b.rect) > 0.8
