"""The OpenCV detector on drawn screens: icons inside outlined cards and bars, and sliders.

Screens are drawn with OpenCV at 1080x1920; text is given as OCR spans (the detector masks
their boxes), so no OCR model runs here.
"""

import cv2
import numpy as np

from vision.detect import CvDetector
from vision.geometry import Point, Rect
from vision.types import ElementKind, TextSpan

W, H = 1080, 1920
INK = (60, 60, 60)


def _blank() -> np.ndarray:
    return np.full((H, W, 3), 255, np.uint8)


def _found_at(dets, x: int, y: int) -> list:
    return [d for d in dets if d.rect.contains(Point(x, y))]


def _card_with_icons() -> tuple[np.ndarray, list[TextSpan]]:
    """A tile outlined in grey, a divider across it, a disc icon resting on the divider and a
    square icon touching the tile's right edge, and four lines of text (a card, not a button)."""
    img = _blank()
    cv2.rectangle(img, (60, 400), (520, 900), INK, 4)
    cv2.line(img, (60, 700), (520, 700), INK, 3)
    cv2.circle(img, (150, 668), 30, INK, -1)  # touches the divider
    cv2.rectangle(img, (440, 560), (520, 620), INK, -1)  # touches the outline
    spans = [TextSpan(t, Rect(100, y, 300, y + 40)) for t, y in (("Kitchen", 420), ("24", 470), ("Cool", 750), ("Auto", 820))]
    return img, spans


def test_icons_drawn_against_a_card_outline_or_divider_are_found():
    img, spans = _card_with_icons()
    dets = CvDetector().detect(img, spans)
    assert _found_at(dets, 150, 668), dets  # the disc on the divider
    assert _found_at(dets, 480, 590), dets  # the square on the outline
    assert not any(d.rect.contains_rect(Rect(60, 400, 520, 900)) for d in dets), "the card itself is not a widget"


def test_an_icon_inside_a_full_width_app_bar_is_found():
    img = _blank()
    cv2.rectangle(img, (0, 60), (W - 1, 220), INK, 4)  # an outlined app bar across the screen
    cv2.rectangle(img, (30, 100), (110, 180), INK, -1)  # a back button touching nothing but the bar's inside
    cv2.line(img, (110, 140), (150, 140), INK, 4)  # ... joined to the bar's outline by a stroke
    cv2.line(img, (0, 140), (30, 140), INK, 4)
    spans = [TextSpan("Schedule 1", Rect(400, 110, 680, 170))]
    dets = CvDetector().detect(img, spans)
    assert _found_at(dets, 70, 140), dets
    assert not any(d.kind is ElementKind.BUTTON and d.rect.width > 0.9 * W for d in dets), "the bar is not one button"


def test_a_slider_with_a_knob_is_a_seek_bar_and_a_plain_bar_is_not():
    img = _blank()
    cv2.rectangle(img, (200, 800), (900, 808), INK, -1)  # track
    cv2.circle(img, (480, 804), 26, INK, -1)  # knob
    cv2.rectangle(img, (200, 1300), (900, 1326), INK, -1)  # a thick rule: no knob
    dets = CvDetector().detect(img, [])
    seek = [d for d in dets if d.kind is ElementKind.SEEK_BAR]
    assert len(seek) == 1 and seek[0].rect.contains_rect(Rect(220, 800, 880, 808)), dets
    assert not _found_at([d for d in dets if d.kind is ElementKind.SEEK_BAR], 550, 1313)
