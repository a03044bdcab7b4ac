"""Conversions from numpy RGB frames to Qt images.

Pure in-memory conversion, no I/O.  The functions copy as little as they can: a
frame is shrunk to the size it is shown at first, then written into a 32-bit image
(Qt's fast painting format) in one OpenCV call.
"""

from __future__ import annotations

import cv2
import numpy as np
from PySide6.QtGui import QImage, QPixmap


def rgb_to_qimage(rgb: np.ndarray) -> QImage:
    """A ``QImage`` (Format_RGB32) holding the pixels of an HxWx3 RGB array.

    The image owns its pixels (it does not point into ``rgb``).
    """
    if rgb.ndim != 3 or rgb.shape[2] != 3 or rgb.dtype != np.uint8:
        raise ValueError(f"expected an HxWx3 uint8 RGB array, got {rgb.shape} {rgb.dtype}")
    h, w = rgb.shape[:2]
    img = QImage(w, h, QImage.Format.Format_RGB32)
    # write straight into the image's own buffer: B, G, R, A byte order on little-endian
    dst = np.frombuffer(img.bits(), np.uint8, count=img.sizeInBytes()).reshape(h, img.bytesPerLine())
    cv2.cvtColor(rgb, cv2.COLOR_RGB2BGRA, dst=dst[:, : w * 4].reshape(h, w, 4))
    return img


def shrink(rgb: np.ndarray, width: int, height: int) -> np.ndarray:
    """Resize for display: exact halvings (OpenCV's fast area path), then bilinear.

    Close to area-averaging quality (no aliasing of small text) at a fraction of its cost.
    """
    out = rgb
    while out.shape[1] >= 2 * width and out.shape[0] >= 2 * height:
        out = cv2.resize(out, (out.shape[1] // 2, out.shape[0] // 2), interpolation=cv2.INTER_AREA)
    if (out.shape[1], out.shape[0]) != (width, height):
        out = cv2.resize(out, (width, height), interpolation=cv2.INTER_LINEAR)
    return out


def rgb_to_display_qimage(rgb: np.ndarray, scale: float) -> QImage:
    """Like ``rgb_to_qimage`` but resized by ``scale`` first."""
    if scale <= 0:
        raise ValueError("scale must be positive")
    if abs(scale - 1.0) < 1e-3:
        return rgb_to_qimage(rgb)
    h, w = rgb.shape[:2]
    tw, th = max(1, round(w * scale)), max(1, round(h * scale))
    if scale < 1:
        return rgb_to_qimage(shrink(rgb, tw, th))
    return rgb_to_qimage(cv2.resize(rgb, (tw, th), interpolation=cv2.INTER_LINEAR))


def thumbnail_pixmap(rgb: np.ndarray, max_height: int = 96) -> QPixmap:
    """A small pixmap for lists and timelines."""
    step = rgb.shape[0] // (2 * max_height)
    if step > 1:  # drop rows and columns first: converting a full phone frame costs ~10 ms
        rgb = np.ascontiguousarray(rgb[::step, ::step])
    h = rgb.shape[0]
    scale = min(1.0, max_height / max(1, h))
    return QPixmap.fromImage(rgb_to_display_qimage(rgb, scale))
