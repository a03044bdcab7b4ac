import numpy as np

from vision.blocks import active_member, annotate, caption_for, divide, find_borders, quantize
from vision.describe import describe, element_line, estimate_tokens
from vision.geometry import Rect, Size
from vision.types import Block, Element, ElementKind


def _el(i, kind, rect, text="", **kw):
    return Element(id=str(i), kind=kind, rect=rect, text=text, **kw)


def test_quantize_keeps_few_labels():
    img = np.zeros((60, 60, 3), np.uint8)
    img[:30] = (255, 0, 0)
    img[30:] = (0, 0, 255)
    labels = quantize(img)
    assert len(np.unique(labels)) == 2


def test_colour_bands_become_horizontal_borders(settings_image):
    horizontal, _, _, _ = find_borders(settings_image)
    strong = [b.pos for b in horizontal if b.strong]
    assert any(abs(p - 40) <= 4 for p in strong) and any(abs(p - 130) <= 4 for p in strong)


def test_block_division_separates_app_bar_list_and_tab_bar(settings_image):
    els = [
        _el(1, ElementKind.STATUS_BAR, Rect(0, 0, 540, 40), "12:45"),
        _el(2, ElementKind.TEXT, Rect(20, 68, 150, 100), "Settings"),
        _el(3, ElementKind.TEXT, Rect(24, 252, 100, 280), "Wi-Fi"),
        _el(4, ElementKind.SWITCH, Rect(450, 252, 510, 284)),
        _el(5, ElementKind.BUTTON, Rect(76, 1104, 104, 1132)),
        _el(6, ElementKind.BUTTON, Rect(256, 1104, 284, 1132)),
        _el(7, ElementKind.BUTTON, Rect(436, 1104, 464, 1132)),
    ]
    blocks, rows = divide(settings_image, els, rows=True)
    assert any(r.label.startswith("Wi-Fi") and r.class_name == "list_item" for r in rows)
    els = els + rows
    where = {i: b.role for b in blocks for i in b.element_ids}
    assert where["1"] == "status_bar"
    assert where["2"] != where["3"]
    assert where["5"] == where["6"] == where["7"] == "tab_bar"
    blocks, els2 = annotate(settings_image, blocks, els)
    tab = next(b for b in blocks if b.role == "tab_bar")
    assert tab.active_child == "6"
    assert next(e for e in els2 if e.id == "6").selected


def test_active_member_needs_a_clear_winner():
    img = np.full((100, 300, 3), 128, np.uint8)
    members = [_el(i, ElementKind.BUTTON, Rect(i * 100, 0, i * 100 + 90, 90)) for i in range(3)]
    assert active_member(img, members) is None


def test_caption_is_top_left_plain_text():
    els = [_el(1, ElementKind.TEXT, Rect(20, 300, 200, 330), "Network"), _el(2, ElementKind.SWITCH, Rect(450, 350, 510, 380)),
           _el(3, ElementKind.TEXT, Rect(20, 350, 200, 380), "Wi-Fi")]
    block = Block("b1", "content", Rect(0, 290, 540, 400), element_ids=("1", "2", "3"))
    assert caption_for(block, els) == "Network"


def test_description_lists_blocks_top_down_with_ids_and_states():
    els = [_el(1, ElementKind.STATUS_BAR, Rect(0, 0, 540, 40), "12:45"),
           _el(2, ElementKind.SWITCH, Rect(450, 252, 510, 284), label="Wi-Fi", checked=True, checkable=True, clickable=True),
           _el(3, ElementKind.TEXT, Rect(24, 252, 100, 280), "Wi-Fi"),
           _el(4, ElementKind.BUTTON, Rect(10, 60, 50, 100), label="back", clickable=True)]
    blocks = [Block("b1", "status_bar", Rect(0, 0, 540, 40), element_ids=("1",)),
              Block("b2", "app_bar", Rect(0, 40, 540, 130), element_ids=("4",)),
              Block("b3", "content", Rect(0, 200, 540, 400), caption="Network", element_ids=("2", "3"))]
    text = describe(Size(540, 1200), els, blocks)
    lines = text.splitlines()
    assert lines[1] == "Status bar: 12:45"
    assert text.index("[4] button (back)") < text.index("[2] switch (Wi-Fi) on")
    assert 'Content "Network":' in text


def test_element_line_marks_password_and_disabled():
    e = _el(9, ElementKind.EDIT_TEXT, Rect(0, 0, 10, 10), "secret", password=True, enabled=False)
    assert element_line(e) == '[9] text field "•••" disabled'


def test_empty_parse_description_says_so():
    assert "nothing recognised" in describe(Size(10, 10), [], [])


def test_token_estimate_is_roughly_chars_over_four():
    assert estimate_tokens("x" * 400) == 100
