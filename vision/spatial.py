"""A uniform-grid spatial index over boxes, so "what lies here?" costs the neighbourhood,
not the whole screen.

Screens with long lists or dense grids carry tens of thousands of tree nodes; comparing
every element with every other (fusion, captions, labels, the description) grows with the
square of that.  ``GridIndex`` files each item under the grid cells its box touches and
answers queries from the cells a query touches, then checks each candidate exactly.
Answers come in the order the items were given, so code that takes "the first best" gives
the same result as a full scan.  Pure data structure: it never looks at pixels.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

from vision.geometry import Point, Rect

T = TypeVar("T")


class GridIndex(Generic[T]):
    """Items filed by the grid cells their boxes (``rect_of(item)``) touch."""

    def __init__(self, items: Sequence[T], rect_of: Callable[[T], Rect], *, cell: int = 0) -> None:
        self.items = list(items)
        self._boxes = [(r.left, r.top, r.right, r.bottom) for r in map(rect_of, self.items)]
        self._centres = [((left + right) // 2, (top + bottom) // 2) for left, top, right, bottom in self._boxes]
        if cell <= 0:
            cell = _cell_for(self._boxes)
        self.cell = cell
        self._cells: dict[tuple[int, int], list[int]] = {}
        cells = self._cells
        for k, (left, top, right, bottom) in enumerate(self._boxes):
            x0, y0 = left // cell, top // cell
            if (right - 1) // cell <= x0 and (bottom - 1) // cell <= y0:
                keys: Sequence[tuple[int, int]] = ((x0, y0),)  # most boxes lie in one cell
            else:
                keys = self._keys(left, top, right, bottom)
            for key in keys:
                found = cells.get(key)
                if found is None:
                    cells[key] = [k]
                else:
                    found.append(k)

    def _keys(self, left: int, top: int, right: int, bottom: int) -> list[tuple[int, int]]:
        c = self.cell
        x0, x1 = left // c, max(left, right - 1) // c
        y0, y1 = top // c, max(top, bottom - 1) // c
        if x0 == x1 and y0 == y1:
            return [(x0, y0)]
        return [(x, y) for y in range(y0, y1 + 1) for x in range(x0, x1 + 1)]

    def _candidates(self, left: int, top: int, right: int, bottom: int) -> Sequence[int]:
        keys = self._keys(left, top, right, bottom)
        if len(keys) == 1:  # one cell: its list is already in the items' order, each item once
            return self._cells.get(keys[0], ())
        found: set[int] = set()
        for key in keys:
            found.update(self._cells.get(key, ()))
        return sorted(found)

    def overlapping(self, r: Rect) -> list[T]:
        """Items whose box shares some area with ``r`` (``Rect.intersection`` is not None)."""
        ql, qt, qr, qb = r.left, r.top, r.right, r.bottom
        if ql >= qr or qt >= qb:
            return []
        boxes, items = self._boxes, self.items
        out = []
        for k in self._candidates(ql, qt, qr, qb):
            left, top, right, bottom = boxes[k]
            if left < qr and ql < right and top < qb and qt < bottom and left < right and top < bottom:
                out.append(items[k])
        return out

    def at(self, p: Point) -> list[T]:
        """Items whose box contains ``p``."""
        x, y = p.x, p.y
        boxes, items = self._boxes, self.items
        out = []
        for k in self._candidates(x, y, x + 1, y + 1):
            left, top, right, bottom = boxes[k]
            if left <= x < right and top <= y < bottom:
                out.append(items[k])
        return out

    def containing(self, r: Rect) -> list[T]:
        """Items whose box contains all of ``r``."""
        ql, qt, qr, qb = r.left, r.top, r.right, r.bottom
        boxes, items = self._boxes, self.items
        out = []
        for k in self._candidates(ql, qt, ql + 1, qt + 1):
            left, top, right, bottom = boxes[k]
            if left <= ql and top <= qt and qr <= right and qb <= bottom:
                out.append(items[k])
        return out

    def centred_in(self, r: Rect) -> list[T]:
        """Items whose box's centre lies in ``r``."""
        ql, qt, qr, qb = r.left, r.top, r.right, r.bottom
        centres, items = self._centres, self.items
        out = []
        for k in self._candidates(ql, qt, qr, qb):
            x, y = centres[k]
            if ql <= x < qr and qt <= y < qb:
                out.append(items[k])
        return out


def _cell_for(boxes: Sequence[tuple[int, int, int, int]]) -> int:
    """A cell about twice the side of the average share of the covered area per item."""
    if not boxes:
        return 64
    left = min(b[0] for b in boxes)
    top = min(b[1] for b in boxes)
    right = max(b[2] for b in boxes)
    bottom = max(b[3] for b in boxes)
    area = max(1, (right - left) * (bottom - top))
    return max(16, min(512, int(2 * math.sqrt(area / len(boxes)))))
