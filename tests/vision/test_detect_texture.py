"""The OpenCV detector and textured backdrops: a faint patch of a striped background is
not a widget, while a drawn icon on the same background, and the same faint patch on a
flat background, still are.

Screens are drawn with numpy/OpenCV at 1080x1920 (no OCR model runs here)."""

import cv2
import numpy as np

from vision.detect import CvDetector
from vision.geometry import Point

W, H = 1080, 1920
PATCH = (300, 900, 420, 980)  # left, top, right, bottom: where the stripes run stronger


def _backdrop(*, stripes: bool, icon: bool = False) -> np.ndarray:
    """A dark blue screen; with ``stripes``, faint diagonal stripes everywhere (just under
    the detector's edge step), stronger in ``PATCH`` (just over it); without, only the
    patch is striped."""
    yy, xx = np.mgrid[0:H, 0:W]
    stripe = (((xx + yy) // 4) % 2).astype(np.float32)
    amplitude = np.full((H, W), 8.0 if stripes else 0.0, np.float32)
    left, top, right, bottom = PATCH
    amplitude[top:bottom, left:right] = 18.0
    img = np.full((H, W, 3), (52, 64, 86), np.float32) + (stripe * amplitude)[..., None]
    if icon:
        cv2.circle(img, (800, 600), 40, (240, 240, 240), 6)
    return np.clip(img, 0, 255).astype(np.uint8)


def _at(dets, x: int, y: int) -> list:
    return [d for d in dets if d.rect.contains(Point(x, y))]


def test_a_faint_patch_of_a_striped_backdrop_is_not_a_widget():
    dets = CvDetector().detect(_backdrop(stripes=True), [])
    assert not _at(dets, 360, 940)


def test_an_icon_drawn_on_a_striped_backdrop_is_still_found():
    dets = CvDetector().detect(_backdrop(stripes=True, icon=True), [])
    assert _at(dets, 800, 600)
    assert not _at(dets, 360, 940)


def test_a_faint_shape_on_a_flat_backdrop_is_still_a_widget():
    dets = CvDetector().detect(_backdrop(stripes=False), [])
    assert _at(dets, 360, 940)
