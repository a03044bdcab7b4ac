"""Pixel-only parses: marks drawn on a faintly tinted shape the detector cannot see (a white
face on an off-white page) are parts of a drawing, not buttons; icons on a pale card, and
one glyph on a pale disc, stay."""

from __future__ import annotations

import cv2
import numpy as np

from vision.geometry import Rect
from vision.phantoms import split_phantoms
from vision.types import Element, ElementKind, ElementSource

W, H = 540, 960
PAGE, PALE = (248, 248, 248), (255, 255, 255)
INK = (60, 60, 60)


def _found(eid: str, rect: Rect, *, label: str = "") -> Element:
    return Element(eid, ElementKind.BUTTON, rect, label=label, source=ElementSource.DETECTOR, clickable=True)


def _page() -> np.ndarray:
    return np.full((H, W, 3), PAGE, np.uint8)


def _ids(elements: list[Element]) -> set[str]:
    return {e.id for e in elements}


def _face(image: np.ndarray) -> list[Element]:
    """A white disc with two dark eyes and a mouth; the detector's finds are 48 dp targets round them."""
    cv2.circle(image, (270, 440), 87, PALE, -1)
    cv2.circle(image, (235, 426), 10, INK, -1)
    cv2.circle(image, (302, 426), 10, INK, -1)
    cv2.ellipse(image, (269, 478), (16, 8), 0, 0, 180, INK, 3)
    return [_found("eye1", Rect(204, 395, 267, 458)), _found("eye2", Rect(271, 394, 334, 457)),
            _found("mouth", Rect(238, 447, 301, 510))]


def test_marks_on_a_faint_drawn_shape_are_parts_of_a_drawing():
    image = _page()
    parts = _face(image)
    save = _found("save", Rect(100, 700, 440, 760), label="Save")
    real, phantoms = split_phantoms(image, [*parts, save])
    assert _ids(real) == {"save"}
    assert {p.cue for p in phantoms} == {"inside a faint drawing"}


def test_icons_on_a_pale_card_are_kept():
    image = _page()
    cv2.rectangle(image, (60, 380), (480, 520), PALE, -1)
    cv2.circle(image, (200, 450), 12, INK, -1)
    cv2.circle(image, (340, 450), 12, INK, -1)
    icons = [_found("a", Rect(168, 418, 232, 482)), _found("b", Rect(308, 418, 372, 482))]
    real, _ = split_phantoms(image, icons)
    assert _ids(real) == {"a", "b"}


def test_one_glyph_on_a_pale_disc_is_kept():
    image = _page()
    cv2.circle(image, (270, 440), 60, PALE, -1)
    cv2.circle(image, (270, 440), 12, INK, -1)
    real, _ = split_phantoms(image, [_found("g", Rect(238, 408, 302, 472))])
    assert _ids(real) == {"g"}


def test_marks_on_the_page_itself_are_not_judged_by_this_cue():
    image = _page()
    cv2.circle(image, (200, 450), 12, INK, -1)
    cv2.circle(image, (340, 450), 12, INK, -1)
    icons = [_found("a", Rect(168, 418, 232, 482)), _found("b", Rect(308, 418, 372, 482))]
    real, _ = split_phantoms(image, icons)
    assert _ids(real) == {"a", "b"}
