"""Semantic block division (VisionTasker §4.3.3, App. B Alg. 1), block captions and
active-tab detection (§4.3.4).

Block division: quantise the screenshot to its dominant colours, take the edges of the
quantised image, keep long horizontal/vertical line segments scored by how much of the
span they cover (the "probability" of being a border), group segments that are close
and parallel into borders, then read rectangles off the borders: horizontal bands,
split by vertical borders that cross a band, plus card-like rectangles found as
contours.  Elements go to the smallest block holding their centre.

Captions: a block's caption is plain text at its top, left-aligned or centred, with no
widget beside it.  Active tab: inside a tab bar, the member whose hue distribution
differs most from the others' is the selected one.

Works on pixels and element boxes only; knows nothing about trees or models.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right, insort
from collections.abc import Sequence
from dataclasses import dataclass, replace

import cv2
import numpy as np

from vision.geometry import Rect
from vision.spatial import GridIndex
from vision.types import Block, Element, ElementKind, ElementSource

WORK_WIDTH = 270


@dataclass(frozen=True, slots=True)
class Border:
    pos: int  # y for horizontal, x for vertical (device px)
    start: int
    end: int
    score: float  # covered fraction of the span, 0..1
    strong: bool  # a change of background colour (not a hairline divider)


def quantize(image: np.ndarray, k: int = 6) -> np.ndarray:
    """Label map of the ``k`` dominant colours (4-bit histogram peaks; nearest-centre lookup table)."""
    q = (image >> 4).astype(np.int32)
    codes = (q[:, :, 0] << 8) | (q[:, :, 1] << 4) | q[:, :, 2]
    counts = np.bincount(codes.ravel(), minlength=4096)
    top = np.argsort(counts)[::-1][:k]
    top = top[counts[top] > 0]
    centres = np.stack([(top >> 8) & 15, (top >> 4) & 15, top & 15], axis=1).astype(np.float32)
    allc = np.arange(4096)
    grid = np.stack([(allc >> 8) & 15, (allc >> 4) & 15, allc & 15], axis=1).astype(np.float32)
    lut = ((grid[:, None, :] - centres[None, :, :]) ** 2).sum(axis=2).argmin(axis=1).astype(np.uint8)
    return lut[codes]


def _longest_run(row: np.ndarray) -> tuple[int, int]:
    """(start, length) of the longest run of True values in a 1-D bool array."""
    if not row.any():
        return 0, 0
    padded = np.concatenate([[0], row.astype(np.int8), [0]])
    diff = np.diff(padded)
    starts, ends = np.where(diff == 1)[0], np.where(diff == -1)[0]
    i = int(np.argmax(ends - starts))
    return int(starts[i]), int(ends[i] - starts[i])


def find_borders(image: np.ndarray, *, min_cover: float = 0.6) -> tuple[list[Border], list[Border], np.ndarray, float]:
    """Horizontal and vertical border lines of the whole screen (Alg. 1 steps 1-4)."""
    H, W = image.shape[:2]
    s = min(1.0, WORK_WIDTH / W)
    small = cv2.resize(image, (max(1, round(W * s)), max(1, round(H * s))), interpolation=cv2.INTER_AREA)
    labels = quantize(small)
    gray = cv2.cvtColor(small, cv2.COLOR_RGB2GRAY).astype(np.int16)
    h, w = labels.shape
    # edges of the quantised image (colour changes) and faint hairlines in grey
    hz = labels[1:, :] != labels[:-1, :]
    hairline_h = np.abs(gray[1:, :] - gray[:-1, :]) > 5
    horizontal: list[Border] = []
    strong_cover = hz.mean(axis=1)
    weak_cover = hairline_h.mean(axis=1)
    for y in np.nonzero((strong_cover >= min_cover) | (weak_cover >= 0.8))[0]:
        row = hz[y] if strong_cover[y] >= min_cover else hairline_h[y]
        start, length = _longest_run(row)
        strong = bool(strong_cover[y] >= min_cover)
        if length >= (min_cover if strong else 0.8) * w * 0.9:
            horizontal.append(Border(round((y + 1) / s), round(start / s), round((start + length) / s), length / w, strong))
    horizontal = _group(horizontal, gap=round(3 / s))
    vt = labels[:, 1:] != labels[:, :-1]
    vertical: list[Border] = []
    vcover = vt.mean(axis=0)
    for x in np.nonzero(vcover >= 0.06)[0]:
        start, length = _longest_run(vt[:, x])
        if length >= 0.06 * h:
            vertical.append(Border(round((x + 1) / s), round(start / s), round((start + length) / s), length / h, True))
    vertical = _group(vertical, gap=round(3 / s))
    return horizontal, vertical, labels, s


def _group(borders: list[Border], gap: int) -> list[Border]:
    """Merge parallel segments closer than ``gap`` (a drawn line gives two edges)."""
    out: list[Border] = []
    for b in sorted(borders, key=lambda b: b.pos):
        if out and b.pos - out[-1].pos <= gap and min(b.end, out[-1].end) > max(b.start, out[-1].start):
            a = out[-1]
            out[-1] = Border(a.pos, min(a.start, b.start), max(a.end, b.end), max(a.score, b.score), a.strong or b.strong)
        else:
            out.append(b)
    return out


def _cards(labels: np.ndarray, s: float, W: int, H: int) -> list[Rect]:
    """Card-like rectangles: large single-colour regions that are nearly rectangular."""
    out: list[Rect] = []
    h, w = labels.shape
    fractions = np.bincount(labels.ravel(), minlength=int(labels.max()) + 1) / labels.size
    for lab in np.nonzero((fractions > 0.02) & (fractions <= 0.5))[0]:  # the page background is skipped
        mask = (labels == lab).astype(np.uint8)
        n, _, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=4)
        for i in range(1, n):
            x, y, cw, ch, area = stats[i]
            if cw * ch < 0.02 * h * w or cw < 0.25 * w:
                continue
            if area / float(cw * ch) < 0.7:
                continue
            if cw > 0.98 * w and ch > 0.9 * h:
                continue
            out.append(Rect(round(x / s), round(y / s), min(W, round((x + cw) / s)), min(H, round((y + ch) / s))))
    return out


def list_rows(horizontal: Sequence[Border], elements: Sequence[Element], W: int, H: int) -> list[Element]:
    """List items: full-width bands between borders that hold text and no widget filling them.

    The first band of the content (at the screen's top, or just under the status bar) is
    the app bar with the screen's title, not a list item."""
    cuts = sorted({0, H, *(b.pos for b in horizontal if b.strong or b.score >= 0.8)})
    status = [e.rect.bottom for e in elements if e.kind is ElementKind.STATUS_BAR and e.rect.top < 0.02 * H]
    # under the status bar; without one seen, under a thin band at the top as tall as a status bar
    content_top = max(status) if status else next((c for c in cuts if 0.02 * H <= c <= 0.05 * H), 0)
    rows: list[Element] = []
    for top, bottom in zip(cuts, cuts[1:], strict=False):
        h = bottom - top
        if not (0.035 * H <= h <= 0.16 * H) or top <= content_top + 0.01 * H:
            continue
        band = Rect(0, top, W, bottom)
        inside = [e for e in elements if band.contains(e.rect.center)]
        if any(not band.contains_rect(e.rect) for e in inside):
            continue
        words = sorted((e for e in inside if e.kind is ElementKind.TEXT and e.text), key=lambda e: (e.rect.top, e.rect.left))
        if not words or any(e.kind in (ElementKind.STATUS_BAR, ElementKind.NAVIGATION_BAR) for e in inside):
            continue
        if any(e.kind is not ElementKind.TEXT and e.rect.area > 0.5 * band.area for e in inside):
            continue
        if any(e.class_name == "list_item" for e in inside):
            continue  # already a row (``vision.rows``)
        if len({round(e.rect.center.x / (0.2 * W)) for e in words if abs(e.rect.center.y - words[0].rect.center.y) < 8}) > 2:
            continue  # several texts side by side: a tab strip or toolbar, not a list item
        label = " · ".join(e.text for e in words[:2])
        rows.append(Element(id=f"r{len(rows) + 1}", kind=ElementKind.CONTAINER, rect=band, label=label,
                            class_name="list_item", clickable=True, source=ElementSource.DETECTOR, confidence=0.4))
    return rows


def divide(image: np.ndarray, elements: Sequence[Element], *, rows: bool = False) -> tuple[list[Block], list[Element]]:
    """Blocks for ``elements`` on ``image`` (ids ``b1..`` in reading order; roles guessed).

    With ``rows``, list items found between border lines are returned as extra elements
    (already included in the blocks).
    """
    H, W = image.shape[:2]
    if H < 32 or W < 32 or not elements:
        return [], []
    horizontal, vertical, labels, s = find_borders(image)
    extra = list_rows(horizontal, elements, W, H) if rows else []
    elements = list(elements) + extra
    cuts = [0] + [b.pos for b in horizontal if b.strong or b.score >= 0.8] + [H]
    cuts = sorted(set(c for c in cuts if 0 <= c <= H))
    bands: list[Rect] = [Rect(0, a, W, b) for a, b in zip(cuts, cuts[1:], strict=False) if b - a >= 4]
    # merge bands split only by hairlines when both sides are short (list rows stay together)
    centres = GridIndex(elements, lambda e: e.rect)
    merged: list[Rect] = []
    for band in bands:
        if merged:
            prev = merged[-1]
            border = next((b for b in horizontal if b.pos == band.top), None)
            weak = border is not None and not border.strong
            if weak and prev.height < 0.12 * H and band.height < 0.12 * H and centres.centred_in(prev) and centres.centred_in(band):
                merged[-1] = prev.union(band)
                continue
        merged.append(band)
    # split bands by vertical borders that cross them fully
    rects: list[Rect] = []
    for band in merged:
        xs = [v.pos for v in vertical if v.start <= band.top + 0.1 * band.height and v.end >= band.bottom - 0.1 * band.height
              and 0.05 * W < v.pos < 0.95 * W and band.height > 0.05 * H]
        if xs:
            edges = [0] + sorted(set(xs)) + [W]
            rects.extend(Rect(a, band.top, b, band.bottom) for a, b in zip(edges, edges[1:], strict=False) if b - a > 0.1 * W)
        else:
            rects.append(band)
    rects.extend(_cards(labels, s, W, H))
    # system bars are blocks of their own, whatever colour they share with the app
    rects.extend(e.rect for e in elements if e.kind in (ElementKind.STATUS_BAR, ElementKind.NAVIGATION_BAR))
    return _blocks_of(rects, elements, W, H), extra


def _blocks_of(rects: Sequence[Rect], elements: Sequence[Element], W: int, H: int) -> list[Block]:
    """Each element goes to the smallest rect holding its centre; each rect with members is
    a block (ids in reading order, role guessed; a near-full-height rect shrinks to its members)."""
    assign: dict[int, list[str]] = {}
    where = GridIndex(list(range(len(rects))), lambda i: rects[i])
    areas = [r.area for r in rects]
    for e in elements:
        best, best_area = -1, 0
        for i in where.at(e.rect.center):
            if best < 0 or areas[i] < best_area:
                best, best_area = i, areas[i]
        if best >= 0:
            assign.setdefault(best, []).append(e.id)
    by_id = {e.id: e for e in elements}
    raw = [(rects[i], ids) for i, ids in assign.items()]
    raw.sort(key=lambda x: (x[0].top, min(by_id[i].rect.top for i in x[1]), x[0].left))
    blocks: list[Block] = []
    for n, (r, ids) in enumerate(raw):
        members = [by_id[i] for i in ids]
        boxes = [m.rect for m in members]
        tight = Rect(min(b.left for b in boxes), min(b.top for b in boxes), max(b.right for b in boxes), max(b.bottom for b in boxes))
        role = _role(r, members, W, H)
        blocks.append(Block(id=f"b{n + 1}", role=role, rect=r if r.height < 0.9 * H else tight, element_ids=tuple(ids)))
    return blocks


def _role(r: Rect, members: Sequence[Element], W: int, H: int) -> str:
    kinds = {m.kind for m in members}
    if ElementKind.STATUS_BAR in kinds and r.top == 0 and r.height < 0.08 * H:
        return "status_bar"
    if ElementKind.NAVIGATION_BAR in kinds and r.bottom >= H - 2 and r.height < 0.1 * H:
        return "navigation_bar"
    if r.height < 0.14 * H and ((r.bottom > 0.8 * H and _is_tab_row(members, W))
                                or (r.top < 0.3 * H and _is_tab_row(members, W, min_items=3))):
        return "tab_bar"
    if r.top < 0.16 * H and r.height < 0.12 * H:
        return "app_bar"
    if r.width < 0.96 * W and r.height < 0.6 * H:
        return "card"
    return "content"


def _is_tab_row(members: Sequence[Element], W: int, *, min_items: int = 2) -> bool:
    """Two or more similar items spread evenly across the width (bottom navigation, tab strip)."""
    items = [m for m in members if m.kind in (ElementKind.BUTTON, ElementKind.TEXT, ElementKind.IMAGE)]
    if len(items) < min_items:
        return False
    cols = _tab_items(items)
    if len(cols) < min_items or (max(c.rect.right for c in cols) - min(c.rect.left for c in cols)) <= 0.5 * W:
        return False
    widths = [c.rect.width for c in cols]
    if max(widths) > 2.5 * max(1, min(widths)):
        return False
    centres = [c.rect.center.x for c in cols]
    gaps = np.diff(centres)
    return len(gaps) < 2 or float(np.std(gaps)) < 0.35 * float(np.mean(gaps))


def _tab_items(items: Sequence[Element]) -> list[Element]:
    """One representative per column (buttons preferred over their captions)."""
    cols: list[Element] = []
    taken: list[tuple[int, int]] = []  # (centre x, width) of each column so far, by centre
    widest = 0
    for m in sorted(items, key=lambda m: (m.kind is not ElementKind.BUTTON, m.rect.left)):
        x, w = (m.rect.left + m.rect.right) // 2, m.rect.width
        # a column closer than half the wider of the two; none lies further than half the widest
        reach = max(w, widest) / 2
        lo, hi = bisect_right(taken, (x - reach, w)), bisect_left(taken, (x + reach, 0))
        if any(2 * abs(x - cx) < max(w, cw) for cx, cw in taken[lo:hi]):
            continue
        cols.append(m)
        insort(taken, (x, w))
        widest = max(widest, w)
    return sorted(cols, key=lambda m: m.rect.left)


# --------------------------------------------------------------------------- captions, tabs


def caption_for(block: Block, elements: Sequence[Element]) -> str:
    """Plain text at the top of a block, left-aligned or centred, with nothing beside it."""
    ids = set(block.element_ids)
    return _caption(block, [e for e in elements if e.id in ids])


def _caption(block: Block, members: Sequence[Element]) -> str:
    if len(members) < 2:
        return ""
    first = min(members, key=lambda e: (e.rect.top, e.rect.left))
    if first.kind is not ElementKind.TEXT or not first.text:
        return ""
    same_row = [e for e in members if e is not first and _overlap_y(e.rect, first.rect) > 0.5]
    if same_row:
        return ""
    top_zone = block.rect.top + max(0.3 * block.rect.height, 2 * first.rect.height)
    if first.rect.top > top_zone:
        return ""
    left_ok = first.rect.left - block.rect.left < 0.15 * max(1, block.rect.width)
    centred = abs(first.rect.center.x - block.rect.center.x) < 0.1 * max(1, block.rect.width)
    return first.text if (left_ok or centred) and len(first.text) <= 60 else ""


def _overlap_y(a: Rect, b: Rect) -> float:
    return max(0, min(a.bottom, b.bottom) - max(a.top, b.top)) / max(1, min(a.height, b.height))


def hue_signature(image: np.ndarray, r: Rect) -> np.ndarray:
    """Normalised histogram: 12 hue bins of saturated pixels, plus grey-dark and grey-light bins."""
    crop = image[r.top : r.bottom, r.left : r.right]
    if crop.size == 0:
        return np.zeros(14, np.float32)
    return _hue_histogram(cv2.cvtColor(np.ascontiguousarray(crop), cv2.COLOR_RGB2HSV))


def _hue_histogram(hsv_crop: np.ndarray) -> np.ndarray:
    """``hue_signature`` of a crop already in HSV."""
    hsv = hsv_crop.reshape(-1, 3)
    sat = (hsv[:, 1] > 60) & (hsv[:, 2] > 50)
    hist = np.zeros(14, np.float32)
    if sat.any():
        hist[:12] = np.bincount((hsv[sat, 0].astype(np.int32) * 12) // 180, minlength=12)[:12]
    grey = ~sat
    hist[12] = float((grey & (hsv[:, 2] < 128)).sum())
    hist[13] = float((grey & (hsv[:, 2] >= 128)).sum())
    return hist / max(1.0, hist.sum())


def _hue_signatures(image: np.ndarray, rects: Sequence[Rect]) -> list[np.ndarray]:
    """``hue_signature`` of each box; boxes inside the image share one conversion of the
    region around them (HSV is per pixel, so each crop reads the same values)."""
    h, w = image.shape[:2]
    if len(rects) < 2 or not all(0 <= r.left <= r.right <= w and 0 <= r.top <= r.bottom <= h for r in rects):
        return [hue_signature(image, r) for r in rects]
    left, top = min(r.left for r in rects), min(r.top for r in rects)
    right, bottom = max(r.right for r in rects), max(r.bottom for r in rects)
    if right <= left or bottom <= top:
        return [hue_signature(image, r) for r in rects]
    hsv = cv2.cvtColor(np.ascontiguousarray(image[top:bottom, left:right]), cv2.COLOR_RGB2HSV).reshape(-1, 3)
    # each pixel's bin as _hue_histogram counts it (14: a hue past the twelve bins, not counted)
    sat = (hsv[:, 1] > 60) & (hsv[:, 2] > 50)
    hue = (hsv[:, 0].astype(np.int32) * 12) // 180
    bins = np.where(sat, np.where(hue < 12, hue, 14), np.where(hsv[:, 2] < 128, 12, 13)).reshape(bottom - top, right - left)
    out = []
    for r in rects:
        if not r.area:
            out.append(np.zeros(14, np.float32))
            continue
        hist = np.bincount(bins[r.top - top : r.bottom - top, r.left - left : r.right - left].ravel(), minlength=15)[:14].astype(np.float32)
        out.append(hist / max(1.0, hist.sum()))
    return out


def active_member(image: np.ndarray, members: Sequence[Element], *, min_margin: float = 0.12) -> str | None:
    """The element whose hue distribution differs most from the rest (None if no clear winner)."""
    items = _tab_items([m for m in members if m.kind in (ElementKind.BUTTON, ElementKind.TEXT, ElementKind.IMAGE)])
    if len(items) < 2:
        return None
    sigs = _hue_signatures(image, [m.rect for m in items])
    k = len(sigs)
    if k <= 64:  # every "all the others" at once: row i of ``rest`` lists the items but i, in order
        stacked = np.stack(sigs)
        rest = np.array([[j for j in range(k) if j != i] for i in range(k)])
        dists = [float(d.sum()) for d in np.abs(stacked - stacked[rest].mean(axis=1))]
    else:
        dists = [float(np.abs(sg - np.mean([o for j, o in enumerate(sigs) if j != i], axis=0)).sum()) for i, sg in enumerate(sigs)]
    order = np.argsort(dists)[::-1]
    best, second = dists[order[0]], dists[order[1]] if len(order) > 1 else 0.0
    if best < 0.25 or best - second < min_margin:
        return None
    return items[int(order[0])].id


def annotate(image: np.ndarray | None, blocks: Sequence[Block], elements: Sequence[Element]) -> tuple[list[Block], list[Element]]:
    """Add captions and active tabs to blocks; mark the active tab's element ``selected``."""
    out_blocks: list[Block] = []
    selected: set[str] = set()
    by_id = {e.id: e for e in elements}
    for b in blocks:
        members = [by_id[i] for i in b.element_ids if i in by_id]
        caption = b.caption or _caption(b, members)
        active = b.active_child
        if active is None and b.role == "tab_bar":
            pre = [m for m in members if m.selected]
            if len(pre) == 1:
                active = pre[0].id
            elif image is not None:
                active = active_member(image, members)
        if active:
            selected.add(active)
        out_blocks.append(replace(b, caption=caption, active_child=active))
    els = [replace(e, selected=True) if e.id in selected and not e.selected else e for e in elements]
    return out_blocks, els
