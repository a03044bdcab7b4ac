"""OCR only where the accessibility tree is silent.

When a screen comes with its tree, the words the tree already names need not be read
again: ``mask_tree_text`` paints each worded tree element's box with the colour around it
so the OCR engine finds and recognises only the text the tree lacks (icons' captions,
images of text, WebView content), and ``tree_spans`` turns the tree's words into
``TextSpan`` objects in their place.  A worded node over a blank area (stale or hidden)
is neither masked nor turned into a span, so fusion still reports it.  Pure functions
over arrays and elements; nothing is recognised here.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from vision.geometry import Rect
from vision.types import Element, ElementKind, TextSpan

_WORD_KINDS = (ElementKind.TEXT, ElementKind.BUTTON, ElementKind.CHECK_BOX, ElementKind.RADIO_GROUP)


def _blank(image: np.ndarray, r: Rect) -> bool:
    crop = image[r.top : r.bottom, r.left : r.right]
    return crop.size == 0 or float(crop.reshape(-1, 3).std(axis=0).max()) < 2.0


def worded(elements: Sequence[Element], image: np.ndarray, *, max_area: float = 0.15) -> list[Element]:
    """Tree elements whose own words are drawn: a text-bearing, not-covered, not-password
    element of a text-like kind, smaller than ``max_area`` of the screen, over non-blank pixels."""
    h, w = image.shape[:2]
    limit = max_area * w * h
    out = []
    for e in elements:
        if (e.text.strip() and e.kind in _WORD_KINDS and not e.password and not e.covered
                and 0 < e.rect.area <= limit and not _blank(image, e.rect)):
            out.append(e)
    return out


def mask_tree_text(image: np.ndarray, elements: Sequence[Element]) -> np.ndarray:
    """A copy of ``image`` with each element's box filled with the median colour of its border."""
    out = image.copy()
    h, w = image.shape[:2]
    for e in elements:
        r = e.rect
        top, bottom, left, right = max(0, r.top), min(h, r.bottom), max(0, r.left), min(w, r.right)
        if bottom - top < 2 or right - left < 2:
            continue
        border = np.concatenate([image[top, left:right], image[bottom - 1, left:right],
                                 image[top:bottom, left], image[top:bottom, right - 1]])
        out[top:bottom, left:right] = np.median(border, axis=0).astype(np.uint8)
    return out


def tree_spans(elements: Sequence[Element]) -> list[TextSpan]:
    """The tree's words as text spans (confidence 1: nothing was guessed)."""
    return [TextSpan(" ".join(e.text.split()), e.rect, 1.0) for e in elements]
