"""Tree versus pixels: where the accessibility tree and the screen tell different stories.

The fused parse cannot show this on its own: with ``ocr_tree_gaps`` the tree's words are
masked out of the image before OCR and come back as text spans, so the tree is compared
with itself, and a vision element that overlaps any tree node (a WebView, an opaque
canvas) is merged into it silently.  Here the two readings of one moment are kept apart
and lined up:

- ``only_in_tree``: words (or a named control) the tree places where the screen shows
  nothing of the kind: a stale, hidden or off-screen node;
- ``only_on_screen``: text or a control on the screen that no tree node accounts for
  (WebView or canvas content, an image of text, a node the dump left out);
- ``text_mismatch``: the same place, different words;
- ``unnamed_in_tree``: a tappable tree node without text or description where the screen
  shows an icon the classifier recognises (a missing content description).

The keys of a soft keyboard (``vision.keyboard``) are never "only on the screen": the
keyboard is another window, absent from every app's tree by design.

``compare`` is a pure function over elements; ``ComparingParser`` wraps a screen parser
and, when asked, reads the screen's pixels alone a second time and puts the comparison in
the parse's ``disagreements``.  No Qt, no I/O.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
from rapidfuzz import fuzz

from vision.geometry import Rect, Size
from vision.hierarchy import parse_hierarchy
from vision.keyboard import keyboard_rect, without_keys
from vision.types import Disagreement, Element, ElementKind, Screen, ScreenParse, StageTiming

#: Kinds that are not compared: frames, system bars and things nobody named.
_NOT_COMPARED = {ElementKind.CONTAINER, ElementKind.UNKNOWN, ElementKind.STATUS_BAR, ElementKind.NAVIGATION_BAR}
#: Kinds whose ``text`` is drawn on the screen as words.
_WORD_KINDS = {ElementKind.TEXT, ElementKind.BUTTON, ElementKind.CHECK_BOX, ElementKind.RADIO_GROUP}
#: A tree node covering more than this share of the screen accounts for nothing by itself.
HUGE = 0.35
#: Below this similarity (0..100) two readings of the same place are different words.
MISMATCH = 60
#: From this similarity up, words on the screen are the words a tree node names.
SAME = 80

KINDS = ("only_in_tree", "only_on_screen", "text_mismatch", "unnamed_in_tree")
_DASHES = str.maketrans({"\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u00a0": " "})


def _norm(s: str) -> str:
    return " ".join(s.translate(_DASHES).lower().split())


def _names(e: Element) -> list[str]:
    out = [_norm(e.text), _norm(e.label)] + [_norm(p) for p in e.label.split(" · ")]
    return [n for n in out if n]


def _overlap(a: Rect, b: Rect) -> float:
    """Intersection over the smaller box (1.0 when one holds the other)."""
    inter = a.intersection(b)
    return inter.area / max(1, min(a.area, b.area)) if inter else 0.0


def _names_words(names: Sequence[str], words: str) -> bool:
    """Whether ``words`` read on the screen are (part of) one of a node's ``names``."""
    w = _norm(words)
    return bool(w) and any(n == w or fuzz.partial_ratio(w, n) >= SAME for n in names)


def _blank(image: np.ndarray | None, r: Rect) -> bool:
    if image is None or r.is_empty():
        return False
    crop = image[max(0, r.top):max(0, r.bottom), max(0, r.left):max(0, r.right)]
    return crop.size > 0 and float(crop.reshape(-1, crop.shape[-1]).std(axis=0).max()) < 2.0


def _inkless(image: np.ndarray | None, r: Rect) -> bool:
    """Whether nothing is drawn in ``r``: almost every pixel has the box's median colour.
    Words the tree places over drawn pixels that OCR did not read are more likely an OCR
    miss than a stale node, so only inkless places count as showing no words."""
    if image is None:
        return True
    crop = image[max(0, r.top):max(0, r.bottom), max(0, r.left):max(0, r.right)]
    if crop.size == 0:
        return True
    px = crop.reshape(-1, crop.shape[-1]).astype(np.int16)
    ink = np.abs(px - np.median(px, axis=0)).max(axis=1) > 48
    return float(ink.mean()) < 0.01


def _reading(els: Sequence[Element]) -> str:
    return " ".join(e.text for e in sorted(els, key=lambda e: (e.rect.top, e.rect.left)))


def compare(tree: Sequence[Element], seen: Sequence[Element], size: Size,
            image: np.ndarray | None = None) -> tuple[Disagreement, ...]:
    """The disagreements between ``tree`` (elements read from the dump alone) and ``seen``
    (elements found in the pixels alone) of one screen of ``size``; ``image`` (optional)
    tells a control drawn as nothing from one the detector missed.  Tree-side findings come
    first, each side in reading order; ``element_id`` is the id on its own side."""
    screen_area = max(1, size.width * size.height)
    bars = [v.rect for v in seen if v.kind in (ElementKind.STATUS_BAR, ElementKind.NAVIGATION_BAR)]
    trees = [t for t in tree if not t.covered and t.kind not in _NOT_COMPARED and not t.rect.is_empty()
             and t.rect.area <= HUGE * screen_area]
    # a clickable frame holding a row (the tree's list item) accounts for the row's parts
    holders = [t for t in tree if not t.covered and t.clickable and not t.rect.is_empty()
               and t.rect.area <= HUGE * screen_area]
    pixels = [v for v in seen if not v.covered and v.kind not in _NOT_COMPARED and not v.rect.is_empty()
              and not any(b.contains(v.rect.center) for b in bars)
              and not (v.text and len(_norm(v.text)) < 2)]  # a glyph read as a letter ("Q" for a magnifier)
    notes, mismatched = _from_tree(trees, pixels, image)
    big = HUGE * screen_area
    visible = [t for t in tree if not t.covered and not t.rect.is_empty() and t.rect.area <= big]
    return tuple(notes + _from_screen(pixels, visible, trees, holders, mismatched))


def _from_tree(trees: Sequence[Element], pixels: Sequence[Element],
               image: np.ndarray | None) -> tuple[list[Disagreement], list[Rect]]:
    """What the tree says that the pixels do not bear out, and the boxes whose words differ."""
    words_seen = [v for v in pixels if v.text]
    notes: list[Disagreement] = []
    mismatched: list[Rect] = []
    for t in trees:
        inside = [v for v in words_seen if t.rect.contains(v.rect.center) or _overlap(v.rect, t.rect) >= 0.5]
        if t.text.strip() and t.kind in _WORD_KINDS and not t.password:
            reading = _reading(inside)
            if not inside:
                if _inkless(image, t.rect):
                    notes.append(Disagreement("only_in_tree", t.rect,
                                              f"the tree says {t.text!r} here; the screen shows no words there", t.id))
            elif fuzz.partial_ratio(_norm(t.text), _norm(reading)) < MISMATCH:
                mismatched.append(t.rect)
                notes.append(Disagreement("text_mismatch", t.rect,
                                          f"the tree says {t.text!r}; the screen shows {reading!r}", t.id))
        elif not t.text.strip() and not t.label.strip() and t.clickable:
            icon = max((v for v in pixels if v.label and not v.text and _overlap(v.rect, t.rect) >= 0.5),
                       key=lambda v: _overlap(v.rect, t.rect), default=None)
            if icon is not None:
                notes.append(Disagreement("unnamed_in_tree", t.rect,
                                          f"the tree gives this {t.kind.value} no name; the screen shows "
                                          f"a {icon.label!r} icon", t.id))
        elif t.label.strip() and not t.text.strip() and _blank(image, t.rect):
            if not any(_overlap(v.rect, t.rect) >= 0.3 for v in pixels):
                notes.append(Disagreement("only_in_tree", t.rect,
                                          f"the tree has a {t.kind.value} {t.label!r} here; the screen is blank there",
                                          t.id))
    return notes, mismatched


def _from_screen(pixels: Sequence[Element], visible: Sequence[Element], trees: Sequence[Element],
                 holders: Sequence[Element], mismatched: Sequence[Rect]) -> list[Disagreement]:
    """What the pixels show that no tree node accounts for (``visible``: the tree's uncovered
    nodes of a sensible size; ``trees``: those compared; ``holders``: clickable rows)."""
    notes: list[Disagreement] = []
    for v in pixels:
        if v.text:
            near = [t for t in visible if _overlap(t.rect, v.rect) >= 0.5]
            if any(_names_words(_names(t), v.text) for t in near):
                continue
            if any(m.contains(v.rect.center) for m in mismatched):
                continue  # already said from the tree's side
            what = f"{v.text!r}" if v.kind is ElementKind.TEXT else f"a {v.kind.value} {v.text!r}"
            notes.append(Disagreement("only_on_screen", v.rect,
                                      f"the screen shows {what}; no tree node has these words", v.id))
        else:
            if any(_overlap(t.rect, v.rect) >= 0.5 for t in trees):
                continue
            if any(h.rect.contains_rect(v.rect) for h in holders):
                continue
            name = f" {v.label!r}" if v.label else ""
            notes.append(Disagreement("only_on_screen", v.rect,
                                      f"a {v.kind.value}{name} on the screen has no node in the tree", v.id))
    return notes


def matching_id(rect: Rect, elements: Sequence[Element], *, min_iou: float = 0.6) -> str | None:
    """The id of the element whose box is most like ``rect`` (IoU at least ``min_iou``)."""
    best = max(elements, key=lambda e: e.rect.iou(rect), default=None)
    return best.id if best is not None and best.rect.iou(rect) >= min_iou else None


class ComparingParser:
    """A screen parser whose parses of screens with a tree carry the tree-versus-pixels
    comparison, while ``enabled()`` says so (the user is inspecting); otherwise it is
    ``base``.  The pixels are read by a second parser in vision mode that shares ``base``'s
    backends.  Every other attribute is ``base``'s."""

    def __init__(self, base: Any, enabled: Callable[[], bool]) -> None:
        self.base = base
        self.enabled = enabled
        self._pixels: Any = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.base, name)

    def _pixel_parser(self) -> Any:
        if self._pixels is None:
            from vision.pipeline import ScreenParser

            base = self.base
            self._pixels = ScreenParser(replace(base.config, mode="vision", describe=False, blocks=False),
                                        ocr=base.ocr_backend(), detector=base.detector(),
                                        icons=base.icon_classifier())
        return self._pixels

    def parse(self, screen: Screen, *args: Any, **kwargs: Any) -> ScreenParse:
        parse: ScreenParse = self.base.parse(screen, *args, **kwargs)
        if not screen.hierarchy_xml or not self.enabled() or not hasattr(self.base, "config"):
            return parse
        t0 = time.perf_counter()
        tree = parse_hierarchy(screen.hierarchy_xml, screen.size, collapse=self.base.config.hierarchy_collapse)
        seen = self._pixel_parser().parse(Screen(image=screen.image, device=screen.device))
        notes = without_keys(compare(tree.elements, seen.elements, screen.size, screen.image), keyboard_rect(parse))
        notes = tuple(replace(n, element_id=matching_id(n.rect, parse.elements)) for n in notes)
        ms = round((time.perf_counter() - t0) * 1000, 2)
        timings = [t for t in parse.timings if t.stage != "total"]
        total = [t for t in parse.timings if t.stage == "total"]
        timings.append(StageTiming("compare", ms))
        timings += [StageTiming("total", round(t.ms + ms, 2)) for t in total]
        return replace(parse, disagreements=notes, timings=tuple(timings))
