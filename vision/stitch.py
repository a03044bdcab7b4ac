"""Long screenshots: stitch scrolled captures into one tall image and map points back.

Fixed header and footer rows (identical in consecutive frames) are detected and kept
once; the scroll offset between frames is found by template matching a strip of the
new frame's scrolling area against the previous frame; overlapping rows are dropped.
``StitchedScreen.locate`` turns a point on the tall image into (frame index, on-screen
point, scroll distance from the first frame).  Pixels only; no models.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from vision.errors import ImageError
from vision.geometry import Point


@dataclass(frozen=True, slots=True)
class FramePlacement:
    index: int
    top: int  # y in the stitched image where this frame's new rows begin
    src_top: int  # first row of the frame that was used
    src_bottom: int  # row after the last used row
    scroll: int  # content scroll relative to frame 0, in px


@dataclass(frozen=True, slots=True)
class StitchedScreen:
    image: np.ndarray
    header: int
    footer: int
    placements: tuple[FramePlacement, ...]

    def locate(self, x: int, y: int) -> tuple[int, Point, int]:
        """(frame index, point on that frame's screen, scroll needed from frame 0) for a stitched point."""
        if y < self.header or not self.placements:
            return 0, Point(x, y), 0
        H = self.image.shape[0]
        if y >= H - self.footer:
            last = self.placements[-1]
            frame_h = last.src_bottom + self.footer
            return last.index, Point(x, frame_h - (H - y)), last.scroll
        for p in self.placements:
            height = p.src_bottom - p.src_top
            if p.top <= y < p.top + height:
                return p.index, Point(x, p.src_top + (y - p.top)), p.scroll
        last = self.placements[-1]
        return last.index, Point(x, min(last.src_bottom - 1, y - last.top + last.src_top)), last.scroll


def _static_rows(a: np.ndarray, b: np.ndarray) -> tuple[int, int]:
    """Rows at the top and bottom that are identical in both frames (bars that do not scroll)."""
    same = np.abs(a.astype(np.int16) - b.astype(np.int16)).max(axis=(1, 2)) <= 4
    h = len(same)
    top = int(np.argmin(same)) if not same.all() else h // 2
    bottom = int(np.argmin(same[::-1])) if not same.all() else 0
    return min(top, h // 3), min(bottom, h // 3)


def find_shift(prev: np.ndarray, cur: np.ndarray, header: int, footer: int) -> int:
    """How many pixels the content moved up from ``prev`` to ``cur`` (0 if no match)."""
    h = prev.shape[0]
    body_p = cv2.cvtColor(prev[header : h - footer], cv2.COLOR_RGB2GRAY)
    body_c = cv2.cvtColor(cur[header : h - footer], cv2.COLOR_RGB2GRAY)
    bh = body_p.shape[0]
    strip = max(16, bh // 6)
    best_shift, best_score = 0, -1.0
    for start in (0, bh // 3):  # try two templates: one may be a blank area
        tpl = body_c[start : start + strip]
        if tpl.std() < 3:
            continue
        res = cv2.matchTemplate(body_p, tpl, cv2.TM_CCOEFF_NORMED)
        _, score, _, loc = cv2.minMaxLoc(res)
        if score > best_score:
            best_score, best_shift = score, loc[1] - start
    return max(0, best_shift) if best_score > 0.9 else 0


def stitch(frames: Sequence[np.ndarray]) -> StitchedScreen:
    """Stitch frames captured while scrolling down (same size, RGB)."""
    if not frames:
        raise ImageError("no frames to stitch")
    shape = frames[0].shape
    if any(f.shape != shape for f in frames):
        raise ImageError("frames to stitch must all have the same size", "capture them on one device and orientation")
    h = shape[0]
    if len(frames) == 1:
        return StitchedScreen(np.ascontiguousarray(frames[0]), 0, 0, (FramePlacement(0, 0, 0, h, 0),))
    header, footer = _static_rows(frames[0], frames[1])
    pieces = [frames[0][: h - footer]]
    placements = [FramePlacement(0, header, header, h - footer, 0)]
    y = h - footer
    scroll = 0
    for i in range(1, len(frames)):
        shift = find_shift(frames[i - 1], frames[i], header, footer)
        if shift <= 0:
            continue  # no movement (end of list) or no match: skip the frame
        scroll += shift
        new_top = h - footer - shift
        new_top = max(header, new_top)
        pieces.append(frames[i][new_top : h - footer])
        placements.append(FramePlacement(i, y, new_top, h - footer, scroll))
        y += h - footer - new_top
    if footer:
        pieces.append(frames[-1][h - footer :])
    return StitchedScreen(np.ascontiguousarray(np.vstack(pieces)), header, footer, tuple(placements))
