"""Sliders from pixels: a knob on a thin track is one slider, and a track with marked stops
(a font size, a display size, a level chosen in steps) offers each stop to be tapped.

A person sees a slider as a round knob sitting on a long thin line; the line's colour may
differ from the page by only a few levels (a pale grey track on white).  ``find_sliders``
starts from each small, roughly square wordless element (the knob the detector found) and
follows the line through its middle to the left and right: a column belongs to the track
while the pixels on the knob's middle line differ from the page just above and below them
(by ``TRACK_STEP`` levels or more) and stay within ``TRACK_STEP`` levels of the track's own
colour; gaps shorter than ``GAP_DP`` are bridged.  A track at least ``MIN_TRACK`` of the
screen's width long, no thicker than ``MAX_THICK_DP``, ending inside the screen's margins
(``MARGIN``: a line from edge to edge is a rule or a grid line), makes a ``seek_bar`` element from
end to end.  Places along the track where it is thicker than elsewhere (dots drawn on it)
are its stops; three or more, evenly spaced (the knob's place among them), each becomes a
tappable element named by its place ("slider stop 7 of 7, right end").

Rules over pixels only: no app, no words.  Pure function over pixels and elements; adds
elements, never changes one.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from vision.geometry import Rect
from vision.types import Element, ElementKind, ElementSource

KNOB_DP = (14, 48)  # a knob's side, in dp
TRACK_STEP = 5  # grey levels: the track differs from the page by this much, and varies less than it
GAP_DP = 6  # a break in the track shorter than this is bridged (a stop's outline, a JPEG speck)
MIN_TRACK = 0.4  # of the screen's width
MARGIN = 0.03  # a track ends at least this share of the width inside the screen's edges
MAX_THICK_DP = 8  # a track is no thicker than this (a bar or a card's edge is)
STOP_EVEN = 0.2  # the gaps between stops differ from their mean by at most this share
TOUCH_DP = 40  # a stop's tappable box is this many dp across
SCAN_PX = 40  # a track's thickness is looked for this many pixels above and below its middle at most

_KNOBS = (ElementKind.BUTTON, ElementKind.IMAGE, ElementKind.UNKNOWN)


def find_sliders(image: np.ndarray, elements: Sequence[Element]) -> list[Element]:
    """Sliders (ids ``s1..``) and the stops of stepped ones (``s1.1..``)."""
    H, W = image.shape[:2]
    unit = W / 411.0
    grey = _Grey(image)
    out: list[Element] = []
    taken: list[Rect] = []
    for k in elements:
        if k.kind not in _KNOBS or k.text or k.covered or any(t.contains(k.rect.center) for t in taken):
            continue
        side = max(k.rect.width, k.rect.height)
        if not KNOB_DP[0] * unit <= side <= KNOB_DP[1] * unit * 1.4 or not 0.6 <= k.rect.width / max(1, k.rect.height) <= 1.6:
            continue
        # every row the track (the page above and below it), its thickness and its stops are read from
        reach = max(round(k.rect.height * 0.5 + 4 * unit), round(MAX_THICK_DP * unit * 2), SCAN_PX + 1) + 1
        plane = grey.rows(k.rect.center.y - reach, k.rect.center.y + reach)
        track = _track(plane, k.rect, unit)
        if track is None:
            continue
        left, right, y, thick = track
        if right - left < MIN_TRACK * W or left < MARGIN * W or right > (1 - MARGIN) * W:
            continue  # short, or running to the screen's edge (a rule or a grid line, not a track)
        half = max(k.rect.height // 2, round(TOUCH_DP * unit / 2))
        bar = Rect(max(0, left - round(4 * unit)), max(0, y - half), min(W, right + round(4 * unit)), min(H, y + half))
        sid = f"s{len(out) + 1}"
        out.append(Element(sid, ElementKind.SEEK_BAR, bar, class_name="slider", clickable=True,
                           source=ElementSource.DETECTOR, confidence=0.4))
        taken.append(bar)
        out.extend(_stop_elements(plane, sid, left, right, y, thick, k.rect, unit, (W, H)))
    return out


class _Grey:
    """The page's grey levels (the mean of the colour channels), worked out only for the rows
    a knob's track is looked for in: a full frame's mean costs tens of milliseconds, and most
    screens have no knob at all."""

    def __init__(self, image: np.ndarray) -> None:
        self._image = image
        self._height = int(image.shape[0])
        self._grey = np.zeros(image.shape[:2], dtype=np.float64)
        self._done = np.zeros(self._height, dtype=bool)

    def rows(self, top: int, bottom: int) -> np.ndarray:
        """The whole frame's grey array, in which rows ``top..bottom`` (clipped) are worked out;
        rows never asked for read 0."""
        top, bottom = max(0, top), min(self._height, bottom + 1)
        todo = top + np.flatnonzero(~self._done[top:bottom])
        if todo.size:
            self._grey[todo] = self._image[todo].astype(np.int16).mean(axis=2)
            self._done[todo] = True
        return self._grey


def _track(grey: np.ndarray, knob: Rect, unit: float) -> tuple[int, int, int, int] | None:
    """``(left, right, y, thickness)`` of the thin line through ``knob``'s middle, or None."""
    H, W = grey.shape
    y = knob.center.y
    away = max(round(knob.height * 0.5 + 4 * unit), round(MAX_THICK_DP * unit))
    if y - away < 0 or y + away >= H:
        return None
    line = grey[y - 1 : y + 2].mean(axis=0)
    page = np.median(np.stack([grey[y - away], grey[y + away]]), axis=0)
    off = np.abs(line - page) >= TRACK_STEP
    ends = []
    for step, start in ((-1, knob.left - 1), (1, knob.right)):
        x, last, colour = start, None, None
        gap = 0
        while 0 <= x < W and gap <= GAP_DP * unit:
            if off[x] and (colour is None or abs(line[x] - colour) < TRACK_STEP * 2):
                colour = line[x] if colour is None else colour
                last, gap = x, 0
            else:
                gap += 1
            x += step
        ends.append(last if last is not None else (knob.left if step < 0 else knob.right - 1))
    left, right = ends[0], ends[1]
    cols = [x for x in range(left, right + 1) if not knob.left <= x < knob.right and off[x]]
    if len(cols) < 0.6 * max(1, (right - left + 1) - knob.width):
        return None  # mostly page between the knob and the ends: not a drawn line
    thick = int(np.median([_thickness(grey, x, y, page[x]) for x in cols[:: max(1, len(cols) // 40)]]))
    if thick > MAX_THICK_DP * unit:
        return None
    return left, right, y, thick


def _thickness(grey: np.ndarray, x: int, y: int, page: float) -> int:
    """How many rows around ``y`` in column ``x`` differ from the page."""
    H = grey.shape[0]
    top, bottom = y, y
    while top > 0 and abs(grey[top - 1, x] - page) >= TRACK_STEP and y - top < SCAN_PX:
        top -= 1
    while bottom < H - 1 and abs(grey[bottom + 1, x] - page) >= TRACK_STEP and bottom - y < SCAN_PX:
        bottom += 1
    return bottom - top + 1


def _stop_elements(grey: np.ndarray, sid: str, left: int, right: int, y: int, thick: int, knob: Rect,
                   unit: float, size: tuple[int, int]) -> list[Element]:
    """The stops marked on the track (thicker places, the knob's place among them), when
    there are three or more evenly spaced."""
    page = float(np.median(grey[max(0, y - round(MAX_THICK_DP * unit * 2))]))
    fat = np.array([not knob.left <= x < knob.right and _thickness(grey, x, y, page) >= thick + max(3, round(2 * unit))
                    for x in range(left, right + 1)])
    centres = [left + (a + b) // 2 for a, b in _runs(fat) if b - a >= 2 * unit]
    centres.append(knob.center.x)
    centres.sort()
    if len(centres) < 3:
        return []
    gaps = np.diff(centres)
    if gaps.min() < 8 * unit or np.abs(gaps - gaps.mean()).max() > STOP_EVEN * gaps.mean():
        return []
    W, H = size
    half = round(TOUCH_DP * unit / 2)
    n = len(centres)
    out = []
    for i, x in enumerate(centres):
        where = ", left end" if i == 0 else ", right end" if i == n - 1 else ""
        out.append(Element(f"{sid}.{i + 1}", ElementKind.BUTTON,
                           Rect(max(0, x - half), max(0, y - half), min(W, x + half), min(H, y + half)),
                           label=f"slider stop {i + 1} of {n}{where}", class_name="slider_stop", clickable=True,
                           selected=knob.left <= x < knob.right, source=ElementSource.DETECTOR, confidence=0.4))
    return out


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """``(start, end)`` of each run of True in ``mask`` (end exclusive)."""
    padded = np.concatenate([[False], mask, [False]]).astype(np.int8)
    d = np.diff(padded)
    return list(zip(np.flatnonzero(d == 1).tolist(), np.flatnonzero(d == -1).tolist(), strict=True))
