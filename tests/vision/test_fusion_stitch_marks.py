import numpy as np
import pytest

from tests.vision.conftest import draw_settings_screen
from vision.errors import ImageError
from vision.fusion import fuse
from vision.geometry import Rect
from vision.marks import set_of_marks
from vision.stitch import stitch
from vision.types import Element, ElementKind, ElementSource, TextSpan


def _el(i, kind, rect, text="", label="", source=ElementSource.HIERARCHY):
    return Element(id=i, kind=kind, rect=rect, text=text, label=label, source=source)


def test_fusion_fills_missing_labels_from_ocr_and_icons():
    tree = [_el("t1", ElementKind.BUTTON, Rect(0, 0, 100, 50)), _el("t2", ElementKind.BUTTON, Rect(200, 0, 248, 48))]
    vision = [_el("v1", ElementKind.BUTTON, Rect(200, 0, 248, 48), label="search", source=ElementSource.DETECTOR)]
    texts = [TextSpan("Save", Rect(20, 10, 80, 40))]
    out, notes = fuse(tree, vision, texts)
    assert out[0].label == "Save" and out[0].source is ElementSource.FUSED
    assert out[1].label == "search"
    assert notes == []


def test_fusion_adds_visible_widgets_missing_from_the_tree_and_flags_them():
    tree = [_el("t1", ElementKind.TEXT, Rect(0, 0, 100, 50), "Hello")]
    vision = [_el("v1", ElementKind.BUTTON, Rect(300, 300, 400, 350), "Buy", source=ElementSource.DETECTOR),
              _el("v2", ElementKind.TEXT, Rect(5, 5, 95, 45), "Hello", source=ElementSource.OCR)]
    out, notes = fuse(tree, vision, [TextSpan("Hello", Rect(5, 5, 95, 45))])
    assert [e.text for e in out] == ["Hello", "Buy"]
    assert [n.kind for n in notes] == ["missing_in_tree"]


def test_fusion_flags_text_mismatch_and_stale_nodes():
    img = np.full((400, 400, 3), 255, np.uint8)
    tree = [_el("t1", ElementKind.TEXT, Rect(0, 0, 100, 50), "Bluetooth"), _el("t2", ElementKind.TEXT, Rect(0, 200, 100, 250), "Gone")]
    out, notes = fuse(tree, [], [TextSpan("Airplane", Rect(5, 5, 95, 45))], img)
    assert {n.kind for n in notes} == {"text_mismatch", "not_visible"}


def _long_page(h=3000, w=300):
    rng = np.random.default_rng(0)
    page = np.full((h, w, 3), 250, np.uint8)
    for y in range(h):  # every row differs: text-like runs of random length and colour
        page[y, 20 : 20 + int(rng.integers(30, 260))] = rng.integers(0, 200, 3)
    return page


def test_stitching_removes_overlap_and_keeps_fixed_bars():
    page = _long_page()
    header = np.full((50, 300, 3), (30, 90, 200), np.uint8)
    footer = np.full((40, 300, 3), (40, 40, 40), np.uint8)
    body_h = 510
    frames = [np.vstack([header, page[off : off + body_h], footer]) for off in (0, 300, 600)]
    st = stitch(frames)
    assert st.header == 50 and st.footer == 40
    assert st.image.shape[0] == 50 + 600 + body_h + 40
    assert np.array_equal(st.image[50 : 50 + 600 + body_h], page[: 600 + body_h])
    frame, point, scroll = st.locate(100, 50 + 1000)
    assert frame == 2 and scroll == 600 and point.y == 50 + 400


def test_stitching_frames_of_different_size_is_a_clear_error():
    with pytest.raises(ImageError):
        stitch([np.zeros((100, 50, 3), np.uint8), np.zeros((90, 50, 3), np.uint8)])
    with pytest.raises(ImageError):
        stitch([])


def test_set_of_marks_draws_numbered_boxes_on_a_copy():
    img = draw_settings_screen()
    els = [Element("7", ElementKind.BUTTON, Rect(100, 300, 200, 360))]
    out = set_of_marks(img, els)
    assert out.shape == img.shape and not np.array_equal(out, img)
    assert np.array_equal(img, draw_settings_screen())
