"""Leave out the flat rows of a screen before text detection, and put the spans back.

Phone screens are mostly margins, gaps between list rows and, once the accessibility
tree's words are painted over (``vision.tree_text``), empty boxes.  A row of pixels with no
sharp change from left to right holds no text.  ``ink_bands`` finds the runs of rows that
do (with a margin of flat rows kept around each so the detector sees where text ends),
``stack`` puts them one under the other into a shorter image, and ``unstack`` moves the
spans read there back to the rows they came from.  Text lines never cross a flat row, so
nothing readable is cut; the detector just looks at fewer pixels.  Pure array functions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from vision.geometry import Rect
from vision.types import TextSpan

INK_STEP = 24  # a change this strong (0..255 grey) between neighbouring pixels is a stroke
MARGIN = 10  # flat rows kept above and below each band


@dataclass(frozen=True, slots=True)
class Band:
    """Rows ``top..bottom`` of the screen, found at ``at`` in the stacked image."""

    top: int
    bottom: int
    at: int

    @property
    def height(self) -> int:
        return self.bottom - self.top


def ink_bands(image: np.ndarray, *, margin: int = MARGIN, step: int = INK_STEP) -> list[Band]:
    """The runs of rows that hold a sharp left-to-right change, each grown by ``margin``."""
    h = image.shape[0]
    grey = image.astype(np.int16).sum(axis=2) // 3 if image.ndim == 3 else image.astype(np.int16)
    active = np.abs(np.diff(grey, axis=1)).max(axis=1) >= step if grey.shape[1] > 1 else np.zeros(h, bool)
    if not active.any():
        return []
    grown = np.convolve(active.astype(np.int32), np.ones(2 * margin + 1, np.int32), mode="same") > 0
    edges = np.flatnonzero(np.diff(np.concatenate(([0], grown.astype(np.int8), [0]))))
    bands: list[Band] = []
    at = 0
    for top, bottom in zip(edges[::2], edges[1::2], strict=True):
        bands.append(Band(int(top), int(bottom), at))
        at += int(bottom - top)
    return bands


def stack(image: np.ndarray, bands: Sequence[Band]) -> np.ndarray:
    """The bands' rows, one under the other (a contiguous copy)."""
    return np.ascontiguousarray(np.concatenate([image[b.top : b.bottom] for b in bands], axis=0))


def unstack(spans: Sequence[TextSpan], bands: Sequence[Band]) -> list[TextSpan]:
    """Spans read on the stacked image, moved back to the screen rows they came from."""
    out: list[TextSpan] = []
    for s in spans:
        mid = (s.rect.top + s.rect.bottom) // 2
        band = next((b for b in bands if b.at <= mid < b.at + b.height), None)
        if band is None:
            continue
        shift = band.top - band.at
        top = max(band.top, s.rect.top + shift)
        bottom = min(band.bottom, max(top, s.rect.bottom + shift))
        out.append(TextSpan(s.text, Rect(s.rect.left, top, s.rect.right, bottom), s.confidence))
    return out
