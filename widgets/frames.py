"""Conversions from numpy RGB frames to Qt images.

Pure in-memory conversion, no I/O.  The functions copy as little as they can: a
frame becomes a 32-bit image (Qt's fast painting format) in one OpenCV call, and a
down-scaled copy is made for display when the view shows the frame smaller than its
native size.
"""

from __future__ import annotations

import cv2
import numpy as np
from PySide6.QtGui import QImage, QPixmap


def rgb_to_qimage(rgb: np.ndarray) -> QImage:
    """An independent ``QImage`` (Format_RGB32) holding the pixels of an HxWx3 RGB array."""
    if rgb.ndim != 3 or rgb.shape[2] != 3 or rgb.dtype != np.uint8:
        raise ValueError(f"expected an HxWx3 uint8 RGB array, got {rgb.shape} {rgb.dtype}")
    bgra = cv2.cvtColor(rgb, cv2.COLOR_RGB2BGRA)
    h, w = bgra.shape[:2]
    img = QImage(bgra.data, w, h, int(bgra.strides[0]), QImage.Format.Format_RGB32)
    # keep the buffer alive as long as the image: copy() detaches from numpy memory
    return img.copy()


def rgb_to_display_qimage(rgb: np.ndarray, scale: float) -> QImage:
    """Like ``rgb_to_qimage`` but resized by ``scale`` first (area-averaged when shrinking)."""
    if scale <= 0:
        raise ValueError("scale must be positive")
    if abs(scale - 1.0) < 1e-3:
        return rgb_to_qimage(rgb)
    h, w = rgb.shape[:2]
    tw, th = max(1, round(w * scale)), max(1, round(h * scale))
    interp = cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR
    return rgb_to_qimage(cv2.resize(rgb, (tw, th), interpolation=interp))


def thumbnail_pixmap(rgb: np.ndarray, max_height: int = 96) -> QPixmap:
    """A small pixmap for lists and timelines."""
    h = rgb.shape[0]
    scale = min(1.0, max_height / max(1, h))
    return QPixmap.fromImage(rgb_to_display_qimage(rgb, scale))
