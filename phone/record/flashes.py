"""Finding what flashed on the screen: text that appears and goes away by itself.

``FlashTracker`` is fed successive *distinct* frames of the mirror (with their wall-clock
times) and told when each step's action went to the phone.  For each change it compares
the frame before and the frame after:

* a change that covers more than ``big_fraction`` of the screen is a new page: when an
  action caused it, it is not read (reading whole pages would cost seconds of CPU beside
  the step's own parse) and only its time and place are remembered; when it came by
  itself (a dialog closing, a splash screen ending) both frames are read whole;
* in a smaller change, only the changed region (padded, and grown over text being
  followed) is read by OCR, before and after.  Text found only after *appeared* and is
  followed; text found only before *went away*.  Text replaced at the same place by text
  like it (a clock ticking, a counter, letters typed into a field) is an update, not a
  flash; replaced there by unlike text (a toast read together with a fragment of the line
  beneath it, then that line alone) it went away.

Text that went away counts as a flash (a ``Transient``) when nothing the user or agent
did caused it — no action was under way from ``lead_s`` before to ``caused_s`` after the
frame that lost it, or the one under way touched the screen away from everything that
changed in that frame (more than ``touch_margin_px``; a key press or typing counts as
touching everything) — and it had been on the screen for at most ``max_life_s``: since the
frame where it appeared, or, for text that came with a new page, since the last change that
drew over its pixels (a page that changed around a toast leaves the toast's own pixels
alone, so the toast keeps the step that showed it), or since the first frame, for text that
was already there.  So a
toast, a snackbar or a dialog that closes by itself is found, and a menu closed by a tap,
a page left with Back or a field cleared by typing are not.  Each flash is attributed to
the step whose action came last before it appeared; text seen over several frames (a
fade, a slide) is followed as one, so a toast seen once is reported once.

Pure logic on arrays: no threads, no device; the OCR is a function passed in.  Rects are
in the pixels of the frames fed.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher

import cv2
import numpy as np

from agent.transient import Transient
from vision.geometry import Rect
from vision.ocr import changed_regions, merge_rects
from vision.types import TextSpan

log = logging.getLogger(__name__)

Read = Callable[[np.ndarray], list[TextSpan]]
_WORDY = re.compile(r"[^\W\d_]{2}", re.UNICODE)


@dataclass(frozen=True, slots=True)
class FlashRules:
    """The tracker's thresholds (general: no app, wording or layout in them)."""

    big_fraction: float = 0.4  # a change over this share of the screen is a new page
    caused_s: float = 1.0  # a disappearance this soon after an action, where it touched, was caused by it
    touch_margin_px: int = 48  # how near the touch a change must be to count as caused by it (frame px)
    lead_s: float = 0.05  # ... or this long before the action was sent (clock skew)
    max_life_s: float = 12.0  # text on the screen longer than this is content, not a flash
    pad_px: int = 16  # a changed region is read with this margin
    diff_threshold: int = 24  # per-channel difference (of a 4x downscaled frame) that counts as change
    same_text: float = 0.8  # similarity at which two readings are the same text
    max_regions: int = 6  # more separate changes than this are read as one box


@dataclass
class _Followed:
    """Text seen to appear, followed until it goes away."""

    text: str
    rect: Rect
    first_seen: float
    last_seen: float
    step: int


@dataclass
class _Change:
    at: float
    rects: tuple[Rect, ...]
    big: bool
    cells: np.ndarray | None = None  # which cells of a CELL_PX grid really changed (None: all)

    def touched(self, rect: Rect) -> bool:
        """This change drew over ``rect``: at least ``CELL_SHARE`` of the cells under it
        changed (a page that changed around a toast left the toast's own pixels alone)."""
        if not any(rect.intersection(r) for r in self.rects):
            return False
        if self.cells is None:
            return True
        under = self.cells[rect.top // CELL_PX:-(-rect.bottom // CELL_PX), rect.left // CELL_PX:-(-rect.right // CELL_PX)]
        return bool(under.size) and float(under.mean()) >= CELL_SHARE


#: The grid a change's cells are kept on (frame pixels per cell), and the share of a text's
#: cells that must change for a change to count as the one that brought it.
CELL_PX = 4
CELL_SHARE = 0.25


def _changed_cells(prev: np.ndarray, cur: np.ndarray, threshold: int) -> np.ndarray | None:
    """Cells (``CELL_PX`` square) whose mean colour differs by more than ``threshold`` in a
    channel between two frames of one size (None when the sizes differ)."""
    if prev.shape != cur.shape:
        return None
    h, w = cur.shape[:2]
    size = (max(1, w // CELL_PX), max(1, h // CELL_PX))
    a = cv2.resize(prev, size, interpolation=cv2.INTER_AREA)
    b = cv2.resize(cur, size, interpolation=cv2.INTER_AREA)
    return np.asarray(cv2.absdiff(a, b).max(axis=2) > threshold)


@dataclass
class _Action:
    step: int
    started: float
    ended: float
    where: Rect | None = None  # what it touched (frame pixels); None: keys, typing, opening an app


@dataclass
class FlashTracker:
    """See the module docstring."""

    read: Read
    rules: FlashRules = field(default_factory=FlashRules)
    _prev: np.ndarray | None = None
    _first_at: float | None = None  # when the first frame was fed
    _followed: list[_Followed] = field(default_factory=list)
    _changes: list[_Change] = field(default_factory=list)
    _actions: list[_Action] = field(default_factory=list)
    reads: int = 0  # OCR calls made

    # -- what the runner says -------------------------------------------------------------
    def action(self, step: int, started: float, ended: float, where: Rect | None = None) -> None:
        """Step ``step``'s action was sent between these wall-clock times, touching
        ``where`` (told again with its real end once it is over: the entry is updated)."""
        for a in self._actions:
            if a.step == step:
                a.started, a.ended, a.where = started, ended, where
                return
        self._actions.append(_Action(step, started, ended, where))
        del self._actions[:-64]

    def step_at(self, at: float) -> int:
        """The step whose action came last before ``at`` (-1 before any)."""
        step = -1
        for a in self._actions:
            if a.started - self.rules.lead_s <= at:
                step = a.step
        return step

    def _caused(self, at: float, regions: Sequence[Rect] | None = None) -> bool:
        """An action was under way when the change at ``at`` came, and it touched one of the
        ``regions`` that changed in that frame (or touched nothing in particular: a key,
        typing): what changed then, everywhere, was its doing."""
        r = self.rules
        for a in self._actions:
            if not a.started - r.lead_s <= at <= a.ended + r.caused_s:
                continue
            if a.where is None or regions is None:
                return True
            m = r.touch_margin_px
            near = Rect(a.where.left - m, a.where.top - m, a.where.right + m, a.where.bottom + m)
            if any(region.intersection(near) for region in regions):
                return True
        return False

    # -- frames ---------------------------------------------------------------------------
    def same(self, image: np.ndarray) -> bool:
        """True when ``image`` shows what the last frame fed showed (no change to examine)."""
        if self._prev is None:
            return False
        change = changed_regions(self._prev, image, threshold=self.rules.diff_threshold)
        return change.comparable and not change.regions

    def seen_again(self, at: float) -> None:
        """The last frame fed was on the screen again at ``at`` (a repeat of it arrived)."""
        for f in self._followed:
            f.last_seen = max(f.last_seen, at)

    def feed(self, image: np.ndarray, at: float) -> list[Transient]:
        """A frame that arrived at ``at``; returns the flashes it ended (usually none)."""
        prev = self._prev
        self._prev = image
        self._expire(at)
        if prev is None:
            self._first_at = at
            return []
        change = changed_regions(prev, image, threshold=self.rules.diff_threshold)
        if not change.regions:
            self.seen_again(at)
            return []
        h, w = image.shape[:2]
        regions = self._regions(change.regions, w, h)
        area = sum(r.area for r in regions) / max(1, w * h)
        big = not change.comparable or change.fraction > self.rules.big_fraction or area > self.rules.big_fraction
        self._changes.append(_Change(at, tuple(regions) if change.comparable else (Rect(0, 0, w, h),), big,
                                     _changed_cells(prev, image, self.rules.diff_threshold)))
        log.debug("change at %.2f: %s, %d region(s), %.0f%% of the screen", at, "page" if big else "part",
                  len(regions), 100 * area)
        if big and (self._caused(at) or not change.comparable):  # (a big change holds any touch)
            return []  # a new page the user or agent asked for: nothing to read
        if big:  # the page changed by itself (a dialog closed, a splash ended): read it whole
            regions = [Rect(0, 0, w, h)]
        found: list[Transient] = []
        caused = self._caused(at, regions)
        for r in regions:
            found.extend(self._compare(prev, image, r, at, caused))
        for f in self._followed:
            if not any(f.rect.intersection(r) for r in regions):
                f.last_seen = at  # untouched by the change: still on the screen
        return found

    def _regions(self, rects: Sequence[Rect], w: int, h: int) -> list[Rect]:
        pad = self.rules.pad_px
        out = [Rect(max(0, r.left - pad), max(0, r.top - pad), min(w, r.right + pad), min(h, r.bottom + pad))
               for r in rects]
        for _ in range(3):  # grow over followed text a region touches, so it is read whole
            grown = []
            for r in out:
                for f in self._followed:
                    if f.rect.intersection(r):
                        r = r.union(f.rect)
                grown.append(r)
            grown = merge_rects(grown, gap=0)
            if grown == out:
                break
            out = grown
        if len(out) > self.rules.max_regions:
            box = out[0]
            for r in out[1:]:
                box = box.union(r)
            out = [box]
        return [r for r in out if r.width >= 8 and r.height >= 8]

    def _ocr(self, image: np.ndarray, r: Rect) -> list[TextSpan]:
        self.reads += 1
        crop = np.ascontiguousarray(image[r.top:r.bottom, r.left:r.right])
        try:
            spans = self.read(crop)
        except Exception:  # a failing read loses this change, never the capture
            log.warning("reading a changed region failed", exc_info=True)
            return []
        return [TextSpan(s.text, s.rect.translate(r.left, r.top), s.confidence) for s in spans if _wordy(s.text)]

    def _compare(self, prev: np.ndarray, cur: np.ndarray, r: Rect, at: float, caused: bool) -> list[Transient]:
        before, after = self._ocr(prev, r), self._ocr(cur, r)
        log.debug("read %s: before %s, after %s", r, [b.text for b in before], [a.text for a in after])
        gone = [b for b in before if not any(self._same_text(b.text, a.text) for a in after)]
        new = [a for a in after if not any(self._same_text(a.text, b.text) for b in before)]
        updated = [g for g in gone if any(_same_place(g.rect, n.rect) and _alike(g.text, n.text) for n in new)]
        found: list[Transient] = []
        for g in gone:
            followed = self._match(g)
            if followed is not None:
                self._followed.remove(followed)
            if g in updated or caused:
                continue
            t = self._flash(g, followed, at)
            if t is not None:
                found.append(t)
        for a in after:
            followed = self._match(a)
            if followed is not None:
                followed.last_seen, followed.rect = at, a.rect
            elif a in new:
                self._followed.append(_Followed(a.text, a.rect, at, at, self.step_at(at)))
        return [_joined(found)] if found else []

    def _flash(self, gone: TextSpan, followed: _Followed | None, at: float) -> Transient | None:
        """``gone`` left the screen by itself in the frame at ``at``: a flash, or text that
        stayed too long to be one (see the docstring)."""
        if followed is not None:
            first, step, text = followed.first_seen, followed.step, followed.text
        else:  # it came with a new page (not read), or was there when the first frame came
            came = next((c.at for c in reversed(self._changes[:-1]) if c.touched(gone.rect)), self._first_at)
            if came is None:
                return None
            first, step, text = came, self.step_at(came), gone.text
        if step < 0 or at - first > self.rules.max_life_s:
            return None  # the stream sends every change: it was on the screen until this frame came
        return Transient(text=text, first_seen=first, last_seen=at, rect=gone.rect, step=step)

    def _match(self, span: TextSpan) -> _Followed | None:
        near = max(120, 3 * span.rect.height)
        best = None
        for f in self._followed:
            if not self._same_text(f.text, span.text):
                continue
            if f.rect.intersection(span.rect) or f.rect.center.distance_to(span.rect.center) <= near:
                best = f
        return best

    def _same_text(self, a: str, b: str) -> bool:
        x, y = _norm(a), _norm(b)
        if x == y:
            return True
        return SequenceMatcher(None, x, y, autojunk=False).ratio() >= self.rules.same_text

    def _expire(self, now: float) -> None:
        limit = self.rules.max_life_s
        self._followed = [f for f in self._followed if now - f.first_seen <= limit]
        self._changes = [c for c in self._changes if now - c.at <= limit + 1.0]

    def showing(self, step: int | None = None) -> list[Transient]:
        """Text that appeared after an action (step ``step``'s, or any) and is still on the screen."""
        return [Transient(f.text, f.first_seen, f.last_seen, f.rect, f.step) for f in self._followed
                if f.step >= 0 and (step is None or f.step == step)]


def _joined(found: list[Transient]) -> Transient:
    """What went away in one place at one moment is one message (a snackbar's text and its
    action, a dialog's lines): its texts in reading order, joined by " · "."""
    if len(found) == 1:
        return found[0]
    lines: list[list[Transient]] = []
    for t in sorted(found, key=lambda t: t.rect.top):  # a line: texts whose middles share its height
        mid = (t.rect.top + t.rect.bottom) // 2
        if lines and any(o.rect.top <= mid <= o.rect.bottom for o in lines[-1]):
            lines[-1].append(t)
        else:
            lines.append([t])
    ordered = [t for line in lines for t in sorted(line, key=lambda t: t.rect.left)]
    box = ordered[0].rect
    for t in ordered[1:]:
        box = box.union(t.rect)
    first = min(found, key=lambda t: t.first_seen)
    return Transient(" · ".join(t.text for t in ordered), first.first_seen, max(t.last_seen for t in found), box,
                     first.step)


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.casefold()).split())


def _wordy(text: str) -> bool:
    """Worth following: at least two letters in a row (not a lone digit or an icon's glyph)."""
    return bool(_WORDY.search(text))


def _alike(old: str, new: str) -> bool:
    """``new`` can be ``old`` updated in place: numbers ticking (no letters in either), one
    containing the other (letters typed or deleted), or mostly the same letters ("Connecting"
    and "Connected").  A message read together with a fragment of the text beneath it
    ("Mir Link copied") and that text once the message has gone ("Mini from our audio ran")
    are not alike: the message went away."""
    a, b = _norm(old), _norm(new)
    if not _wordy(a) or not _wordy(b) or a in b or b in a:
        return True
    return SequenceMatcher(None, a, b, autojunk=False).ratio() >= 0.5


def _same_place(a: Rect, b: Rect) -> bool:
    """Two text boxes of one height on one line that start or end at the same place: the
    one replaced the other (a clock ticking, letters typed), nothing went away."""
    low, high = sorted((a.height, b.height))
    if high <= 0 or low / high < 0.7:
        return False
    if min(a.bottom, b.bottom) - max(a.top, b.top) < 0.6 * low:
        return False
    return abs(a.left - b.left) <= low // 2 or abs(a.right - b.right) <= low // 2
