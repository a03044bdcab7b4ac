"""A card whose outline rises softly (a shadow or an anti-aliased edge a few levels deep,
spread over several pixels) is still a plate (``vision.tiles.plates``)."""

from __future__ import annotations

import numpy as np

from vision.geometry import Rect
from vision.tiles import plates

W, H = 1080, 2400


def _soft_card(box: Rect, page: int = 255, card: int = 249, ramp: int = 12) -> np.ndarray:
    """A white page with a card ``page - card`` levels darker, its edge a ``ramp``-pixel slope."""
    y, x = np.mgrid[0:H, 0:W]
    inside = np.minimum.reduce([x - box.left, box.right - x, y - box.top, box.bottom - y]).astype(np.float32)
    depth = np.clip(inside / ramp, 0.0, 1.0)  # 0 outside, rising to 1 over the ramp
    grey = np.round(page - (page - card) * depth).astype(np.uint8)
    return np.repeat(grey[:, :, None], 3, axis=2)


def test_a_card_with_a_soft_outline_is_a_plate():
    box = Rect(60, 700, 520, 1100)
    found = plates(_soft_card(box))
    assert any(r.iou(box) > 0.8 for r in found), found


def test_a_page_with_no_card_has_no_plate():
    assert plates(np.full((H, W, 3), 255, np.uint8)) == []
