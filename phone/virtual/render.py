"""Rasterises a view tree's paint operations into an RGB Pillow image.

Shapes with round corners and circles are drawn through cached, supersampled masks so
edges are anti-aliased like a real phone's; glyphs come from ``assets``.  Knows nothing
about apps, input or accessibility.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

from PIL import Image, ImageDraw, ImageFilter

from phone.virtual import assets
from phone.virtual.view import Node


@lru_cache(maxsize=256)
def _shadow(w: int, h: int, radius: int) -> tuple[Image.Image, int]:
    pad = max(4, radius // 2 + 4)
    m = Image.new("L", (w + 2 * pad, h + 2 * pad), 0)
    m.paste(assets.shape_mask(w, h, radius), (pad, pad + pad // 3))
    m = m.filter(ImageFilter.GaussianBlur(pad / 2.5)).point(lambda v: v * 45 // 100)
    return m, pad


@lru_cache(maxsize=128)
def _gradient(w: int, h: int, top: tuple, bottom: tuple) -> Image.Image:
    g = Image.linear_gradient("L").resize((max(1, w), max(1, h)))
    a = Image.new("RGB", (max(1, w), max(1, h)), top)
    b = Image.new("RGB", (max(1, w), max(1, h)), bottom)
    return Image.composite(b, a, g)


_PHOTO_COLOURS = [
    ((255, 214, 165), (253, 170, 120)), ((186, 230, 253), (125, 180, 240)), ((200, 240, 200), (120, 200, 150)),
    ((230, 210, 250), (170, 140, 230)), ((250, 220, 230), (235, 150, 180)), ((240, 240, 210), (210, 200, 140)),
    ((210, 225, 235), (150, 170, 190)), ((255, 236, 179), (255, 193, 7)),
]


@lru_cache(maxsize=256)
def _photo(w: int, h: int, seed: int, icon_name: str, radius: int) -> tuple[Image.Image, Image.Image]:
    top, bottom = _PHOTO_COLOURS[seed % len(_PHOTO_COLOURS)]
    img = _gradient(w, h, top, bottom).copy()
    px = int(min(w, h) * 0.55)
    if px > 4 and icon_name:
        m = assets.icon_mask(icon_name, px)
        shade = tuple(max(0, c - 90) for c in bottom)
        img.paste(shade, ((w - px) // 2, (h - px) // 2), m)
    return img, assets.shape_mask(w, h, radius)


def _paste_shape(im: Image.Image, x0: int, t: int, r: int, b: int, fill, radius: int, ellipse: bool = False,
                 ring: int = 0) -> None:
    w, h = r - x0, b - t
    if w <= 0 or h <= 0:
        return
    im.paste(fill, (x0, t), assets.shape_mask(w, h, radius, ellipse, ring))


def _rounded_rect(im: Image.Image, draw: ImageDraw.ImageDraw, x0: int, t: int, r: int, b: int, fill,
                  radius: int, ring: int = 0) -> None:
    """A rounded rectangle drawn as straight rectangles plus four anti-aliased corner
    patches (much cheaper than a full-size mask for large cards)."""
    w, h = r - x0, b - t
    rr = min(radius, w // 2, h // 2)
    if w <= 0 or h <= 0:
        return
    if rr <= 0:
        if ring:
            draw.rectangle((x0, t, r - 1, b - 1), outline=fill, width=ring)
        else:
            draw.rectangle((x0, t, r - 1, b - 1), fill=fill)
        return
    if ring >= rr:
        _paste_shape(im, x0, t, r, b, fill, radius, ring=ring)
        return
    tl, tr, bl, br = assets.corner_masks(rr, ring)
    im.paste(fill, (x0, t), tl)
    im.paste(fill, (r - rr, t), tr)
    im.paste(fill, (x0, b - rr), bl)
    im.paste(fill, (r - rr, b - rr), br)
    if ring:
        if r - rr - 1 >= x0 + rr:
            draw.rectangle((x0 + rr, t, r - rr - 1, t + ring - 1), fill=fill)
            draw.rectangle((x0 + rr, b - ring, r - rr - 1, b - 1), fill=fill)
        if b - rr - 1 >= t + rr:
            draw.rectangle((x0, t + rr, x0 + ring - 1, b - rr - 1), fill=fill)
            draw.rectangle((r - ring, t + rr, r - 1, b - rr - 1), fill=fill)
    else:
        if r - rr - 1 >= x0 + rr:
            draw.rectangle((x0 + rr, t, r - rr - 1, b - 1), fill=fill)
        if b - rr - 1 >= t + rr:
            draw.rectangle((x0, t + rr, r - 1, b - rr - 1), fill=fill)


def paint(im: Image.Image, ops: Iterable[tuple]) -> None:
    draw = ImageDraw.Draw(im)
    for op in ops:
        kind = op[0]
        if kind == "rect":
            _, x0, t, r, b, fill, radius, outline, width = op
            if fill is not None:
                _rounded_rect(im, draw, x0, t, r, b, fill, radius)
            if outline is not None and width > 0:
                _rounded_rect(im, draw, x0, t, r, b, outline, radius, ring=width)
        elif kind == "text":
            _, x, y, s, px, weight, color, anchor = op
            if s:
                mask, dx, dy = assets.text_mask(s, px, weight, anchor)
                im.paste(color, (x + dx, y + dy), mask)
        elif kind == "icon":
            _, cx, cy, name, px, color = op
            im.paste(color, (cx - px // 2, cy - px // 2), assets.icon_mask(name, px))
        elif kind == "oval":
            _, x0, t, r, b, fill, outline, width = op
            if fill is not None:
                _paste_shape(im, x0, t, r, b, fill, 0, ellipse=True)
            if outline is not None and width:
                _paste_shape(im, x0, t, r, b, outline, 0, ellipse=True, ring=width)
        elif kind == "ring":
            _, x0, t, r, b, color, width = op
            _paste_shape(im, x0, t, r, b, color, 0, ellipse=True, ring=width)
        elif kind == "line":
            _, x1, y1, x2, y2, color, width = op
            draw.line((x1, y1, x2, y2), fill=color, width=width)
        elif kind == "shadow":
            _, x0, t, r, b, radius = op
            m, pad = _shadow(r - x0, b - t, radius)
            im.paste((0, 0, 0), (x0 - pad, t - pad), m)
        elif kind == "grad":
            _, x0, t, r, b, top, bottom = op
            im.paste(_gradient(r - x0, b - t, top, bottom), (x0, t))
        elif kind == "photo":
            _, x0, t, r, b, seed, name, radius = op
            img, mask = _photo(r - x0, b - t, seed, name, radius)
            im.paste(img, (x0, t), mask)
        elif kind == "scrim":
            _, alpha = op
            dark = Image.new("RGB", im.size, (0, 0, 0))
            im.paste(Image.blend(im, dark, alpha))
            draw = ImageDraw.Draw(im)
        elif kind == "blit":
            _, x, y, img = op
            im.paste(img, (x, y))


def paint_tree(im: Image.Image, root: Node) -> None:
    for n in root.walk():
        if n.ops:
            paint(im, n.ops)


def ops_signature(root: Node) -> int:
    """A hash of everything that would be painted: equal signatures, equal pixels."""
    return hash(tuple(op if op[0] != "blit" else (op[0], op[1], op[2], id(op[3])) for n in root.walk() for op in n.ops))
