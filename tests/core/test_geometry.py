"""Rects, points and their named coordinate spaces."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vision.geometry import NormPoint, Point, Rect, Size


def test_bounds_string_round_trips():
    r = Rect.from_bounds_string("[0,63][1080,210]")
    assert r == Rect(0, 63, 1080, 210)
    assert r.to_bounds_string() == "[0,63][1080,210]"
    assert r.center == Point(540, 136)


def test_malformed_bounds_string_is_a_clear_error():
    with pytest.raises(ValueError, match="bounds"):
        Rect.from_bounds_string("[0,63][1080]")


def test_inverted_rect_is_rejected():
    with pytest.raises(ValueError):
        Rect(10, 10, 5, 20)


def test_iou_of_identical_and_disjoint_boxes():
    a = Rect(0, 0, 10, 10)
    assert a.iou(a) == 1.0
    assert a.iou(Rect(20, 20, 30, 30)) == 0.0
    assert a.iou(Rect(5, 0, 15, 10)) == pytest.approx(50 / 150)


def test_clamp_keeps_only_the_visible_part():
    assert Rect(-10, 2300, 200, 2600).clamp(Size(1080, 2400)) == Rect(0, 2300, 200, 2400)
    assert Rect(2000, 0, 2100, 10).clamp(Size(1080, 2400)).is_empty()


def test_normalised_points_are_in_yx_order():
    p = Point(540, 1200).to_norm(Size(1080, 2400))
    assert p.as_yx() == [0.5, 0.5]
    assert NormPoint.from_yx([0.25, 0.75]).to_px(Size(1000, 2000)) == Point(750, 500)


def test_normalised_point_out_of_range_is_rejected():
    with pytest.raises(ValueError):
        NormPoint(1.2, 0.5)


@given(
    x=st.integers(0, 1079),
    y=st.integers(0, 2399),
)
def test_pixel_to_norm_and_back_is_within_one_pixel(x, y):
    size = Size(1080, 2400)
    back = Point(x, y).to_norm(size).to_px(size)
    assert abs(back.x - x) <= 1 and abs(back.y - y) <= 1
