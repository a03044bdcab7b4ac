"""Whole list rows from pixels: a row of a settings-like list is one tappable element.

Modern lists draw no lines between rows, so the border lines ``vision.blocks`` looks for
are often absent.  A person still sees a row: a title at the left margin (with a smaller
line under it, sometimes), and either a small icon just before the title or something
at the right end of the same band — a chevron, a value ("On", "Default"), a count or a
switch — across plain background.  ``find_rows`` makes one ``list_item`` container per
such row, spanning the list's width and the band of its lines, labelled with the title
(and the value after " · "), so a goal that names the row's title, or the row itself,
finds one element whose middle lies in the middle of the row.

Rules (no app, no words): the row starts within the left quarter of the screen (its
leading icon or its title); a title is at most ``MAX_TITLE_DP`` tall (not a page's
headline); lines under it belong to it when they start where it starts and follow within
``SUB_GAP`` line heights; the mark on the right ends beyond ``RIGHT_SHARE`` of the width
and the pixels between title and mark are one flat colour (two cards side by side have a
gap of another colour between them).  Where no element was found at the right end, a
small patch of ink there (a chevron the detector and OCR both left out) is a mark too.
Pure functions over pixels and elements; adds elements, never removes or changes one.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from vision.geometry import Rect
from vision.types import Element, ElementKind, ElementSource

MAX_TITLE_DP = 44  # taller text is a headline, not a row's title
SUB_GAP = 0.9  # a smaller line under the title follows within this many title heights
WRAP_GAP = 0.4  # a line as large as the title follows within this many (the title wrapped)
LEAD_GAP_DP = 36  # a leading icon ends at most this far before the title
RIGHT_SHARE = 0.8  # the mark on the right ends beyond this share of the width
START_SHARE = 0.25  # a row starts within this share of the width
FLAT = 6  # grey levels: the background between title and mark varies less than this (a pale card on white differs by more)
INK = 60  # grey levels off the background: a stroke of a chevron
PAD_DP = 10  # a row reaches this far above and below its lines

_BARS = (ElementKind.STATUS_BAR, ElementKind.NAVIGATION_BAR)
_MARKS = (ElementKind.TEXT, ElementKind.BUTTON, ElementKind.IMAGE, ElementKind.SWITCH, ElementKind.CHECK_BOX,
          ElementKind.RADIO_GROUP, ElementKind.SPINNER)


def _v_overlap(a: Rect, b: Rect) -> float:
    inter = min(a.bottom, b.bottom) - max(a.top, b.top)
    return max(0, inter) / max(1, min(a.height, b.height))


def find_rows(image: np.ndarray, elements: Sequence[Element]) -> list[Element]:
    """The list rows of the screen (ids ``w1..``), each a clickable ``list_item`` container."""
    H, W = image.shape[:2]
    unit = W / 411.0
    live = [e for e in elements if not e.covered and e.kind not in _BARS]
    texts = sorted((e for e in live if e.kind is ElementKind.TEXT and e.text), key=lambda e: (e.rect.top, e.rect.left))
    taken: set[str] = set()
    rows: list[Element] = []
    for t in texts:
        if t.id in taken or t.rect.height > MAX_TITLE_DP * unit:
            continue
        lead = _leading(t, live, unit)
        start = lead.rect.left if lead is not None else t.rect.left
        if start > START_SHARE * W:
            continue
        under = _lines_under(t, texts, taken)
        lines = [t, *(e for e, _ in under)]
        band = Rect(start, min(e.rect.top for e in lines), max(e.rect.right for e in lines),
                    max(e.rect.bottom for e in lines))
        if lead is not None:
            band = band.union(lead.rect)
        mark = _mark(image, t, band, live, unit)
        if lead is None and mark is None:
            continue
        taken.update(e.id for e in lines)
        right = mark.right + round(8 * unit) if mark is not None else plain_end(image, t.rect, band.right, unit)
        pad = round(PAD_DP * unit)
        rect = Rect(max(0, start - pad), max(0, band.top - pad), min(W, right), min(H, band.bottom + pad))
        value = _value(t, band, live, unit) if mark is not None else ""
        title = " ".join([t.text, *(e.text for e, wrap in under if wrap)])  # a title wrapped onto two lines
        label = title + (f" · {value}" if value else "")
        rows.append(Element(id=f"w{len(rows) + 1}", kind=ElementKind.CONTAINER, rect=rect, label=label,
                            class_name="list_item", clickable=True, source=ElementSource.DETECTOR, confidence=0.5))
    return _apart(rows)


def _leading(t: Element, live: Sequence[Element], unit: float) -> Element | None:
    """A small wordless icon or picture just before the title, on its line."""
    best = None
    for e in live:
        if e.kind not in (ElementKind.IMAGE, ElementKind.BUTTON) or e.text:
            continue
        if e.rect.width > 64 * unit or e.rect.height > 64 * unit or e.rect.right > t.rect.left + 4:
            continue
        if t.rect.left - e.rect.right > LEAD_GAP_DP * unit or _v_overlap(e.rect, t.rect) < 0.3:
            continue
        if e.kind is ElementKind.BUTTON and e.label and e.rect.height <= 1.3 * t.rect.height:
            continue  # a named glyph as tall as the title: an app bar's back or menu button
        if best is None or e.rect.right > best.rect.right:
            best = e
    return best


def _lines_under(t: Element, texts: Sequence[Element], taken: set[str]) -> list[tuple[Element, bool]]:
    """The lines under the title that belong to its row, each with whether it continues the
    title (as large as it, right under it) rather than a smaller line describing it."""
    out: list[tuple[Element, bool]] = []
    last = t
    for o in texts:
        if o is t or o.id in taken or o.rect.top < last.rect.bottom - 2:
            continue
        gap = o.rect.top - last.rect.bottom
        if gap > SUB_GAP * t.rect.height:
            break
        smaller = o.rect.height <= 0.9 * t.rect.height
        if abs(o.rect.left - t.rect.left) <= 0.6 * t.rect.height and o.rect.height <= 1.4 * t.rect.height \
                and (smaller or gap <= WRAP_GAP * t.rect.height):
            out.append((o, not smaller and last is t))
            last = o
    return out


def _mark(image: np.ndarray, t: Element, band: Rect, live: Sequence[Element], unit: float) -> Rect | None:
    """What ends the row on the right (an element, else a small patch of ink), when the
    background between it and the title is flat; None otherwise."""
    W = image.shape[1]
    after = max(band.right, t.rect.right) + round(12 * unit)
    found = [e.rect for e in live if e.kind in _MARKS and e is not t and e.rect.left >= after
             and band.top <= e.rect.center.y <= band.bottom and _fits(e.rect, band, t.rect, unit)]
    found.sort(key=lambda r: -r.right)
    for mark in found:  # the last mark before the row's background ends (a panel's edge, a dimmed page beside it)
        if mark.right < RIGHT_SHARE * W:
            return None
        if _flat_between(image, t.rect, mark):
            if any(r is not mark and r.left < 0.5 * W and r.right <= mark.right for r in found):
                return None  # another column of words: a table or a tab strip, not a row
            return mark
    if found:
        return None
    ink = _ink_at_end(image, band, after, unit)
    if ink is None or ink.right < RIGHT_SHARE * W:
        return None
    return ink if _flat_between(image, t.rect, ink) else None


def _fits(mark: Rect, band: Rect, title: Rect, unit: float) -> bool:
    """A mark is no taller than the row will be (its lines and padding), or than half as much
    again as its lines (a glyph's box is often a whole touch target, taller than the words)."""
    return mark.height <= max(1.5 * max(band.height, title.height), band.height + 2 * PAD_DP * unit)


def _ink_at_end(image: np.ndarray, title: Rect, after: int, unit: float) -> Rect | None:
    """A small patch of ink in the right seventh of the screen beside the row's lines (a chevron)."""
    W = image.shape[1]
    left = max(after, round(0.86 * W))
    if left >= W - 2:
        return None
    y0, y1 = title.top, title.bottom
    strip = image[y0:y1, left : W - 2].astype(np.int16)
    if strip.size == 0:
        return None
    ground = np.median(strip.reshape(-1, 3), axis=0)
    ink = np.abs(strip - ground).max(axis=2) > INK
    cols = np.flatnonzero(ink.any(axis=0))
    if len(cols) == 0 or cols[-1] - cols[0] > 28 * unit:
        return None
    return Rect(left + int(cols[0]), y0, left + int(cols[-1]) + 1, y1)


def _flat_between(image: np.ndarray, title: Rect, mark: Rect) -> bool:
    """The row's background between title and mark is one colour (no gap between two cards)."""
    x0, x1 = title.right + 4, mark.left - 4
    if x1 - x0 < 4:
        return True
    y = (title.top + title.bottom) // 2
    line = image[max(0, y - 1) : y + 2, x0:x1].astype(np.int16).reshape(-1, 3)
    ground = np.median(line, axis=0)
    return float(np.percentile(np.abs(line - ground).max(axis=1), 95)) < FLAT


def plain_end(image: np.ndarray, title: Rect, start: int, unit: float) -> int:
    """Where the row's background ends right of its lines: the first place on the title's
    middle line where the colour leaves it for a few pixels (a card's edge), else the margin."""
    W = image.shape[1]
    y = (title.top + title.bottom) // 2
    x0 = min(W - 1, start + 2)
    line = image[y, x0:].astype(np.int16)
    end = W - round(12 * unit)
    if line.shape[0] < 4:
        return end
    ground = np.median(line[: max(2, round(4 * unit))], axis=0)
    off = np.abs(line - ground).max(axis=1) > FLAT
    run = max(3, round(3 * unit))
    hits = np.flatnonzero(np.convolve(off.astype(np.int32), np.ones(run, np.int32), mode="valid") == run)
    return min(end, x0 + int(hits[0])) if len(hits) else end


def _value(t: Element, band: Rect, live: Sequence[Element], unit: float) -> str:
    """The words at the right end of the row (its current value: "On", "Default"), or ""."""
    after = max(band.right, t.rect.right) + round(12 * unit)
    words = [e.text for e in sorted(live, key=lambda e: e.rect.left) if e.kind is ElementKind.TEXT and e is not t
             and e.rect.left >= after and band.top <= e.rect.center.y <= band.bottom and len(e.text.strip(" >›·")) > 1]
    return " ".join(w.strip(" >›·") for w in words)


def _apart(rows: list[Element]) -> list[Element]:
    """Rows padded into each other are cut at the middle of their overlap."""
    rows.sort(key=lambda r: r.rect.top)
    out: list[Element] = []
    for r in rows:
        if out and out[-1].rect.bottom > r.rect.top and _v_overlap(out[-1].rect, r.rect) < 0.5:
            prev = out[-1]
            mid = (prev.rect.bottom + r.rect.top) // 2
            from dataclasses import replace

            out[-1] = replace(prev, rect=Rect(prev.rect.left, prev.rect.top, prev.rect.right, mid))
            r = replace(r, rect=Rect(r.rect.left, mid, r.rect.right, r.rect.bottom))
        out.append(r)
    return out
