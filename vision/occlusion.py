"""Occlusion: which parts of a screen lie under a dialog, a bottom sheet or a menu.

A person cannot reach what a modal panel covers: a tap there lands on the panel's scrim
(or dismisses the menu).  This module finds the top panel and says what is covered, from
two kinds of evidence:

* the accessibility tree (``tree_occlusion``): several window roots (the top app window
  that is not the largest one is a dialog or popup; the others are covered), a single
  window root that does not fill the screen (the dump holds only the dialog's window,
  as ``uiautomator dump`` of the active window and Rico's dialog screens do), and a scrim
  inside one window (a full-screen, wordless, tappable view such as Material's
  ``touch_outside`` followed by the panel drawn after it);
* the pixels (``pixel_occluder``): a dimmed full-screen layer (nothing outside the
  panel is brighter than a dimmed white) around a large, uniformly coloured panel; or,
  for a dark or textured panel, a dimmed page whose only bright content lies in one
  inset, dialog-sized box.

``mark_covered`` then flags elements outside the panel (system bars excepted).  Pure
functions over boxes, tree nodes and pixels; never drops anything, never raises on
odd input.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import cv2
import numpy as np

from vision.geometry import Rect, Size
from vision.types import Element, ElementKind

if TYPE_CHECKING:
    from vision.hierarchy_read import TreeNode

_SCRIM_IDS = ("touch_outside", "scrim", "dim_layer", "outside_touch", "dismiss_area")
_PANEL_IDS = ("design_bottom_sheet", "parentpanel", "select_dialog_listview", "alerttitle", "bottom_sheet",
              "action_menu_presenter", "popup", "dropdown")
_PANEL_CLASSES = ("dialog", "popupwindow", "dropdownlistview", "menupopup", "bottomsheet")
_SYSTEM_PACKAGES = ("com.android.systemui", "inputmethod", "keyboard")
_BARS = (ElementKind.STATUS_BAR, ElementKind.NAVIGATION_BAR)


@dataclass(frozen=True, slots=True)
class TreeOcclusion:
    """The top panel found in a tree (if any) and the covered nodes (by ``id()``)."""

    panel: Rect | None = None
    covered: frozenset[int] = frozenset()
    reason: str = ""


def _walk(n: TreeNode):
    stack = [n]
    while stack:
        m = stack.pop()
        yield m
        stack.extend(reversed(m.children))


def _has_content(n: TreeNode) -> bool:
    return any(m.has_words or m.interactive for m in _walk(n))


def _is_system(n: TreeNode) -> bool:
    pkg = n.package.lower()
    rid = n.resource_id.lower()
    return any(s in pkg for s in _SYSTEM_PACKAGES) or "statusbar" in rid or "navigationbar" in rid


def _panel_marked(n: TreeNode) -> bool:
    for m in _walk(n):
        rid = m.resource_id.lower().rsplit("/", 1)[-1]
        cls = m.class_name.lower()
        if any(p == rid or p in rid for p in _PANEL_IDS) or any(c in cls for c in _PANEL_CLASSES):
            return True
    return False


_NOT_SCRIMS = ("webview", "imageview", "scrollview", "listview", "recyclerview", "viewpager", "surfaceview",
               "textureview", "mapview", "videoview")


def _is_scrim(n: TreeNode, screen: Size) -> bool:
    """A full-screen view with no words below it, tappable or named like a scrim (never a
    content view such as a WebView, whose words the tree does not hold)."""
    if n.rect.area < 0.6 * max(1, screen.area):
        return False
    rid = n.resource_id.lower().rsplit("/", 1)[-1]
    named = any(s in rid for s in _SCRIM_IDS)
    if not named and (n.scrollable or any(c in n.class_name.lower() for c in _NOT_SCRIMS)):
        return False
    if any(m.has_words or (m is not n and m.interactive) for m in _walk(n)) and not named:
        return False
    return named or n.clickable


def _scrim_in(root: TreeNode, screen: Size) -> tuple[Rect, set[int]] | None:
    """(panel, covered node ids) for the first scrim found with a panel drawn after it."""
    order: list[TreeNode] = list(_walk(root))
    position = {id(m): i for i, m in enumerate(order)}
    parent: dict[int, TreeNode] = {}
    for m in order:
        for c in m.children:
            parent[id(c)] = m
    for m in order:
        for i, c in enumerate(m.children):
            if not _is_scrim(c, screen):
                continue
            after = [s for s in m.children[i + 1 :] if _has_content(s) and s.rect.area < 0.95 * c.rect.area]
            if not after:
                continue
            panel = after[0].rect
            for s in after[1:]:
                panel = panel.union(s.rect)
            ancestors = set()
            a: TreeNode | None = c
            while a is not None:
                ancestors.add(id(a))
                a = parent.get(id(a))
            cut = position[id(c)]
            covered = {id(x) for x in order[:cut] if id(x) not in ancestors and c.rect.contains(x.rect.center)}
            covered.add(id(c))
            return panel, covered
    return None


def tree_occlusion(roots: Sequence[TreeNode], screen: Size) -> TreeOcclusion:
    """The top window's panel and the tree nodes it covers, from cleaned window roots."""
    if not roots or screen.area <= 0:
        return TreeOcclusion()
    apps = [r for r in roots if not _is_system(r)]
    if not apps:
        return TreeOcclusion()
    covered: set[int] = set()
    panel: Rect | None = None
    reason = ""
    if len(apps) >= 2:
        largest = max(apps, key=lambda r: r.rect.area)
        marked = [r for r in apps if r is not largest and (_panel_marked(r) or _scrim_in(r, screen))]
        top = marked[-1] if marked else min((r for r in apps if r is not largest), key=lambda r: r.rect.area)
        for r in apps:
            if r is not top:
                covered.update(id(m) for m in _walk(r))
        panel, reason = top.rect, "a second window (dialog or popup) over the app"
    else:
        top = apps[0]
        if top.rect.area < 0.7 * screen.area:
            panel, reason = top.rect, "the dump holds only a dialog window"
    found = _scrim_in(top, screen)
    if found is not None:
        panel, inner = found
        covered.update(inner)
        reason = "a scrim with a panel drawn over it"
    return TreeOcclusion(panel, frozenset(covered), reason)


# --------------------------------------------------------------------------- pixels

_WORK = 4  # pixel analysis runs on a 1/4-size image
_DIMMED_WHITE = 128  # white under a scrim of at least half opacity is no brighter than this


def pixel_occluder(image: np.ndarray, bars: Sequence[Rect] = ()) -> Rect | None:
    """The panel over a dimmed screen, or None when the screen shows no scrim.

    Evidence: a large connected region of one colour (the panel's surface, grown over
    adjoining bright rows such as a highlighted item), inset from both sides or spanning
    the width at the bottom (a sheet); around it, between the system bars, nothing
    brighter than a dimmed white, while the panel is clearly brighter.
    """
    h, w = image.shape[:2]
    if h < 64 or w < 64:
        return None
    small = cv2.resize(image, (w // _WORK, h // _WORK), interpolation=cv2.INTER_AREA)
    sh, sw = small.shape[:2]
    top, bottom = int(0.035 * sh), sh - int(0.05 * sh)
    for b in bars:
        if b.top <= 0.1 * h:
            top = max(top, b.bottom // _WORK)
        elif b.bottom >= 0.9 * h:
            bottom = min(bottom, b.top // _WORK)
    if bottom - top < sh // 3:
        return None
    region = small[top:bottom]
    gray = cv2.cvtColor(region, cv2.COLOR_RGB2GRAY)
    q = region.astype(np.int32) >> 4  # 16 levels a channel: tolerant of JPEG noise
    codes = (q[:, :, 0] << 8) | (q[:, :, 1] << 4) | q[:, :, 2]
    values, counts = np.unique(codes, return_counts=True)
    rh, rw = gray.shape
    kernel = np.ones((5, 5), np.uint8)
    for code in values[np.argsort(counts)[::-1][:6]]:
        mask = cv2.morphologyEx((codes == code).astype(np.uint8), cv2.MORPH_CLOSE, kernel)
        n, _labels, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=4)
        if n <= 1:
            continue
        k = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
        x, y, bw, bh, area = (int(v) for v in stats[k])
        if not 0.04 * rh * rw <= bw * bh <= 0.85 * rh * rw or area < 0.55 * bw * bh or bh > 0.92 * rh:
            continue
        y, bh = _grow_bright_rows(gray, x, y, bw, bh)
        inset = x > 0.02 * rw and x + bw < 0.98 * rw
        sheet = bw >= 0.9 * rw and y + bh >= rh - 3 and y > 0.2 * rh  # a dimmed page shows above it
        if not (inset or sheet):
            continue
        outside = np.ones_like(gray, dtype=bool)
        outside[max(0, y - 3) : y + bh + 3, max(0, x - 3) : x + bw + 3] = False
        if outside.sum() < 0.05 * rh * rw:
            continue
        out_px = gray[outside]
        in_px = gray[y : y + bh, x : x + bw]
        out_hi = float(np.percentile(out_px, 99.5))
        surface = float(np.median(in_px))
        if out_hi <= 200 and float(np.percentile(in_px, 99)) >= out_hi + 40 and float(out_px.mean()) < surface - 10:
            return Rect(x * _WORK, (y + top) * _WORK, min(w, (x + bw) * _WORK), min(h, (y + top + bh) * _WORK))
    lit = _lit_panel(gray)
    if lit is not None:
        x, y, bw, bh = lit
        return Rect(x * _WORK, (y + top) * _WORK, min(w, (x + bw) * _WORK), min(h, (y + top + bh) * _WORK))
    return None


def _lit_panel(gray: np.ndarray, *, lit: int = 200, margin: int = 3) -> tuple[int, int, int, int] | None:
    """A dialog whose surface is not one flat colour (a dark or textured panel, as Holo
    dialogs draw): on a heavily dimmed page, the only content still brighter than ``lit``
    is the panel's, so the box around every bright pixel (grown by ``margin``) is the
    panel, provided it is inset from both sides, of dialog size, and the page around it
    is dim but not blank."""
    rh, rw = gray.shape
    ys, xs = np.nonzero(gray > lit)
    if len(xs) < 0.002 * rh * rw:
        return None
    x0, x1 = max(0, int(xs.min()) - margin), min(rw, int(xs.max()) + 1 + margin)
    y0, y1 = max(0, int(ys.min()) - margin), min(rh, int(ys.max()) + 1 + margin)
    bw, bh = x1 - x0, y1 - y0
    if not (x0 > 0.05 * rw and x1 < 0.95 * rw) or not 0.04 * rh * rw <= bw * bh <= 0.6 * rh * rw:
        return None
    outside = np.ones_like(gray, dtype=bool)
    outside[y0:y1, x0:x1] = False
    out_px = gray[outside]
    if float(np.percentile(out_px, 99.9)) > _DIMMED_WHITE:
        return None  # something outside is brighter than a dimmed white: the page is not dimmed
    if float(np.mean(np.abs(out_px.astype(np.int16) - int(np.median(out_px))) > 12)) < 0.1:
        return None  # nothing drawn around it: a lone card on a flat page, not a dimmed screen
    frame = _ring(gray, x0, y0, x1, y1, 0, margin)
    page = _ring(gray, x0, y0, x1, y1, 3 * margin, 5 * margin)
    if frame is None or page is None or abs(float(np.median(frame)) - float(np.median(page))) < 25:
        return None  # no panel edge around the bright content: it sits on the page itself
    return x0, y0, bw, bh


def _ring(gray: np.ndarray, x0: int, y0: int, x1: int, y1: int, inner: int, outer: int) -> np.ndarray | None:
    """The pixels between the box grown by ``inner`` and by ``outer`` (None when the ring
    leaves the image on any side)."""
    rh, rw = gray.shape
    if x0 - outer < 0 or y0 - outer < 0 or x1 + outer > rw or y1 + outer > rh:
        return None
    mask = np.zeros_like(gray, dtype=bool)
    mask[y0 - outer : y1 + outer, x0 - outer : x1 + outer] = True
    mask[y0 - inner : y1 + inner, x0 - inner : x1 + inner] = False
    return gray[mask]


def _grow_bright_rows(gray: np.ndarray, x: int, y: int, bw: int, bh: int, *, floor: int = 200) -> tuple[int, int]:
    """Extend a panel's box up and down over rows that are bright across its width: a
    pressed or highlighted row, a header or a button bar in another light colour belongs
    to the same panel (a dimmed layer is never that bright)."""
    span = gray[:, x : x + bw]
    if span.size == 0:
        return y, bh
    bright = np.median(span, axis=1) >= floor
    top, bottom = y, y + bh
    while top > 0 and bright[top - 1]:
        top -= 1
    while bottom < len(bright) and bright[bottom]:
        bottom += 1
    return top, bottom - top


# --------------------------------------------------------------------------- marking


def mark_covered(elements: Sequence[Element], panel: Rect | None, *, keep: frozenset[str] = frozenset(),
                 force: frozenset[str] = frozenset(), min_inside: float = 0.8) -> list[Element]:
    """Elements with ``covered`` set: outside ``panel`` (less than ``min_inside`` of the box
    inside it), not a system bar nor inside one.  Ids in ``force`` are covered whatever
    their box; ids in ``keep`` never are."""
    bars = [e.rect for e in elements if e.kind in _BARS]
    out: list[Element] = []
    for e in elements:
        covered = e.id in force
        if panel is not None and not covered and e.kind not in _BARS and not any(b.contains(e.rect.center) for b in bars):
            inter = e.rect.intersection(panel)
            covered = (inter.area if inter else 0) < min_inside * max(1, e.rect.area)
        if e.id in keep:
            covered = False
        out.append(replace(e, covered=covered) if covered != e.covered else e)
    return out
