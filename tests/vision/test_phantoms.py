"""Pixel-only parses offer only what a person could tap: pictures and blank marks are not elements."""

from __future__ import annotations

import cv2
import numpy as np

from vision.config import PipelineConfig
from vision.detect import Detection
from vision.geometry import Rect
from vision.occlusion import pixel_occluder
from vision.phantoms import blank_mark, picture_bands, split_phantoms
from vision.pipeline import ScreenParser
from vision.types import Element, ElementKind, ElementSource, Screen, TextSpan

W, H = 1080, 1920


def _text(eid: str, rect: Rect, words: str = "words") -> Element:
    return Element(eid, ElementKind.TEXT, rect, text=words, source=ElementSource.OCR)


def _found(eid: str, kind: ElementKind, rect: Rect, *, text: str = "", label: str = "") -> Element:
    return Element(eid, kind, rect, text=text, label=label, source=ElementSource.DETECTOR, clickable=kind is ElementKind.BUTTON)


def _ids(elements: list[Element]) -> set[str]:
    return {e.id for e in elements}


def _illustration(image: np.ndarray, box: Rect, seed: int = 3) -> None:
    """A photo-like picture: a lit gradient with noise, shapes and text running off the left edge."""
    rng = np.random.default_rng(seed)
    h, w = box.height, box.width
    yy, xx = np.mgrid[0:h, 0:w]
    base = 150 + 60 * np.sin(xx / 90.0) * np.cos(yy / 70.0)
    pic = np.stack([base, base * 0.9 + 20, base * 0.7], axis=2) + rng.normal(0, 6, (h, w, 3))
    pic = np.clip(pic, 0, 255).astype(np.uint8)
    cv2.circle(pic, (w // 2, h // 2), 90, (240, 200, 40), -1)
    cv2.circle(pic, (w // 2 - 30, h // 2 - 20), 12, (30, 30, 30), -1)
    cv2.circle(pic, (w // 2 + 30, h // 2 - 20), 12, (30, 30, 30), -1)
    for k in range(4):
        cv2.putText(pic, "ausgezeichnet fur", (-60, 60 + 70 * k), cv2.FONT_HERSHEY_SIMPLEX, 1.3, (40, 40, 40), 3)
    image[box.top : box.bottom, box.left : box.right] = pic


def test_text_cut_by_the_screen_edge_on_several_lines_is_a_picture_and_offers_nothing_to_tap():
    image = np.full((H, W, 3), 250, np.uint8)
    _illustration(image, Rect(0, 200, W, 700))
    lines = [_text(f"t{k}", Rect(0, 230 + 70 * k, 300, 270 + 70 * k), "ausgezeichnet fur") for k in range(4)]
    eye = _found("b1", ElementKind.BUTTON, Rect(470, 380, 530, 440))  # a drawn face's eye, read as a button
    ui = _text("u1", Rect(48, 900, 400, 950), "Settings")
    save = _found("b2", ElementKind.BUTTON, Rect(48, 1000, 400, 1100), text="Save")
    real, phantoms = split_phantoms(image, [*lines, eye, ui, save])
    assert _ids(real) == {"u1", "b2"}
    assert {p.cue for p in phantoms} == {"picture text", "inside a picture"}


def test_two_cut_lines_are_a_long_title_not_a_picture():
    lines = [_text("t1", Rect(0, 300, 900, 350)), _text("t2", Rect(0, 350, 700, 400))]
    assert picture_bands(lines, W) == []


def test_cut_lines_far_apart_are_not_one_picture():
    lines = [_text(f"t{k}", Rect(0, 100 + 400 * k, 300, 140 + 400 * k)) for k in range(3)]
    assert picture_bands(lines, W) == []


def test_details_inside_a_drawn_image_are_not_buttons_but_a_named_icon_on_it_stays():
    image = np.full((H, W, 3), 250, np.uint8)
    _illustration(image, Rect(200, 400, 800, 1000))
    drawing = _found("i1", ElementKind.IMAGE, Rect(200, 400, 800, 1000))
    eye = _found("b1", ElementKind.BUTTON, Rect(450, 600, 520, 670))
    dots = _found("p1", ElementKind.PAGE_INDICATOR, Rect(300, 800, 420, 830))
    play = _found("b2", ElementKind.BUTTON, Rect(460, 660, 540, 740), label="play")
    real, phantoms = split_phantoms(image, [drawing, eye, dots, play])
    assert _ids(real) == {"i1", "b2"}
    assert {p.cue for p in phantoms} == {"part of a drawing"}


def test_a_button_with_no_visible_mark_on_a_gradient_is_a_phantom():
    yy = np.linspace(60, 140, H, dtype=np.float32)[:, None, None]
    image = np.broadcast_to(yy, (H, W, 3)).astype(np.uint8).copy()
    ghost = _found("b1", ElementKind.BUTTON, Rect(100, 900, 226, 1026))
    assert blank_mark(image, ghost.rect)
    real, phantoms = split_phantoms(image, [ghost])
    assert real == [] and phantoms[0].cue == "blank mark"


def test_a_flat_button_with_a_word_or_an_icon_is_kept():
    image = np.full((H, W, 3), 255, np.uint8)
    cv2.rectangle(image, (100, 900), (500, 1020), (33, 150, 243), -1)
    cv2.putText(image, "OK", (260, 980), cv2.FONT_HERSHEY_SIMPLEX, 2, (255, 255, 255), 4)
    cv2.circle(image, (700, 960), 24, (60, 60, 60), 4)  # a glyph: a ring
    worded = _found("b1", ElementKind.BUTTON, Rect(100, 900, 500, 1020), text="OK")
    icon = _found("b2", ElementKind.BUTTON, Rect(637, 897, 763, 1023))
    real, phantoms = split_phantoms(image, [worded, icon])
    assert _ids(real) == {"b1", "b2"} and phantoms == []


def test_an_outline_icon_with_an_empty_middle_is_a_visible_mark():
    image = np.full((H, W, 3), 250, np.uint8)
    shield = np.array([[28, 4], [52, 14], [50, 44], [28, 64], [6, 44], [4, 14]], np.int32) + [46, 1348]
    cv2.polylines(image, [shield], True, (90, 90, 90), 3)
    real, phantoms = split_phantoms(image, [_found("i1", ElementKind.IMAGE, Rect(46, 1348, 102, 1414))])
    assert _ids(real) == {"i1"} and phantoms == []


def test_tree_elements_and_system_bars_are_never_judged():
    image = np.full((H, W, 3), 128, np.uint8)
    tree = Element("h1", ElementKind.BUTTON, Rect(100, 900, 226, 1026), source=ElementSource.HIERARCHY)
    bar = _found("s1", ElementKind.STATUS_BAR, Rect(0, 0, W, 60))
    real, _ = split_phantoms(image, [tree, bar])
    assert _ids(real) == {"h1", "s1"}


class _FixedDetector:
    def __init__(self, dets: list[Detection]) -> None:
        self.dets = dets

    def detect(self, image: np.ndarray, texts=()) -> list[Detection]:
        return list(self.dets)


class _NoWords:
    def read(self, image: np.ndarray) -> list[TextSpan]:
        return []


def test_a_pixel_only_parse_of_an_illustration_offers_no_tappable_elements():
    image = np.full((H, W, 3), 250, np.uint8)
    _illustration(image, Rect(200, 400, 800, 1000))
    dets = [Detection(ElementKind.IMAGE, Rect(200, 400, 800, 1000)), Detection(ElementKind.BUTTON, Rect(450, 600, 520, 670)),
            Detection(ElementKind.BUTTON, Rect(560, 600, 630, 670))]
    config = PipelineConfig(mode="vision", icons="none", remember_previous=False, blocks=False)
    parse = ScreenParser(config, ocr=_NoWords(), detector=_FixedDetector(dets)).parse(Screen(image))
    assert not [e for e in parse.elements if e.clickable]
    assert any(t.stage == "phantoms" for t in parse.timings)


def test_a_dark_dialog_on_a_dimmed_page_covers_the_page():
    image = np.full((H, W, 3), 60, np.uint8)  # a white page under a heavy scrim
    for y in range(300, 1700, 160):  # the dimmed page's own rows and words
        cv2.rectangle(image, (40, y), (1040, y + 110), (95, 95, 95), -1)
        cv2.putText(image, "Monday", (80, y + 80), cv2.FONT_HERSHEY_SIMPLEX, 2, (30, 30, 30), 4)
    cv2.rectangle(image, (300, 600), (780, 1220), (15, 15, 15), -1)  # the dark panel
    for x in (330, 560):  # its light buttons and white title
        cv2.rectangle(image, (x, 1080), (x + 190, 1190), (225, 225, 225), -1)
    cv2.putText(image, "Select time", (340, 680), cv2.FONT_HERSHEY_SIMPLEX, 1.5, (255, 255, 255), 3)
    panel = pixel_occluder(image)
    assert panel is not None
    assert panel.contains(Rect(330, 1080, 750, 1190).center) and panel.left >= 280 and panel.right <= 800
    assert not panel.contains(Rect(40, 300, 280, 410).center)


def test_white_words_on_a_plain_grey_page_are_no_dialog():
    image = np.full((H, W, 3), 90, np.uint8)
    cv2.rectangle(image, (0, 0), (W, 160), (40, 120, 40), -1)  # the app bar
    cv2.putText(image, "Get your tickets", (200, 900), cv2.FONT_HERSHEY_SIMPLEX, 2, (255, 255, 255), 4)
    cv2.line(image, (80, 1000), (1000, 1000), (240, 240, 240), 3)
    assert pixel_occluder(image) is None
