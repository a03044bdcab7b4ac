"""Rows of a plain list from pixels: a menu or a list whose entries are single lines of
words, with no icon before them and nothing at their right end.

``vision.rows`` needs a leading icon or a mark at a row's right end to tell a list row
from a line of text.  A drop-down menu, a navigation drawer or a plain list of choices
has neither: what makes its lines entries is their rhythm.  ``find_plain_rows`` takes a
run of at least ``MIN_RUN`` single lines of similar height that start at the same left
edge, one under the other at an even pitch of at least ``MIN_PITCH`` line heights (a
paragraph's lines follow each other closer; a form's labels have fields between them),
with no other words between them, and makes each line with nothing beside it a
``list_item`` row: from a little left of its words to where the flat background right of
them ends, over the band halfway to its neighbours.  Lines already inside a row or tile are left alone.

Rules over geometry and background pixels only: no app, no words.  Pure function over
pixels and elements; adds elements, never changes one.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from vision.geometry import Rect
from vision.rows import MAX_TITLE_DP, START_SHARE, plain_end
from vision.types import Element, ElementKind, ElementSource

MIN_RUN = 3
MIN_PITCH = 1.8  # entries are at least this many line heights apart
MAX_PITCH = 4.0  # ... and at most this many (further apart, they are sections)
EVEN = 0.15  # the pitch varies by at most this share of its mean
ALIGN = 0.3  # lines start within this many line heights of each other
SIZE = 0.25  # line heights differ by at most this share

_GROUPS = ("list_item", "tile")


def find_plain_rows(image: np.ndarray, elements: Sequence[Element]) -> list[Element]:
    """The rows of plain lists on the screen (ids ``p1..``), clickable ``list_item`` containers."""
    H, W = image.shape[:2]
    unit = W / 411.0
    groups = [g.rect for g in elements if g.kind is ElementKind.CONTAINER and g.class_name in _GROUPS and not g.covered]
    texts = sorted((e for e in elements if e.kind is ElementKind.TEXT and e.text and not e.covered),
                   key=lambda e: (e.rect.top, e.rect.left))
    lines = [t for t in texts if t.rect.height <= MAX_TITLE_DP * unit and t.rect.left <= START_SHARE * W
             and not any(g.contains(t.rect.center) for g in groups)]
    rows: list[Element] = []
    used: set[str] = set()
    for first in lines:
        if first.id in used:
            continue
        run = _run_from(first, lines, texts)
        if len(run) < MIN_RUN:
            continue
        used.update(t.id for t in run)
        pitch = (run[-1].rect.center.y - run[0].rect.center.y) / (len(run) - 1)
        for t in run:
            c = t.rect.center.y
            top, bottom = max(0, round(c - pitch / 2)), min(H, round(c + pitch / 2))
            left = max(0, t.rect.left - round(12 * unit))
            right = plain_end(image, t.rect, t.rect.right, unit)
            if any(o is not t and t.rect.right < o.rect.center.x < right and top < o.rect.center.y < bottom
                   and o.kind is not ElementKind.CONTAINER for o in elements):
                continue  # something beside the words (a field, a value, a switch): not a plain entry
            rows.append(Element(f"p{len(rows) + 1}", ElementKind.CONTAINER, Rect(left, top, right, bottom),
                                label=t.text, class_name="list_item", clickable=True,
                                source=ElementSource.DETECTOR, confidence=0.4))
    return rows


def _run_from(first: Element, lines: Sequence[Element], texts: Sequence[Element]) -> list[Element]:
    """The evenly pitched lines under ``first`` that start where it starts."""
    h = first.rect.height
    run = [first]
    pitch: float | None = None
    for t in lines:
        last = run[-1]
        if t.rect.top <= last.rect.bottom or abs(t.rect.left - first.rect.left) > ALIGN * h:
            continue
        if abs(t.rect.height - h) > SIZE * h:
            continue
        step = t.rect.center.y - last.rect.center.y
        if step > MAX_PITCH * h:
            break
        if step < MIN_PITCH * h or (pitch is not None and abs(step - pitch) > EVEN * pitch):
            continue
        if any(o is not last and o is not t and last.rect.bottom <= o.rect.center.y <= t.rect.top
               and o.rect.left < first.rect.left + 0.5 * first.rect.width for o in texts):
            break  # other words between them: not one list
        pitch = step if pitch is None else pitch
        run.append(t)
    return run
