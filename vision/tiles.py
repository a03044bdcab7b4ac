"""Tiles and cards from pixels: a plate of one colour holding words or an icon is one
tappable element (a quick-settings tile, a mode in a camera's menu, a dashboard card).

The screen is shrunk to ``WORK_WIDTH`` columns; each connected region of flat colour
(no step of more than ``STEP`` levels inside) that is not the page itself (less than
``PAGE_SHARE`` of the screen) is a plate when, with its holes filled
(the words and pictures on it), it fills ``SOLID`` of its bounding box (a rounded
rectangle does; a ring, a stripe or a photo's patch does not).  A plate becomes a tile
when it is at least ``MIN_SIDE`` of the width wide and ``MIN_TALL`` of it tall, no more
than ``MAX_TALL`` of the screen tall, and holds at least one element's middle and at most
``MAX_MEMBERS``.  Its label is the words on it, in reading order.  Plates on a screen
edge-to-edge across (a bar, a sheet) are left to the block division.  Pure function over
pixels and elements; adds elements, never changes one.
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np

from vision.geometry import Rect
from vision.types import Element, ElementKind, ElementSource

WORK_WIDTH = 216
STEP = 3  # grey levels between neighbouring pixels of the shrunk screen: more is a boundary
PAGE_SHARE = 0.35  # a colour region larger than this share of the screen is the page
SOLID = 0.86  # holes filled, a plate fills this share of its box
MIN_SIDE = 0.14  # of the screen's width
MIN_TALL = 0.08  # of the screen's width
MAX_TALL = 0.3  # of the screen's height
MAX_MEMBERS = 8
ACROSS = 0.94  # a plate this wide (share of the width) is a band, not a tile

_BARS = (ElementKind.STATUS_BAR, ElementKind.NAVIGATION_BAR)


def plates(image: np.ndarray) -> list[Rect]:
    """Solid one-colour regions that are not the page (screen pixels).

    Regions are the connected runs of flat pixels of the shrunk screen: neighbours
    differing by more than ``STEP`` levels on some channel are a boundary, so a pale
    card on a white page (a few levels apart, one bin of a coarse quantisation) is a
    region of its own.  A card whose outline is soft (it rises over two or three
    pixels, by less than ``STEP`` each) is looked for a second time with the stricter
    boundaries of ``_edges(..., soft=True)``; a plate found both times is kept once."""
    H, W = image.shape[:2]
    s = WORK_WIDTH / W
    small = cv2.resize(image, (WORK_WIDTH, max(1, round(H * s))), interpolation=cv2.INTER_AREA).astype(np.int16)
    out: list[Rect] = []
    for soft in (False, True):
        for x, y, cw, ch in _regions(_edges(small, soft=soft)):
            if soft:  # back out to the outline the grown boundaries ate into
                x, y, cw, ch = max(0, x - 1), max(0, y - 1), cw + 2, ch + 2
            r = Rect(round(x / s), round(y / s), min(W, round((x + cw) / s)), min(H, round((y + ch) / s)))
            if not any(o.iou(r) > 0.8 for o in out):
                out.append(r)
    return out


def _edges(small: np.ndarray, *, soft: bool) -> np.ndarray:
    """Boundary pixels of the shrunk screen.  ``soft``: also where pixels two apart differ by
    more than ``STEP`` (a soft outline), with one-pixel breaks in an outline closed (a
    rounded corner, a faint stretch) by growing the boundaries a pixel."""
    h, w = small.shape[:2]
    edge = np.zeros((h, w), bool)
    dx = np.abs(small[:, 1:] - small[:, :-1]).max(axis=2) > STEP
    dy = np.abs(small[1:] - small[:-1]).max(axis=2) > STEP
    edge[:, 1:] |= dx
    edge[:, :-1] |= dx
    edge[1:] |= dy
    edge[:-1] |= dy
    if soft:
        edge[:, 1:-1] |= np.abs(small[:, 2:] - small[:, :-2]).max(axis=2) > STEP
        edge[1:-1] |= np.abs(small[2:] - small[:-2]).max(axis=2) > STEP
        edge = cv2.dilate(edge.astype(np.uint8), np.ones((3, 3), np.uint8)).astype(bool)
    return edge


def _regions(edge: np.ndarray) -> list[tuple[int, int, int, int]]:
    """Boxes (x, y, width, height, shrunk pixels) of the plates among the flat regions
    ``edge`` bounds: not the page, solid with their holes filled, tile-sized."""
    h, w = edge.shape
    n, comp, stats, _ = cv2.connectedComponentsWithStats((~edge).astype(np.uint8), connectivity=4)
    out = []
    for i in range(1, n):
        x, y, cw, ch, area = (int(v) for v in stats[i])
        if cw < MIN_SIDE * w or ch < MIN_TALL * w or ch > MAX_TALL * h or cw > ACROSS * w:
            continue
        if area > PAGE_SHARE * h * w or area < 0.3 * cw * ch:
            continue
        region = (comp[y : y + ch, x : x + cw] == i).astype(np.uint8)
        contours, _ = cv2.findContours(region, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        filled = np.zeros_like(region)
        cv2.drawContours(filled, contours, -1, 1, thickness=-1)
        if float(filled.mean()) < SOLID:
            continue
        out.append((x, y, cw, ch))
    return out


def find_tiles(image: np.ndarray, elements: Sequence[Element]) -> list[Element]:
    """The tiles of the screen (ids ``k1..``): clickable ``tile`` containers named by their words."""
    live = [e for e in elements if not e.covered and e.kind not in _BARS]
    tiles: list[Element] = []
    for r in plates(image):
        inside = [e for e in live if r.contains(e.rect.center) and e.rect.area < 0.8 * r.area]
        if not inside or len(inside) > MAX_MEMBERS:
            continue
        if any(e.rect.contains_rect(r) for e in live if e.kind is not ElementKind.TEXT):
            continue  # the plate is a widget already found (a button's own plate)
        ordered = sorted(inside, key=lambda e: (e.rect.top // 16, e.rect.left))
        words = [e.text for e in ordered if e.text] or [e.label for e in ordered
                                                        if e.label and e.kind is not ElementKind.CONTAINER]
        label = " · ".join(dict.fromkeys(w for w in words if w))[:80]
        tiles.append(Element(id=f"k{len(tiles) + 1}", kind=ElementKind.CONTAINER, rect=r, label=label,
                             class_name="tile", clickable=True, source=ElementSource.DETECTOR, confidence=0.4))
    return _outermost_first(tiles)


def _outermost_first(tiles: list[Element]) -> list[Element]:
    """One tile per plate: a plate inside another of nearly the same box is dropped."""
    out: list[Element] = []
    for t in sorted(tiles, key=lambda t: -t.rect.area):
        if any(o.rect.iou(t.rect) > 0.8 for o in out):
            continue
        out.append(t)
    return out
