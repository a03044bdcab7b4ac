"""Fingerprints of elements and signatures of screens, for finding things again.

An element's ``Fingerprint`` (``agent.types``) keeps what survives a change of screen
size, theme or language: resource id, class, icon label, block role and caption, the
position relative to its block, and a perceptual hash of its pixels.  A screen
signature is a short string summarising a whole parse so that a replay can check that a
step had the effect it had when it was recorded.

Pure functions over core types and numpy arrays; no device, no LLM, no I/O.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np
from rapidfuzz import fuzz

from agent.types import Fingerprint
from vision.geometry import Rect, Size
from vision.types import Block, Element, ElementKind, ScreenParse

#: Kinds that are page furniture rather than content: never part of a signature.
_CHROME = {ElementKind.STATUS_BAR, ElementKind.NAVIGATION_BAR}
_HASH_SIDE = 8
_MAX_IDS = 40


# ---- image crop signature -----------------------------------------------------------


def crop_hash(image: np.ndarray | None, rect: Rect) -> str:
    """A 64-bit difference hash (dHash) of the element's pixels, as 16 hex digits.

    Gray levels are compared between horizontal neighbours on a 9x8 thumbnail, so the
    hash ignores scale.  A crop whose border is darker than its inside is inverted
    first, so a dark theme hashes like the light one.  Returns ``""`` when there is no
    image or the crop is empty.
    """
    if image is None or image.ndim != 3:
        return ""
    h, w = image.shape[:2]
    r = rect.clamp(Size(w, h))
    if r.width < 2 or r.height < 2:
        return ""
    import cv2  # local: keeps import of this module cheap

    crop = np.ascontiguousarray(image[r.top : r.bottom, r.left : r.right])
    gray = cv2.cvtColor(crop, cv2.COLOR_RGB2GRAY)
    border = np.concatenate([gray[0], gray[-1], gray[:, 0], gray[:, -1]])
    if float(border.mean()) < float(gray.mean()):
        gray = 255 - gray  # normalise polarity: dark-theme crops hash like light ones
    small = cv2.resize(gray, (_HASH_SIDE + 1, _HASH_SIDE), interpolation=cv2.INTER_AREA).astype(np.int16)
    bits = (small[:, 1:] > small[:, :-1]).flatten()
    value = 0
    for b in bits:
        value = (value << 1) | int(b)
    return f"{value:016x}"


def hash_similarity(a: str, b: str) -> float | None:
    """Similarity of two crop hashes in [0, 1], or ``None`` when either is missing.

    A dark theme inverts brightness, which flips every gradient bit, so the inverted
    hash is compared too and the better of the two is kept.
    """
    if not a or not b or len(a) != len(b):
        return None
    x = int(a, 16) ^ int(b, 16)
    nbits = 4 * len(a)
    dist = bin(x).count("1")
    return max(1.0 - dist / nbits, dist / nbits)


# ---- element fingerprints -------------------------------------------------------------


def relative_position(rect: Rect, frame: Rect) -> tuple[float, float]:
    """The rect's centre relative to ``frame`` (0..1 each way, clamped)."""
    c = rect.center
    fx = (c.x - frame.left) / frame.width if frame.width else 0.5
    fy = (c.y - frame.top) / frame.height if frame.height else 0.5
    return (min(1.0, max(0.0, fx)), min(1.0, max(0.0, fy)))


def frame_of(parse: ScreenParse, element: Element) -> tuple[Block | None, Rect]:
    """The element's block and the rect its relative position is measured against."""
    block = parse.block_of(element.id)
    if block is not None and block.rect.width > 0 and block.rect.height > 0:
        return block, block.rect
    return block, Rect(0, 0, parse.screen_size.width, parse.screen_size.height)


def inner_text(parse: ScreenParse, element: Element) -> str:
    """The element's text, or for a row whose words are children, the first child text
    (reading order): the name a user would read off it."""
    if element.text:
        return element.text
    inside = [e for e in parse.elements
              if e.id != element.id and e.text and element.rect.contains_rect(e.rect)
              and e.kind not in (ElementKind.SWITCH, ElementKind.CHECK_BOX)]
    inside.sort(key=lambda e: (e.rect.top, e.rect.left))
    return inside[0].text if inside else ""


def crop_rect(parse: ScreenParse, element: Element) -> Rect:
    """Where an element's pixels are most its own: the icon inside a row (which no
    language or theme changes), else the element itself."""
    if element.kind in (ElementKind.IMAGE, ElementKind.SWITCH, ElementKind.CHECK_BOX):
        return element.rect
    icons = [e for e in parse.elements if e.id != element.id and e.kind is ElementKind.IMAGE
             and element.rect.contains_rect(e.rect) and e.rect.width >= 8 and e.rect.height >= 8]
    if icons:
        icons.sort(key=lambda e: (e.rect.left, e.rect.top))
        return icons[0].rect
    if element.kind in (ElementKind.TEXT, ElementKind.BUTTON) and element.text:
        # a list row parsed from pixels: the words are their own element, the row's icon
        # sits to their left on the same line; the icon is what no language changes
        cy = (element.rect.top + element.rect.bottom) / 2
        beside = [e for e in parse.elements if e.id != element.id and not e.text
                  and e.kind in (ElementKind.IMAGE, ElementKind.BUTTON)
                  and e.rect.right <= element.rect.left + 4
                  and e.rect.top <= cy <= e.rect.bottom
                  and 8 <= e.rect.width <= 3 * max(1, e.rect.height)
                  and element.rect.left - e.rect.right < parse.screen_size.width * 0.2]
        if beside:
            return max(beside, key=lambda e: e.rect.right).rect
    return element.rect


def index_in_block(parse: ScreenParse, element: Element, block: Block | None) -> int | None:
    """Ordinal of ``element`` among the same-kind elements of its block (reading order)."""
    if block is None:
        return None
    same = [e for e in (parse.element(i) for i in block.element_ids) if e is not None and e.kind == element.kind]
    same.sort(key=lambda e: (e.rect.top, e.rect.left))
    for n, e in enumerate(same):
        if e.id == element.id:
            return n
    return None


def fingerprint_of(element: Element, parse: ScreenParse, image: np.ndarray | None = None) -> Fingerprint:
    """Everything that helps re-identify ``element`` on a changed screen."""
    block, frame = frame_of(parse, element)
    rx, ry = relative_position(element.rect, frame)
    return Fingerprint(
        text=inner_text(parse, element),
        label=element.label,
        resource_id=element.resource_id,
        class_name=element.class_name,
        kind=element.kind.value,
        block_caption=block.caption if block else "",
        block_role=block.role if block else "",
        rel_x=round(rx, 4),
        rel_y=round(ry, 4),
        crop_hash=crop_hash(image, crop_rect(parse, element)),
        index_in_block=index_in_block(parse, element, block),
    )


@dataclass(frozen=True, slots=True)
class Similarity:
    """How well an element matches a fingerprint, with the per-feature evidence."""

    score: float
    parts: tuple[tuple[str, float], ...]

    def explain(self) -> str:
        return ", ".join(f"{k}={v:.2f}" for k, v in self.parts)


#: Feature weights for ``fingerprint_similarity``; features absent on either side are
#: left out and the rest renormalised.
WEIGHTS: dict[str, float] = {
    "resource_id": 3.0,
    "text": 2.0,
    "label": 2.0,
    "kind": 1.0,
    "class": 0.5,
    "block_role": 1.0,
    "block_caption": 1.0,
    "position": 1.5,
    "index": 2.0,
    "crop": 2.0,
}
#: Text and icon labels that disagree may only mean another language: such evidence
#: against a match counts with this weight instead of the full one.
DISAGREEING_WORDS_WEIGHT = 0.5


def _id_tail(rid: str) -> str:
    return rid.rsplit("/", 1)[-1].lower()


def fingerprint_similarity(fp: Fingerprint, element: Element, parse: ScreenParse,
                           image: np.ndarray | None = None, *, layout_weight: float = 1.0) -> Similarity:
    """A weighted similarity in [0, 1] between a stored fingerprint and an element.

    ``layout_weight`` scales the position and ordinal features: after a scroll, where
    a list stops differs between screens, so they say less."""
    parts: list[tuple[str, float, float]] = []  # (feature, value, weight)

    def add(name: str, value: float, weight: float | None = None) -> None:
        parts.append((name, value, WEIGHTS[name] if weight is None else weight))

    if fp.resource_id and element.resource_id:
        add("resource_id", 1.0 if _id_tail(fp.resource_id) == _id_tail(element.resource_id) else 0.0)
    text = inner_text(parse, element)
    if fp.text and text:
        r = fuzz.ratio(fp.text.casefold(), text.casefold()) / 100.0
        add("text", r, None if r >= 0.6 else DISAGREEING_WORDS_WEIGHT)
    if fp.label and element.label:
        same = fp.label.casefold() == element.label.casefold()
        add("label", 1.0 if same else 0.0, None if same else DISAGREEING_WORDS_WEIGHT)
    if fp.kind:
        add("kind", 1.0 if fp.kind == element.kind.value else 0.0)
    if fp.class_name and element.class_name:
        add("class", 1.0 if fp.class_name == element.class_name else 0.0)
    block, frame = frame_of(parse, element)
    if fp.block_role and block is not None and block.role:
        add("block_role", 1.0 if fp.block_role == block.role else 0.0)
    if fp.block_caption and block is not None and block.caption:
        r = fuzz.ratio(fp.block_caption.casefold(), block.caption.casefold()) / 100.0
        add("block_caption", r, None if r >= 0.6 else DISAGREEING_WORDS_WEIGHT)
    if fp.rel_x is not None and fp.rel_y is not None:
        rx, ry = relative_position(element.rect, frame)
        d = ((rx - fp.rel_x) ** 2 + (ry - fp.rel_y) ** 2) ** 0.5
        add("position", max(0.0, 1.0 - 2.0 * d), WEIGHTS["position"] * layout_weight)
    if fp.index_in_block is not None and fp.kind == element.kind.value:
        idx = index_in_block(parse, element, block)
        if idx is not None:
            gap = abs(idx - fp.index_in_block)
            add("index", 1.0 if gap == 0 else 0.4 if gap == 1 else 0.0, WEIGHTS["index"] * layout_weight)
    if fp.crop_hash and image is not None:
        hs = hash_similarity(fp.crop_hash, crop_hash(image, crop_rect(parse, element)))
        if hs is not None:
            # 0.5 is what two unrelated hashes score; stretch the useful range to 0..1.
            add("crop", max(0.0, (hs - 0.5) * 2.0))
    total = sum(w for _, _, w in parts)
    score = sum(w * v for _, v, w in parts) / total if total else 0.0
    return Similarity(score=round(score, 4), parts=tuple((k, round(v, 3)) for k, v, _ in parts))


# ---- screen signatures ------------------------------------------------------------------


def _h8(items: list[str]) -> str:
    if not items:
        return "-"
    return hashlib.sha1("\x1f".join(items).encode("utf-8")).hexdigest()[:8]


def content_elements(parse: ScreenParse) -> list[Element]:
    """Elements that are not system chrome nor inside it (the status bar's clock and
    battery text change on their own and say nothing about the app's screen)."""
    chrome = [e.rect for e in parse.elements if e.kind in _CHROME]
    return [e for e in parse.elements
            if e.kind not in _CHROME and not any(r.contains_rect(e.rect) for r in chrome)]


def screen_signature(parse: ScreenParse, package: str | None = None) -> str:
    """A compact signature of a screen: ``pkg=..;ids=a,b,..;txt=..;kinds=..``.

    ``ids`` lists the resource ids present (stable across language and theme when the
    parse came from the accessibility tree; a bigger screen may show more of them),
    ``txt`` hashes the set of visible texts, ``kinds`` the set of element kinds.
    Compare with ``compare_signatures`` / ``id_overlap``.
    """
    content = content_elements(parse)
    ids = sorted({_id_tail(e.resource_id)[:32].replace(",", "_").replace(";", "_")
                  for e in content if e.resource_id})[:_MAX_IDS]
    texts = sorted({e.text.strip().casefold() for e in content if e.text.strip()})
    kinds = sorted({e.kind.value for e in content})
    return f"pkg={package or ''};ids={','.join(ids) or '-'};txt={_h8(texts)};kinds={_h8(kinds)}"


def id_overlap(a: str, b: str) -> float | None:
    """How much the resource ids of two signatures overlap (intersection over the
    smaller set), or ``None`` when either has none."""
    ia = {x for x in parse_signature(a).get("ids", "").split(",") if x and x != "-"}
    ib = {x for x in parse_signature(b).get("ids", "").split(",") if x and x != "-"}
    if not ia or not ib:
        return None
    return len(ia & ib) / min(len(ia), len(ib))


def parse_signature(sig: str) -> dict[str, str]:
    """The components of a signature string (an empty dict for an empty string)."""
    out: dict[str, str] = {}
    for part in sig.split(";"):
        if "=" in part:
            k, v = part.split("=", 1)
            out[k] = v
    return out


def compare_signatures(a: str, b: str) -> dict[str, bool | None]:
    """Per component: equal (True), different (False) or not comparable (None)."""
    pa, pb = parse_signature(a), parse_signature(b)
    out: dict[str, bool | None] = {}
    for k in ("pkg", "ids", "txt", "kinds"):
        va, vb = pa.get(k, ""), pb.get(k, "")
        out[k] = None if va in ("", "-") or vb in ("", "-") else va == vb
    return out


def same_screen(a: str, b: str) -> bool | None:
    """Whether two signatures describe the same screen content, if it can be told."""
    cmp = compare_signatures(a, b)
    known = [v for k, v in cmp.items() if k in ("ids", "txt") and v is not None]
    if not known:
        return None
    return all(known)
