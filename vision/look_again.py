"""A closer second reading of part of a screen, for words the first parse did not find.

The first parse reads the whole frame at the text detector's working size, so on a tall
1080x2400 screen a line of small grey text, or light text on a coloured plate, can be too
small to be seen.  ``read_closer`` crops a region into strips and reads each strip at
``scale`` times its own size (small crops upscaled), so the detector sees text several
times larger than in the first pass.  ``with_found`` adds the lines it found that the
parse does not already hold, as text elements of the same parse (new ids after the last
one; nothing else changes).  Pure functions over an image, spans and a parse, plus the
injected OCR backend.  It never decides whether a second look is needed: the caller does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import cv2
import numpy as np

from vision.describe import describe
from vision.geometry import Rect
from vision.ocr import OcrBackend
from vision.types import Element, ElementKind, ElementSource, ScreenParse, TextSpan

STRIP_SHARE = 0.22  # a strip is this share of the screen's height (with an overlap of a fifth of it)
SCALE = 1.6  # each strip is read this many times larger than it is on the screen


def strips(region: Rect, height: int, share: float = STRIP_SHARE) -> list[Rect]:
    """``region`` cut into horizontal strips of ``share * height`` rows, overlapping by a fifth."""
    step = max(16, round(share * height))
    overlap = step // 5
    out: list[Rect] = []
    top = region.top
    while top < region.bottom:
        bottom = min(region.bottom, top + step)
        out.append(Rect(region.left, top, region.right, bottom))
        if bottom >= region.bottom:
            break
        top = bottom - overlap
    return out


def read_closer(image: np.ndarray, region: Rect, ocr: OcrBackend, *, scale: float = SCALE) -> list[TextSpan]:
    """Text lines in ``region`` read strip by strip at ``scale`` times the screen's size,
    in screen pixels (lines read twice where strips overlap are kept once)."""
    h, w = image.shape[:2]
    region = Rect(max(0, region.left), max(0, region.top), min(w, region.right), min(h, region.bottom))
    spans: list[TextSpan] = []
    for s in strips(region, h):
        crop = np.ascontiguousarray(image[s.top : s.bottom, s.left : s.right])
        if crop.shape[0] < 8 or crop.shape[1] < 8:
            continue
        big = cv2.resize(crop, (round(crop.shape[1] * scale), round(crop.shape[0] * scale)), interpolation=cv2.INTER_CUBIC)
        for t in ocr.read(big):
            r = t.rect
            back = Rect(s.left + int(r.left / scale), s.top + int(r.top / scale),
                        s.left + round(r.right / scale), s.top + round(r.bottom / scale))
            spans.append(TextSpan(t.text, back, t.confidence))
    return _once(spans)


def _once(spans: Sequence[TextSpan]) -> list[TextSpan]:
    out: list[TextSpan] = []
    for t in sorted(spans, key=lambda t: -t.confidence):
        if any(o.rect.iou(t.rect) > 0.4 for o in out):  # one line read twice (strips overlap)
            continue
        out.append(t)
    return out


def new_lines(parse: ScreenParse, spans: Sequence[TextSpan]) -> list[TextSpan]:
    """The spans no element of ``parse`` already holds: none whose box mostly covers the
    span carries its words (or any words, for a text element in the same place)."""
    out = []
    for t in spans:
        c = t.rect.center
        known = False
        for e in parse.elements:
            if not e.rect.contains(c):
                continue
            words = f"{e.text} {e.label}".casefold()
            if t.text.casefold() in words or (e.kind is ElementKind.TEXT and e.rect.iou(t.rect) > 0.4):
                known = True
                break
        if not known:
            out.append(t)
    return out


def with_found(parse: ScreenParse, spans: Sequence[TextSpan]) -> ScreenParse:
    """``parse`` with one text element per span added (ids after the largest numeric id),
    and its description, when it has one, written again so that a model reads them too."""
    if not spans:
        return parse
    ids = [int(e.id) for e in parse.elements if e.id.isdigit()]
    start = max(ids, default=0) + 1
    added = [Element(str(start + i), ElementKind.TEXT, t.rect, text=t.text, source=ElementSource.OCR,
                     confidence=t.confidence, clickable=False) for i, t in enumerate(spans)]
    elements = parse.elements + tuple(added)
    text = parse.description
    if text:
        head = text.split("\n", 1)[0]  # names the app, which the parse does not keep
        body = describe(parse.screen_size, [e for e in elements if not e.covered], parse.blocks,
                        covered=sum(e.covered for e in elements))
        text = "\n".join([head, *body.split("\n")[1:]])
    return replace(parse, elements=elements, text_spans=parse.text_spans + tuple(spans), description=text)
