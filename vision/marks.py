"""Set-of-marks images: the screenshot with every element's box and id drawn on it,
for vision-language models and for the CLI's ``--overlay``.  Drawing only (cv2)."""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np

from vision.types import Block, Element, ElementKind

_PALETTE = [(230, 25, 75), (60, 180, 75), (0, 130, 200), (245, 130, 48), (145, 30, 180), (70, 240, 240),
            (240, 50, 230), (170, 110, 40), (0, 128, 128), (128, 0, 0)]


def set_of_marks(image: np.ndarray, elements: Sequence[Element], *, blocks: Sequence[Block] = (),
                 skip_kinds: tuple[ElementKind, ...] = (ElementKind.STATUS_BAR, ElementKind.NAVIGATION_BAR)) -> np.ndarray:
    """A copy of ``image`` (RGB) with numbered boxes; block outlines dashed-thin underneath."""
    out = np.ascontiguousarray(image.copy())
    H, W = out.shape[:2]
    thick = max(1, round(W / 540))
    scale = max(0.4, W / 1800)
    for b in blocks:
        r = b.rect
        cv2.rectangle(out, (r.left, r.top), (r.right - 1, r.bottom - 1), (120, 120, 120), 1)
    for i, e in enumerate(elements):
        if e.kind in skip_kinds:
            continue
        col = _PALETTE[i % len(_PALETTE)]
        r = e.rect
        cv2.rectangle(out, (r.left, r.top), (max(r.left, r.right - 1), max(r.top, r.bottom - 1)), col, thick)
        label = str(e.id)
        (tw, th), base = cv2.getTextSize(label, cv2.FONT_HERSHEY_SIMPLEX, scale, thick)
        x0, y0 = r.left, max(0, r.top - th - base - 2)
        if y0 == 0 and r.top < th + base + 2:
            y0 = r.top
        cv2.rectangle(out, (x0, y0), (min(W - 1, x0 + tw + 4), min(H - 1, y0 + th + base + 2)), col, -1)
        cv2.putText(out, label, (x0 + 2, y0 + th + 1), cv2.FONT_HERSHEY_SIMPLEX, scale, (255, 255, 255), thick, cv2.LINE_AA)
    return out
