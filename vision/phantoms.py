"""Phantom elements of a pixel-only parse: things drawn on the screen that nobody can tap.

Pixels alone turn a photo or a drawing into "buttons" and "text" as readily as a real
control.  This module decides, element by element, whether what was found is part of the
interface or part of a picture, from cues a person would use too:

* **Picture text** — a picture larger than its view (a camera preview, a map, a zoomed
  photo, a scanned page) shows as lines of text cut off by the screen's left or right
  edge.  Interface text always keeps a margin from the edge, so three or more such cut
  lines stacked closely (gaps under two line heights) mark a picture band across the
  screen; the OCR lines in that band, and the detector's wordless finds there, belong to
  the picture.
* **Part of a drawing** — a wordless, unnamed find of the detector (a "button", a row of
  "page dots") whose centre lies inside a detected image at least three times its size is
  a detail of that image (a face's eyes, the stitching of a drawn wallet).  A control
  drawn over a picture that a person would tap (a play button on a video) is a glyph the
  icon classifier names, so it keeps its label and stays.
* **Inside a faint drawing** — two or more wordless, unnamed finds of the detector on one
  faintly tinted shape that the detector cannot see (a white face drawn on an off-white
  page: its eyes and mouth are found, its outline is too soft to be).  The shape is a
  closed region of one colour a few levels off the page's (``FAINT_TINT``, under the
  detector's edge step), not touching the screen's sides, at least ``HOST_AREA`` times
  the size of each find, and not a rectangle (a pale card or bar holding two icon buttons
  is a rectangle and keeps them).  One glyph on a pale disc (an icon button's round
  backdrop) is never judged by this cue.
* **Blank mark** — a wordless, unnamed button or image whose centre holds nothing a
  person could see against the colour of its own border (a detector firing on a
  gradient or a shadow): no glyph, no photo, so nothing to tap.  "Visible" means more
  than a twentieth of full contrast (``BLANK_CONTRAST`` levels of 255 on any channel)
  for the most-differing fiftieth of the box inside a thin rim (an outline glyph's thin
  strokes reach out to the rim and leave its middle empty).

What it must not do: look at a tree, add or move elements, or drop anything that has
words of its own inside a detected widget.  Phantoms leave the element list only; their
words stay in the parse's text spans (a reader can still find them), they are just no
longer offered as things to tap.  Pure functions over elements and pixels.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from vision.geometry import Rect
from vision.types import Element, ElementKind, ElementSource

log = logging.getLogger(__name__)

EDGE = 0.005  # text within this share of the width from a side is cut by the screen edge
MIN_CUT_LINES = 3  # cut lines that make a picture band (two can be a long title scrolling)
LINE_GAP = 2.0  # lines further apart than this many line heights are not one picture
BLANK_CONTRAST = 12  # grey levels (of 255): less than this is no visible mark
HOST_AREA = 3  # an image at least this many times larger holds a wordless find as its detail
FAINT_TINT = (3, 14)  # grey levels off the page: a shape the eye sees but the detector's edge step misses
DRAWN_FILL = 0.88  # a region filling less of its box than this is a drawn shape, not a card or a bar

_BARS = (ElementKind.STATUS_BAR, ElementKind.NAVIGATION_BAR)


@dataclass(frozen=True, slots=True)
class Phantom:
    """An element judged not to be part of the interface, and the cue that said so."""

    element: Element
    cue: str


def split_phantoms(image: np.ndarray, elements: Sequence[Element]) -> tuple[list[Element], list[Phantom]]:
    """``(real, phantoms)``: the elements that stay, and those a cue rules out (see the module
    docstring).  Elements from the tree are never judged."""
    width = int(image.shape[1])
    bands = picture_bands(elements, width)
    pictures = [e for e in elements if e.kind is ElementKind.IMAGE and e.source is ElementSource.DETECTOR and not e.covered]
    drawn = faint_drawing_parts(image, [e for e in elements if _judged(e) and _wordless_find(e)])
    real: list[Element] = []
    phantoms: list[Phantom] = []
    for e in elements:
        cue = _cue(image, e, bands, pictures) or ("inside a faint drawing" if e.id in drawn else "")
        if cue:
            phantoms.append(Phantom(e, cue))
        else:
            real.append(e)
    if phantoms:
        log.debug("phantoms: %s", ", ".join(f"{p.element.kind.value}@{p.element.rect} ({p.cue})" for p in phantoms))
    return real, phantoms


def _judged(e: Element) -> bool:
    return not (e.source is ElementSource.HIERARCHY or e.kind in _BARS or e.covered)


def _wordless_find(e: Element) -> bool:
    return e.source is ElementSource.DETECTOR and not e.text and not e.label and e.kind in (ElementKind.BUTTON, ElementKind.IMAGE)


def _cue(image: np.ndarray, e: Element, bands: Sequence[tuple[int, int]], pictures: Sequence[Element]) -> str:
    if not _judged(e):
        return ""
    wordless = not e.text
    c = e.rect.center
    if any(top <= c.y < bottom for top, bottom in bands) and (e.source is ElementSource.OCR or wordless):
        return "picture text" if e.kind is ElementKind.TEXT else "inside a picture"
    if e.source is not ElementSource.DETECTOR or not wordless or e.label:
        return ""
    if any(p is not e and p.rect.contains(c) and p.rect.area >= HOST_AREA * e.rect.area for p in pictures):
        return "part of a drawing"
    if e.kind in (ElementKind.BUTTON, ElementKind.IMAGE) and blank_mark(image, e.rect):
        return "blank mark"
    return ""


def picture_bands(elements: Sequence[Element], width: int) -> list[tuple[int, int]]:
    """Vertical bands ``(top, bottom)`` holding a picture wider than the screen: at least
    ``MIN_CUT_LINES`` OCR lines cut by the same screen edge, each within ``LINE_GAP`` line
    heights of the next."""
    tol = max(1.0, EDGE * width)
    lines = [e for e in elements if e.kind is ElementKind.TEXT and e.source is ElementSource.OCR and not e.covered]
    bands: list[tuple[int, int]] = []
    for cut in (lambda r: r.left <= tol, lambda r: r.right >= width - tol):
        side = sorted((e.rect for e in lines if cut(e.rect)), key=lambda r: r.top)
        run: list[Rect] = []
        for r in side:
            if run and r.top - run[-1].bottom > LINE_GAP * max(run[-1].height, r.height):
                _close(run, bands)
                run = []
            run.append(r)
        _close(run, bands)
    return bands


def _close(run: list[Rect], bands: list[tuple[int, int]]) -> None:
    if len(run) >= MIN_CUT_LINES:
        bands.append((min(r.top for r in run), max(r.bottom for r in run)))


def blank_mark(image: np.ndarray, rect: Rect) -> bool:
    """True when ``rect`` inside a thin rim holds no mark visible against the box's border
    colour (the 98th percentile of the largest channel difference is under
    ``BLANK_CONTRAST``: even a thin outline glyph covers more than a fiftieth of its box)."""
    crop = image[max(0, rect.top) : rect.bottom, max(0, rect.left) : rect.right]
    h, w = crop.shape[:2]
    if h < 4 or w < 4:
        return False
    c = crop.astype(np.int16)
    border = np.concatenate([c[0], c[-1], c[:, 0], c[:, -1]])
    ground = np.median(border, axis=0)
    inside = c[h // 8 : h - h // 8, w // 8 : w - w // 8]  # all but a thin rim: outline glyphs reach far out
    diff = np.abs(inside - ground).max(axis=2)
    return float(np.percentile(diff, 98)) < BLANK_CONTRAST


def faint_drawing_parts(image: np.ndarray, finds: Sequence[Element]) -> set[str]:
    """Ids of the wordless finds that lie, two or more together, on one faintly tinted drawn
    shape (see the module docstring, "inside a faint drawing")."""
    h, w = image.shape[:2]
    if len(finds) < 2 or h < 16 or w < 16:
        return set()
    img = image  # crops are widened to int16 where they are read
    page = np.median(img[:: max(1, h // 64), :: max(1, w // 64)].reshape(-1, 3), axis=0)
    members: dict[tuple[int, int, int, int], list[Element]] = {}
    for e in finds:
        ground = _ground(img, e.rect)
        if ground is None:
            continue
        tint = float(np.abs(ground - page).max())
        if not FAINT_TINT[0] <= tint < FAINT_TINT[1]:
            continue
        shape = _shape_under(img, e.rect, ground)
        if shape is not None and shape.area >= HOST_AREA * e.rect.area:
            members.setdefault((shape.left, shape.top, shape.right, shape.bottom), []).append(e)
    return {e.id for group in members.values() if len(group) >= 2 for e in group}


def _ground(img: np.ndarray, r: Rect) -> np.ndarray | None:
    """The colour around a find: the median of its box's outermost pixels."""
    crop = img[max(0, r.top) : r.bottom, max(0, r.left) : r.right].astype(np.int16)
    if crop.shape[0] < 4 or crop.shape[1] < 4:
        return None
    return np.median(np.concatenate([crop[0], crop[-1], crop[:, 0], crop[:, -1]]), axis=0)


def _shape_under(img: np.ndarray, r: Rect, ground: np.ndarray, *, tol: int = 3, reach: int = 3, step: int = 2) -> Rect | None:
    """The box of the one-colour region (``ground`` within ``tol``) that surrounds ``r``,
    when it is a drawn shape: closed off within ``reach`` box sizes around ``r`` (so not
    the page, a band or anything running off the screen) and not a rectangle.  Read on
    every ``step``-th pixel (a shape several times a touch target's size loses nothing)."""
    h, w = img.shape[:2]
    # windows start on the same grid of pixels, so finds on one shape see the same box
    left, top = max(0, r.left - reach * r.width) // step * step, max(0, r.top - reach * r.height) // step * step
    right, bottom = min(w, r.right + reach * r.width), min(h, r.bottom + reach * r.height)
    window = img[top:bottom:step, left:right:step].astype(np.int16)
    same = (np.abs(window - ground).max(axis=2) <= tol).astype(np.uint8)
    n, labels, stats, _ = cv2.connectedComponentsWithStats(same, connectivity=4)
    wh, ww = same.shape
    x0, y0 = (max(0, r.left) - left) // step, (max(0, r.top) - top) // step
    x1, y1 = min(ww, -(-(r.right - left) // step)), min(wh, -(-(r.bottom - top) // step))
    box = labels[y0:y1, x0:x1]
    if n <= 1 or box.shape[0] < 2 or box.shape[1] < 2:
        return None
    rim = np.concatenate([box[0], box[-1], box[:, 0], box[:, -1]])
    rim = rim[rim > 0]
    if rim.size == 0:
        return None
    k = int(np.bincount(rim).argmax())
    x, y, bw, bh, _area = (int(v) for v in stats[k])
    if x == 0 or y == 0 or x + bw >= ww or y + bh >= wh:
        return None  # reaches the window's side: the page, a band or a large panel
    region = (labels[y : y + bh, x : x + bw] == k).astype(np.uint8)
    filled = region.copy()
    contours, _ = cv2.findContours(region, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    cv2.drawContours(filled, contours, -1, 1, thickness=-1)  # the glyphs' holes belong to it
    if float(filled.mean()) >= DRAWN_FILL:
        return None  # a rectangle: a card, a bar or a button's plate
    return Rect(left + x * step, top + y * step, left + (x + bw) * step, top + (y + bh) * step)
