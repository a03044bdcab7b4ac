"""Pixel-only elements need evidence; with a tree, OCR reads only what the tree does not name."""

from __future__ import annotations

import numpy as np

from tests.vision.conftest import draw_settings_screen, node, settings_dump
from vision.config import PipelineConfig
from vision.evidence import with_evidence
from vision.geometry import Rect, Size
from vision.pipeline import ScreenParser
from vision.tree_text import mask_tree_text, tree_spans, worded
from vision.types import Element, ElementKind, ElementSource, Screen

SIZE = Size(540, 1200)


def test_status_bar_text_is_folded_into_one_bar_and_bare_sliders_dropped():
    clock = Element("v1", ElementKind.TEXT, Rect(10, 5, 60, 30), text="12:47", source=ElementSource.OCR)
    glyph = Element("v2", ElementKind.TEXT, Rect(80, 5, 95, 30), text="f", source=ElementSource.OCR)
    title = Element("v3", ElementKind.TEXT, Rect(10, 80, 200, 120), text="Settings", source=ElementSource.OCR)
    track = Element("v4", ElementKind.SEEK_BAR, Rect(10, 300, 530, 310), source=ElementSource.DETECTOR)
    slider = Element("v5", ElementKind.SEEK_BAR, Rect(10, 400, 530, 430), label="Brightness", source=ElementSource.DETECTOR)
    photo = Element("v6", ElementKind.IMAGE, Rect(10, 500, 300, 700), source=ElementSource.DETECTOR)
    out = with_evidence([clock, glyph, title, track, slider, photo], SIZE)
    kinds = {e.id: e.kind for e in out}
    assert "v1" not in kinds and "v2" not in kinds and "v4" not in kinds
    assert {"v3", "v5", "v6"} <= set(kinds)
    bar = next(e for e in out if e.kind is ElementKind.STATUS_BAR)
    assert bar.text == "12:47 f" and bar.rect.top == 0


def test_a_detected_status_bar_takes_the_loose_clock_text():
    bar = Element("v1", ElementKind.STATUS_BAR, Rect(0, 0, 540, 40), source=ElementSource.DETECTOR)
    clock = Element("v2", ElementKind.TEXT, Rect(10, 5, 60, 30), text="9:41", source=ElementSource.OCR)
    out = with_evidence([bar, clock], SIZE)
    assert [(e.kind, e.text) for e in out] == [(ElementKind.STATUS_BAR, "9:41")]


def test_worded_tree_nodes_are_masked_but_blank_ones_and_passwords_are_not():
    image = draw_settings_screen()
    wifi = Element("t1", ElementKind.TEXT, Rect(24, 252, 140, 284), text="Wi-Fi")
    ghost = Element("t2", ElementKind.TEXT, Rect(200, 900, 400, 940), text="Stale")  # over blank background
    secret = Element("t3", ElementKind.EDIT_TEXT, Rect(20, 150, 520, 210), text="hunter2", password=True)
    named = worded([wifi, ghost, secret], image)
    assert named == [wifi]
    masked = mask_tree_text(image, named)
    crop = masked[252:284, 24:140].reshape(-1, 3)
    assert crop.std(axis=0).max() < 1.0  # the words are gone
    assert (masked[:240] == image[:240]).all()  # nothing else changed
    assert [(s.text, s.rect) for s in tree_spans(named)] == [("Wi-Fi", wifi.rect)]


def test_fusion_reads_only_the_gaps_and_still_flags_a_stale_node(shared_parser):
    image = draw_settings_screen()
    stale = node("android.widget.TextView", "[200,900][400,940]", text="Stale banner")
    xml = settings_dump().replace("</hierarchy>", stale + "</hierarchy>")
    parser = ScreenParser(PipelineConfig(mode="fusion", detector="cv", remember_previous=False),
                          ocr=shared_parser.ocr_backend())
    parse = parser.parse(Screen(image, hierarchy_xml=xml))
    stages = {t.stage for t in parse.timings}
    assert "ocr_tree_gaps" in stages
    texts = [s.text for s in parse.text_spans]
    assert "Wi-Fi" in texts and "Bluetooth" in texts  # from the tree, in its boxes
    assert any("Airplane" in t for t in texts)  # not in the dump: read from the pixels
    assert any(d.kind == "not_visible" and "Stale banner" in d.detail for d in parse.disagreements)
    everywhere = ScreenParser(PipelineConfig(mode="fusion", detector="cv", remember_previous=False, ocr_tree_gaps=False),
                              ocr=shared_parser.ocr_backend()).parse(Screen(image, hierarchy_xml=xml))
    assert "ocr" in {t.stage for t in everywhere.timings}
    assert np.array_equal(image, draw_settings_screen())  # the screen itself is never painted on
