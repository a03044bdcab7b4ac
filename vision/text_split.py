"""Split an OCR line that is really several labels side by side (a tab strip, a toolbar).

The text detector joins words on one baseline into one line even when wide empty gaps
part them ("Chats    Flagged    Unread"), so a strip of tabs comes back as one span and
becomes one element.  A gap inside a line wider than ``GAP`` line heights is never a
space between two words of one label: ``split_wide_gaps`` cuts the span's box at such
gaps (columns of the box with no ink against the line's background) and gives each piece
the words whose estimated place (by their share of the line's characters) falls in it.
A line whose words cannot be shared out that way is kept whole.  Pure function over the
image and spans.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from vision.geometry import Rect
from vision.types import TextSpan

GAP = 1.3  # an empty run this many line heights wide parts two labels
INK = 40  # grey levels off the line's background: a stroke


def pieces(image: np.ndarray, rect: Rect) -> list[tuple[int, int]]:
    """The ``(left, right)`` runs of ``rect`` holding ink, parted by gaps wider than ``GAP`` heights."""
    crop = image[rect.top : rect.bottom, rect.left : rect.right].astype(np.int16)
    if crop.size == 0 or crop.shape[1] < 4:
        return [(rect.left, rect.right)]
    ground = np.median(np.concatenate([crop[:, 0], crop[:, -1], crop[0], crop[-1]]), axis=0)
    ink = (np.abs(crop - ground).max(axis=2) > INK).any(axis=0)
    cols = np.flatnonzero(ink)
    if len(cols) == 0:
        return [(rect.left, rect.right)]
    gap = GAP * rect.height
    runs: list[tuple[int, int]] = []
    start = prev = int(cols[0])
    for c in cols[1:]:
        c = int(c)
        if c - prev > gap:
            runs.append((rect.left + start, rect.left + prev + 1))
            start = c
        prev = c
    runs.append((rect.left + start, rect.left + prev + 1))
    return runs


def split_wide_gaps(image: np.ndarray, spans: Sequence[TextSpan]) -> list[TextSpan]:
    out: list[TextSpan] = []
    for s in spans:
        words = s.text.split()
        if len(words) < 2:
            out.append(s)
            continue
        runs = pieces(image, s.rect)
        if len(runs) < 2:
            out.append(s)
            continue
        out.extend(_share(s, words, runs))
    return out


def _share(s: TextSpan, words: list[str], runs: list[tuple[int, int]]) -> list[TextSpan]:
    """Words to the runs their estimated middles fall in (nearest run); whole when a run stays empty."""
    left, width = runs[0][0], runs[-1][1] - runs[0][0]
    total = sum(len(w) for w in words) + len(words) - 1
    groups: list[list[str]] = [[] for _ in runs]
    at = 0
    for w in words:
        mid = left + width * (at + len(w) / 2) / max(1, total)
        at += len(w) + 1
        i = min(range(len(runs)), key=lambda k: 0 if runs[k][0] <= mid <= runs[k][1] else min(abs(mid - runs[k][0]), abs(mid - runs[k][1])))
        groups[i].append(w)
    if any(not g for g in groups):
        return [s]
    return [TextSpan(" ".join(g), Rect(a, s.rect.top, b, s.rect.bottom), s.confidence) for g, (a, b) in zip(groups, runs, strict=True)]
