"""One OCR line holding labels parted by wide gaps (a tab strip) becomes one span per label."""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw

from tests.vision.conftest import font
from vision.geometry import Rect
from vision.text_split import split_wide_gaps
from vision.types import TextSpan


def _strip(labels: list[tuple[int, str]]) -> np.ndarray:
    im = Image.new("RGB", (1080, 200), (255, 255, 255))
    d = ImageDraw.Draw(im)
    for x, words in labels:
        d.text((x, 70), words, font=font(44), fill=(30, 30, 30))
    return np.asarray(im, dtype=np.uint8).copy()


def test_a_line_of_tab_labels_parted_by_wide_gaps_is_split_into_one_span_each():
    image = _strip([(40, "Chats"), (420, "Flagged"), (800, "Unread")])
    line = TextSpan("Chats Flagged Unread", Rect(35, 65, 970, 125), 0.97)
    spans = split_wide_gaps(image, [line])
    assert [s.text for s in spans] == ["Chats", "Flagged", "Unread"]
    assert spans[1].rect.left > 400 and spans[1].rect.right < 700
    assert all(s.confidence == 0.97 for s in spans)


def test_words_of_one_label_stay_together():
    image = _strip([(40, "Add recovery info")])
    line = TextSpan("Add recovery info", Rect(35, 65, 500, 125))
    assert split_wide_gaps(image, [line]) == [line]


def test_a_label_beside_a_wide_gap_keeps_its_words_when_they_cannot_be_shared_out():
    image = _strip([(40, "Two words"), (900, "x")])
    line = TextSpan("Two", Rect(35, 65, 930, 125))  # one word read for both marks: nothing to share
    assert split_wide_gaps(image, [line]) == [line]
