"""OCR only where the accessibility tree is silent.

When a screen comes with its tree, the words the tree already names need not be read
again: ``mask_tree_text`` paints each worded tree element's box with the colour around it
so the OCR engine finds and recognises only the text the tree lacks (icons' captions,
images of text, WebView content), and ``tree_spans`` turns the tree's words into
``TextSpan`` objects in their place.  ``named_icons`` picks the icon-sized elements the
tree names by description only; they are masked too (their glyph has no words to add).  A worded node over a blank area (stale or hidden)
is neither masked nor turned into a span, so fusion still reports it.  Pure functions
over arrays and elements; nothing is recognised here.
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np

from vision.geometry import Rect
from vision.types import Element, ElementKind, TextSpan

_WORD_KINDS = (ElementKind.TEXT, ElementKind.BUTTON, ElementKind.CHECK_BOX, ElementKind.RADIO_GROUP)


FEW_BOXES = 400  # up to this many boxes, each is measured on its own pixels


def _uniform(image: np.ndarray, r: Rect, max_std: float, empty: bool) -> bool:
    crop = image[max(0, r.top) : max(0, r.bottom), max(0, r.left) : max(0, r.right)]
    if crop.size == 0:
        return empty
    return float(crop.reshape(-1, crop.shape[-1]).std(axis=0).max()) < max_std


def uniform_boxes(image: np.ndarray, rects: Sequence[Rect], *, max_std: float = 2.0, empty: bool = True,
                  summed: bool | None = None) -> list[bool]:
    """For each box: is it (nearly) one colour?  Each channel's standard deviation inside the
    box stays under ``max_std``; a box with no pixels inside the image answers ``empty``.  Many
    boxes: one pass over the image (summed-area tables), then constant work per box.

    ``summed`` picks the way (``None``: by the number of boxes), for a caller that measures
    part of a larger set and wants the answers the whole set would get: the two ways round
    differently, so a box right at ``max_std`` can be judged apart."""
    if not rects:
        return []
    h, w = image.shape[:2]
    if not (len(rects) > FEW_BOXES if summed is None else summed):  # a few boxes: each costs less than a table
        return [_uniform(image, r, max_std, empty) for r in rects]
    box = np.array([(r.left, r.top, r.right, r.bottom) for r in rects], dtype=np.int64)
    box[:, [0, 2]] = box[:, [0, 2]].clip(0, w)
    box[:, [1, 3]] = box[:, [1, 3]].clip(0, h)
    left, top, right, bottom = box.T
    n = ((right - left) * (bottom - top)).astype(np.float64)

    def total(table: np.ndarray) -> np.ndarray:
        return table[bottom, right] - table[top, right] - table[bottom, left] + table[top, left]

    safe = np.maximum(n, 1.0)
    channels = image[:, :, None] if image.ndim == 2 else image
    worst = np.zeros(len(rects))

    def spread(sums: np.ndarray, squares: np.ndarray) -> None:  # one channel's box sums -> worst std so far
        nonlocal worst
        mean = sums / safe
        worst = np.maximum(worst, np.sqrt(np.maximum(squares / safe - mean * mean, 0.0)))

    if image.dtype == np.uint8 and len(rects) <= FEW_BOXES:
        # a few boxes of bytes: the same whole-number sums, straight from their pixels
        crops = [channels[t:b, lf:r].reshape(-1, channels.shape[2]).astype(np.int64) for lf, t, r, b in box.tolist()]
        sums = np.array([c.sum(axis=0) for c in crops]).reshape(len(crops), -1)
        squares = np.array([(c * c).sum(axis=0) for c in crops]).reshape(len(crops), -1)
        for c in range(channels.shape[2]):
            spread(sums[:, c], squares[:, c])
    else:
        # One channel at a time: three small tables instead of two frame-sized float64 stacks
        # (on a phone frame the page faults of those cost more than the sums).  Sums of bytes
        # fit 32-bit integers exactly; sums of squares need float64, which holds them exactly.
        depth = cv2.CV_32S if image.dtype == np.uint8 else cv2.CV_64F
        for c in range(channels.shape[2]):
            table, squared = cv2.integral2(np.ascontiguousarray(channels[:, :, c]), sdepth=depth, sqdepth=cv2.CV_64F)
            spread(total(table), total(squared))
    flat = worst < max_std
    return [empty if k <= 0 else f for f, k in zip(flat.tolist(), n.tolist(), strict=True)]


def worded(elements: Sequence[Element], image: np.ndarray, *, max_area: float = 0.15) -> list[Element]:
    """Tree elements whose own words are drawn: a text-bearing, not-covered, not-password
    element of a text-like kind, smaller than ``max_area`` of the screen, over non-blank pixels."""
    h, w = image.shape[:2]
    limit = max_area * w * h
    wanted = [e for e in elements if e.text.strip() and e.kind in _WORD_KINDS and not e.password and not e.covered
              and 0 < e.rect.area <= limit]
    return [e for e, blank in zip(wanted, uniform_boxes(image, [e.rect for e in wanted]), strict=True) if not blank]


def mask_tree_text(image: np.ndarray, elements: Sequence[Element]) -> np.ndarray:
    """A copy of ``image`` with each element's box filled with the median colour of its border."""
    out = image.copy()
    h, w = image.shape[:2]
    boxes: list[tuple[int, int, int, int]] = []
    by_size: dict[tuple[int, int], list[int]] = {}  # boxes of one size share one border pattern
    for e in elements:
        r = e.rect
        top, bottom, left, right = max(0, r.top), min(h, r.bottom), max(0, r.left), min(w, r.right)
        if bottom - top < 2 or right - left < 2:
            continue
        by_size.setdefault((right - left, bottom - top), []).append(len(boxes))
        boxes.append((top, bottom, left, right))
    colours = np.empty((len(boxes),) + image.shape[2:], np.uint8)
    for (bw, bh), members in by_size.items():
        step = max(1, (bw + bh) // 64)  # a sample of the border is enough for its median
        across, down = np.arange(0, bw, step), np.arange(0, bh, step)
        dy = np.concatenate([np.zeros_like(across), np.full_like(across, bh - 1), down, down])
        dx = np.concatenate([across, across, np.zeros_like(down), np.full_like(down, bw - 1)])
        corner = np.array([boxes[k][::2] for k in members])  # (top, left) of each box
        border = image[corner[:, :1] + dy, corner[:, 1:] + dx]
        colours[members] = np.median(border, axis=1).astype(np.uint8)
    if out.dtype == np.uint8 and out.ndim == 3 and out.shape[2] == 3:  # in order: a later box paints over an earlier
        for (top, bottom, left, right), colour in zip(boxes, colours.tolist(), strict=True):
            cv2.rectangle(out, (left, top), (right - 1, bottom - 1), colour, -1)  # filled: the box's pixels exactly
    else:
        for (top, bottom, left, right), colour in zip(boxes, colours, strict=True):
            out[top:bottom, left:right] = colour
    return out


def tree_spans(elements: Sequence[Element]) -> list[TextSpan]:
    """The tree's words as text spans (confidence 1: nothing was guessed)."""
    return [TextSpan(" ".join(e.text.split()), e.rect, 1.0) for e in elements]


def named_icons(elements: Sequence[Element], image: np.ndarray, *, max_side: float = 0.15) -> list[Element]:
    """Icon-sized tree elements the tree names by description alone (an image button with a
    content description): reading their glyph would add nothing the tree lacks."""
    h, w = image.shape[:2]
    limit = max_side * min(w, h)
    return [e for e in elements if e.label.strip() and not e.text.strip() and not e.covered
            and e.kind in (ElementKind.BUTTON, ElementKind.IMAGE)
            and 0 < e.rect.width <= limit and 0 < e.rect.height <= limit]
