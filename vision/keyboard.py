"""The soft keyboard: found as one block, so its keys are not read as the app's controls.

An on-screen keyboard is drawn by another window than the app's: the app's accessibility
tree has no node for it, so every key would otherwise be "on the screen, not in the
tree", and thirty keys would each be a box of their own.  ``find_keyboard`` recognises
one from the layout of what the pixels show, never from words: keys are small boxes the
detector found and single characters OCR read (a letter of any script; digits alone are
a calendar's or a keypad's), none of them accounted for by a tree node; at least
``MIN_ROWS`` rows of at least ``MIN_KEYS`` keys each, one close below the other, spread
across most of the width, in the lower part of the screen.  The keyboard is the full
width from its first row of keys (and a strip of icons just above it, the suggestion
bar) down to the last pixel-only box that follows below (the space-bar row).  Keys may
be marked covered (the app's window ends above the keyboard, so the occlusion stage reads
the keyboard as lying outside the top window): they count all the same.

``keyboard_blocks`` puts the found keyboard into a parse's blocks as one ``Block`` with
role ``keyboard`` (replacing the blocks it covers) and drops the tree-versus-pixels notes
about its keys.  A keypad that the app draws itself (a dialer, a calculator) is in the
tree and is not a soft keyboard.  Pure functions over elements and text spans: no image,
no I/O, no Qt.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from statistics import median

from vision.geometry import Rect
from vision.types import (
    KEYBOARD_ROLE,
    Block,
    Disagreement,
    Element,
    ElementKind,
    ElementSource,
    ScreenParse,
    TextSpan,
)

#: The role of the keyboard's block.
ROLE = KEYBOARD_ROLE
#: Keys a row needs to count as a row of keys (a QWERTY row has 9 to 11).
MIN_KEYS = 6
#: Rows of keys a keyboard needs.
MIN_ROWS = 2
#: The centres of a row's keys spread over at least this share of the screen's width.
MIN_SPAN = 0.5
#: A key is at most this share of the screen's width wide (the space bar is left to the extension).
MAX_KEY_WIDTH = 0.17
#: Two keys of a row are at least this share of the screen's width apart (centre to centre).
MIN_PITCH = 0.045
#: The keyboard's rows have their centres below this share of the screen's height.
TOP_LIMIT = 0.4
#: Disagreement kinds that say "the pixels show it, the tree does not".
_SCREEN_ONLY = ("only_on_screen", "missing_in_tree")
_BARS = (ElementKind.STATUS_BAR, ElementKind.NAVIGATION_BAR)


@dataclass(frozen=True, slots=True)
class _Key:
    x: float
    y: float
    rect: Rect


def _pixel_only(e: Element) -> bool:
    return e.source is not ElementSource.HIERARCHY and e.kind not in _BARS and e.kind is not ElementKind.CONTAINER


def _one_character(text: str) -> bool:
    t = "".join(text.split())
    return 0 < len(t) <= 2 and not t.isdigit() and any(c.isalpha() for c in t)


def _keys(elements: Sequence[Element], spans: Sequence[TextSpan], width: int, height: int) -> list[_Key]:
    """Boxes and single characters that may be keys, each once (a character inside a box is that box)."""
    boxes = [e.rect for e in elements
             if _pixel_only(e) and 0 < e.rect.width <= MAX_KEY_WIDTH * width and e.rect.height <= 0.12 * height
             and e.rect.center.y >= TOP_LIMIT * height]
    tree = [e.rect for e in elements if e.source is ElementSource.HIERARCHY and e.kind not in _BARS
            and e.kind is not ElementKind.CONTAINER and e.rect.area < 0.05 * width * height]
    keys = [_Key(r.center.x, r.center.y, r) for r in boxes]
    for s in spans:
        c = s.rect.center
        if not _one_character(s.text) or c.y < TOP_LIMIT * height:
            continue
        if any(r.contains(c) for r in boxes) or any(r.contains(c) for r in tree):
            continue
        keys.append(_Key(c.x, c.y, s.rect))
    return keys


def _rows(keys: list[_Key]) -> list[list[_Key]]:
    """Keys grouped by the line their centres lie on."""
    if not keys:
        return []
    tol = 0.35 * median(k.rect.height for k in keys)
    rows: list[list[_Key]] = []
    for k in sorted(keys, key=lambda k: k.y):
        if rows and abs(k.y - median(r.y for r in rows[-1])) <= tol:
            rows[-1].append(k)
        else:
            rows.append([k])
    return rows


def _key_row(row: list[_Key], width: int) -> bool:
    xs = sorted(k.x for k in row)
    distinct = [xs[0]] if xs else []
    for x in xs[1:]:
        if x - distinct[-1] >= MIN_PITCH * width:
            distinct.append(x)
    return len(distinct) >= MIN_KEYS and distinct[-1] - distinct[0] >= MIN_SPAN * width


def find_keyboard(elements: Sequence[Element], width: int, height: int,
                  spans: Sequence[TextSpan] = ()) -> Rect | None:
    """Where a soft keyboard is on a screen of ``width`` x ``height``, or None."""
    if width <= 0 or height <= 0:
        return None
    rows = _rows(_keys(elements, spans, width, height))
    keyed = [i for i, r in enumerate(rows) if _key_row(r, width)]
    if len(keyed) < MIN_ROWS:
        return None
    pitch = median(max(k.rect.height for k in rows[i]) for i in keyed)  # a row's height, keys' boxes included
    runs: list[list[int]] = []  # runs of key rows, each close below the previous one
    for i in keyed:
        if runs and median(k.y for k in rows[i]) - median(k.y for k in rows[runs[-1][-1]]) <= 1.8 * pitch:
            runs[-1].append(i)
        else:
            runs.append([i])
    run = max(runs, key=len)
    if len(run) < MIN_ROWS:
        return None
    top = min(k.rect.top for k in rows[run[0]])
    bottom = max(k.rect.bottom for k in rows[run[-1]])
    # the suggestion strip above and the space-bar row below: pixel-only boxes that follow on
    loose = [e.rect for e in elements if _pixel_only(e) and e.rect.height <= 1.6 * pitch]
    for r in sorted(loose, key=lambda r: -r.bottom):
        if r.bottom <= top and top - r.bottom <= 0.5 * pitch and r.top >= TOP_LIMIT * height:
            top = r.top
    for r in sorted(loose, key=lambda r: r.top):
        if top <= r.top <= bottom + 0.5 * pitch and r.bottom > bottom:
            bottom = r.bottom
    bars = [e.rect.top for e in elements if e.kind is ElementKind.NAVIGATION_BAR and e.rect.top >= top]
    return Rect(0, max(0, top), width, min([height, bottom, *bars]))


def with_keyboard(parse: ScreenParse) -> ScreenParse:
    """``parse`` with its soft keyboard as one block and its keys' screen-only notes dropped."""
    blocks, notes = keyboard_blocks(parse.elements, parse.blocks, parse.disagreements, parse.screen_size.width,
                                    parse.screen_size.height, parse.text_spans)
    return parse if blocks is parse.blocks else replace(parse, blocks=blocks, disagreements=notes)


def keyboard_blocks(elements: Sequence[Element], blocks: tuple[Block, ...], notes: tuple[Disagreement, ...],
                    width: int, height: int, spans: Sequence[TextSpan] = ()
                    ) -> tuple[tuple[Block, ...], tuple[Disagreement, ...]]:
    """``blocks`` with the soft keyboard's block (replacing the blocks of its keys) and
    ``notes`` less the keys' screen-only ones; both returned as given without a keyboard."""
    if any(b.role == ROLE for b in blocks):
        return blocks, notes
    rect = find_keyboard(elements, width, height, spans)
    if rect is None:
        return blocks, notes
    keys = tuple(e.id for e in elements if _pixel_only(e) and rect.contains(e.rect.center))
    kept: list[Block] = []
    taken = set(keys)
    for b in blocks:
        inter = b.rect.intersection(rect)
        if inter is not None and inter.area >= 0.6 * max(1, b.rect.area):
            continue  # a block of keys: the keyboard's block replaces it
        ids = tuple(i for i in b.element_ids if i not in taken)
        if ids or not b.element_ids:
            kept.append(replace(b, element_ids=ids))
    return (*kept, Block(id=ROLE, role=ROLE, rect=rect, element_ids=keys)), without_keys(notes, rect)


def keyboard_rect(parse: ScreenParse) -> Rect | None:
    """The keyboard block's box of ``parse``, if it has one."""
    return next((b.rect for b in parse.blocks if b.role == ROLE), None)


def without_keys(notes: Sequence[Disagreement], keyboard: Rect | None) -> tuple[Disagreement, ...]:
    """``notes`` less the screen-only ones about keys of ``keyboard``."""
    if keyboard is None:
        return tuple(notes)
    return tuple(n for n in notes if not (n.kind in _SCREEN_ONLY and keyboard.contains(n.rect.center)))
