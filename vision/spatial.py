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
from collections.abc import Callable, Iterable, Sequence
from typing import Generic, TypeVar

from vision.geometry import Point, Rect

T = TypeVar("T")


class GridIndex(Generic[T]):
    """Items filed by the grid cells their boxes (``rect_of(item)``) touch."""

    def __init__(self, items: Sequence[T], rect_of: Callable[[T], Rect], *, cell: int = 0) -> None:
        self.items = list(items)
        self._rects = [rect_of(i) for i in self.items]
        if cell <= 0:
            cell = _cell_for(self._rects)
        self.cell = cell
        self._cells: dict[tuple[int, int], list[int]] = {}
        for k, r in enumerate(self._rects):
            for key in self._keys(r):
                self._cells.setdefault(key, []).append(k)

    def _keys(self, r: Rect) -> Iterable[tuple[int, int]]:
        c = self.cell
        x0, x1 = r.left // c, max(r.left, r.right - 1) // c
        y0, y1 = r.top // c, max(r.top, r.bottom - 1) // c
        return ((x, y) for y in range(y0, y1 + 1) for x in range(x0, x1 + 1))

    def _candidates(self, r: Rect) -> list[int]:
        found: set[int] = set()
        for key in self._keys(r):
            found.update(self._cells.get(key, ()))
        return sorted(found)

    def overlapping(self, r: Rect) -> list[T]:
        """Items whose box shares some area with ``r`` (``Rect.intersection`` is not None)."""
        return [self.items[k] for k in self._candidates(r) if self._rects[k].intersection(r) is not None]

    def at(self, p: Point) -> list[T]:
        """Items whose box contains ``p``."""
        return [self.items[k] for k in self._candidates(Rect(p.x, p.y, p.x + 1, p.y + 1)) if self._rects[k].contains(p)]

    def containing(self, r: Rect) -> list[T]:
        """Items whose box contains all of ``r``."""
        return [self.items[k] for k in self._candidates(Rect(r.left, r.top, r.left + 1, r.top + 1))
                if self._rects[k].contains_rect(r)]

    def centred_in(self, r: Rect) -> list[T]:
        """Items whose box's centre lies in ``r``."""
        return [self.items[k] for k in self._candidates(r) if r.contains(self._rects[k].center)]


def _cell_for(rects: Sequence[Rect]) -> int:
    """A cell about twice the side of the average share of the covered area per item."""
    if not rects:
        return 64
    left = min(r.left for r in rects)
    top = min(r.top for r in rects)
    right = max(r.right for r in rects)
    bottom = max(r.bottom for r in rects)
    area = max(1, (right - left) * (bottom - top))
    return max(16, min(512, int(2 * math.sqrt(area / len(rects)))))
