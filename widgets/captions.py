"""Where an overlay caption goes, so that it belongs to its box and to no other.

A caption (an element's name, a block's caption, a disagreement's kind) names one box on
the mirror, its *owner*.  It is put, in this order of preference:

1. inside the owner, in space that holds no other box and no words (a Settings row has
   room at its right end) — unless the owner holds no other box (an icon: its picture
   stays visible) or the caption would cover much of it;
2. against the owner's edge, outside it (above, below, beside), where it lies on no
   other box;
3. a little away from the owner, on no other box, with a leader line to it.

"No other box" means no element whose box does not hold the owner's whole box: a caption
may lie on the list or the screen its owner is part of, never on a neighbour, a child or
a word on the screen, and never on another caption.  Each caption has an *anchor*: the
point of its owner's box it names (its own centre when inside, else the point of the
owner's edge nearest to it, chosen where no other element's box lies), so a leader never
ends on a neighbour.  A caption that finds no such place is left out (the hover card
still names the element), and a layer tries at most ``MAX_TRIES`` captions.  Placing only: ``draw_caption`` paints one; no parsing, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter, QPen

from vision.geometry import Rect
from vision.types import ElementKind, ScreenParse

#: A caption may cover at most this share of an owner it sits inside (an icon's picture stays visible).
MAX_INSIDE_SHARE = 0.35
#: Padding of a caption's box around its text, in device pixels.
PAD = 3.0
#: How far inside its owner's edge an anchor lies (so that a touching neighbour never holds it).
INSET = 2.0
#: Captions a layer tries to place at most (in reading order): a list of thousands of rows
#: shows the first ones, quickly; the hover card names every element.
MAX_TRIES = 300


@dataclass(frozen=True, slots=True)
class Caption:
    """A placed caption: its words, its box, its owner's box and the owner's point it names."""

    text: str
    rect: QRectF
    owner: QRectF
    anchor: QPointF
    leader: bool = False  # drawn with a line to the anchor (it does not touch its owner)


@dataclass
class CaptionBoard:
    """The captions already on the mirror: ``avoid`` (other layers' caption boxes, kept
    clear) and ``placed`` (the captions this layer put down)."""

    avoid: list[QRectF]
    placed: list[Caption] = field(default_factory=list)


def qrect(r: Rect) -> QRectF:
    return QRectF(r.left, r.top, r.width, r.height)


class _Buckets:
    """Boxes filed by the grid cells they touch, so "what lies near here" costs the
    neighbourhood, not the screen (a long list has thousands of elements).  Written here
    rather than taken from ``vision.spatial``: widgets import only types from below."""

    def __init__(self, boxes: list[QRectF] | None = None, cell: float = 160.0) -> None:
        self.cell = cell
        self.boxes: list[QRectF] = []
        self._cells: dict[tuple[int, int], list[int]] = {}
        for b in boxes or ():
            self.add(b)

    def _keys(self, r: QRectF) -> list[tuple[int, int]]:
        c = self.cell
        x0, x1 = int(r.left() // c), int(max(r.left(), r.right() - 1e-6) // c)
        y0, y1 = int(r.top() // c), int(max(r.top(), r.bottom() - 1e-6) // c)
        return [(x, y) for y in range(y0, y1 + 1) for x in range(x0, x1 + 1)]

    def add(self, r: QRectF) -> None:
        i = len(self.boxes)
        self.boxes.append(r)
        for key in self._keys(r):
            self._cells.setdefault(key, []).append(i)

    def near(self, r: QRectF) -> list[QRectF]:
        """The boxes that share some area with ``r``, in the order they were added."""
        found: set[int] = set()
        for key in self._keys(r):
            found.update(self._cells.get(key, ()))
        return [self.boxes[i] for i in sorted(found) if self.boxes[i].intersects(r)]


def _holds(outer: QRectF, inner: QRectF, slack: float = 1.0) -> bool:
    return (outer.left() <= inner.left() + slack and outer.top() <= inner.top() + slack
            and outer.right() >= inner.right() - slack and outer.bottom() >= inner.bottom() - slack)


def _strictly_in(p: QPointF, r: QRectF) -> bool:
    return r.left() < p.x() < r.right() and r.top() < p.y() < r.bottom()


class CaptionPlacer:
    """Finds each caption a place (see the module docstring) on one parse."""

    def __init__(self, parse: ScreenParse, font: QFont, board: CaptionBoard | None = None) -> None:
        self.screen = QRectF(0, 0, parse.screen_size.width, parse.screen_size.height)
        self.fm = QFontMetricsF(font)
        self.board = board if board is not None else CaptionBoard([])
        shown = [e for e in parse.elements if not e.covered]
        area = max(1, parse.screen_size.area)
        self._all_boxes = _Buckets([qrect(e.rect) for e in shown])
        words = [qrect(s.rect) for s in parse.text_spans]
        words += [qrect(e.rect) for e in shown
                  if e.text and e.kind is not ElementKind.STATUS_BAR and e.rect.area < 0.05 * area]
        self._all_words = _Buckets(words)
        self._taken = _Buckets(list(self.board.avoid))
        # the boxes and words near the owner being captioned
        self._boxes: list[QRectF] = []
        self._words: list[QRectF] = []
        self._near_taken: list[QRectF] = []
        self.tries = 0

    def size(self, text: str) -> tuple[float, float]:
        return self.fm.horizontalAdvance(text) + 2 * PAD, self.fm.height() + PAD

    def place(self, text: str, owner: Rect | QRectF, *, inside_first: bool = True) -> Caption | None:
        """A place for ``text`` naming ``owner``, or None when there is none (the caption is left out)."""
        if not text or self.tries >= MAX_TRIES:
            return None
        self.tries += 1
        box = owner if isinstance(owner, QRectF) else qrect(owner)
        w, h = self.size(text)
        reach = box.adjusted(-w - 4 * h, -5 * h, w + 4 * h, 5 * h)  # every candidate lies in here
        self._boxes = self._all_boxes.near(reach)
        self._words = self._all_words.near(reach)
        self._near_taken = self._taken.near(reach)
        inside = self._inside(box, w, h)
        outside = self._attached(box, w, h) + self._away(box, w, h)
        crowded = w * h > MAX_INSIDE_SHARE * box.width() * box.height()
        leaf = not any(_holds(box, e) and e != box for e in self._boxes)
        order = outside + inside if crowded or leaf or not inside_first else inside + outside
        for cand, within in order:
            if not self._free(cand, box):
                continue
            anchor = cand.center() if within else self._anchor(box, cand)
            if anchor is None:
                continue
            leader = not within and not cand.adjusted(-2, -2, 2, 2).intersects(box)
            cap = Caption(text, cand, box, anchor, leader)
            self._taken.add(cand)
            self.board.placed.append(cap)
            return cap
        return None

    # ---- candidates ------------------------------------------------------------------------
    @staticmethod
    def _inside(b: QRectF, w: float, h: float) -> list[tuple[QRectF, bool]]:
        if w > b.width() - 4 or h > b.height() - 4:
            return []
        xs = (b.right() - w - 2, b.left() + 2, b.center().x() - w / 2)
        ys = (b.top() + 2, b.center().y() - h / 2, b.bottom() - h - 2)
        return [(QRectF(x, y, w, h), True) for x in xs for y in ys]

    @staticmethod
    def _attached(b: QRectF, w: float, h: float) -> list[tuple[QRectF, bool]]:
        xs = (b.left(), b.right() - w, b.center().x() - w / 2)
        out = [QRectF(x, b.bottom() + 1, w, h) for x in xs] + [QRectF(x, b.top() - h - 1, w, h) for x in xs]
        ys = (b.top(), b.center().y() - h / 2, b.bottom() - h)
        out += [QRectF(b.right() + 1, y, w, h) for y in ys] + [QRectF(b.left() - w - 1, y, w, h) for y in ys]
        return [(r, False) for r in out]

    @staticmethod
    def _away(b: QRectF, w: float, h: float) -> list[tuple[QRectF, bool]]:
        out = []
        cx, cy = b.center().x() - w / 2, b.center().y() - h / 2
        for gap in (0.8 * h, 1.8 * h, 3.0 * h):
            out += [QRectF(cx, b.bottom() + gap, w, h), QRectF(cx, b.top() - h - gap, w, h),
                    QRectF(b.right() + gap, cy, w, h), QRectF(b.left() - w - gap, cy, w, h)]
        return [(r, False) for r in out]

    # ---- checks ------------------------------------------------------------------------------
    def _free(self, cand: QRectF, owner: QRectF) -> bool:
        """On the screen, on no caption, no words and no box but the owner's and those holding it."""
        if not self.screen.contains(cand):
            return False
        if any(cand.intersects(t) for t in self._near_taken):
            return False
        if any(cand.intersects(w) for w in self._words):
            return False
        return all(_holds(e, owner) or not cand.intersects(e) for e in self._boxes)

    def _anchor(self, owner: QRectF, cand: QRectF) -> QPointF | None:
        """The point of ``owner`` nearest to ``cand`` that no other element's box holds."""
        inner = owner.adjusted(INSET, INSET, -INSET, -INSET)
        if inner.width() <= 0 or inner.height() <= 0:
            inner = QRectF(owner.center(), owner.center())
        c = cand.center()
        near = QPointF(min(max(c.x(), inner.left()), inner.right()), min(max(c.y(), inner.top()), inner.bottom()))
        points = [near]
        for f in (0.5, 0.25, 0.75, 0.1, 0.9):  # along the same edge, then the centre
            if near.y() in (inner.top(), inner.bottom()):
                points.append(QPointF(inner.left() + f * inner.width(), near.y()))
            else:
                points.append(QPointF(near.x(), inner.top() + f * inner.height()))
        points.append(inner.center())
        for p in points:
            if all(_holds(e, owner) for e in self._boxes if _strictly_in(p, e)):
                return p
        return None


def draw_caption(p: QPainter, cap: Caption | None, bg: QColor, font: QFont, fg: QColor | None = None) -> None:
    """Paint ``cap`` (nothing for None): its filled box, its text, and its leader with a dot at the anchor."""
    if cap is None:
        return
    r = cap.rect
    if cap.leader:
        edge = QPointF(min(max(cap.anchor.x(), r.left()), r.right()), min(max(cap.anchor.y(), r.top()), r.bottom()))
        pen = QPen(bg)
        pen.setWidthF(max(1.5, r.height() / 10))
        p.setPen(pen)
        p.drawLine(edge, cap.anchor)
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(bg)
        p.drawEllipse(cap.anchor, r.height() / 6, r.height() / 6)
    p.setPen(Qt.PenStyle.NoPen)
    p.setBrush(bg)
    p.drawRoundedRect(r, 3, 3)
    p.setPen(fg or QColor("white"))
    p.setFont(font)
    p.drawText(r.adjusted(PAD, 0, 0, 0), Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft, cap.text)
