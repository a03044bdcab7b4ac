"""Fonts and icon glyphs for the virtual phone, loaded lazily and cached.

Text uses Roboto from the ``font-roboto`` wheel (falling back to Pillow's bundled
FreeType font when it is missing, with a warning); icons come from the Material Design
Icons font that ships inside the ``qtawesome`` wheel.  qtawesome is never imported (the
virtual phone is Qt-free): its fonts folder is found through ``importlib.util.find_spec``.
This module only loads fonts and rasterises glyph masks; it knows nothing about layout.
"""

from __future__ import annotations

import importlib.util
import json
import logging
from functools import lru_cache
from pathlib import Path

from PIL import Image, ImageChops, ImageDraw, ImageFont

log = logging.getLogger(__name__)

_WEIGHT_FILES = {
    "regular": "Roboto-Regular.ttf",
    "medium": "Roboto-Medium.ttf",
    "bold": "Roboto-Bold.ttf",
    "light": "Roboto-Light.ttf",
}
_MDI_FONT = "materialdesignicons6-webfont-6.9.96.ttf"
_MDI_CHARMAP = "materialdesignicons6-webfont-charmap-6.9.96.json"


def _package_dir(name: str) -> Path | None:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


@lru_cache(maxsize=1)
def roboto_dir() -> Path | None:
    """The folder holding Roboto's TTF files, or None when font-roboto is not installed."""
    base = _package_dir("font_roboto")
    if base is None:
        log.warning("font-roboto is not installed; the virtual phone falls back to Pillow's font")
        return None
    files = base / "files"
    return files if files.is_dir() else base


@lru_cache(maxsize=1)
def mdi_dir() -> Path:
    base = _package_dir("qtawesome")
    if base is None:
        raise RuntimeError("qtawesome is not installed: the virtual phone needs its icon font files")
    return base / "fonts"


@lru_cache(maxsize=256)
def font(px: int, weight: str = "regular") -> ImageFont.FreeTypeFont:
    """Roboto at ``px`` pixels in ``weight`` (regular, medium, bold, light)."""
    px = max(4, int(px))
    folder = roboto_dir()
    if folder is not None:
        path = folder / _WEIGHT_FILES.get(weight, _WEIGHT_FILES["regular"])
        if not path.exists():
            path = folder / _WEIGHT_FILES["regular"]
        return ImageFont.truetype(str(path), px)
    return ImageFont.load_default(px)  # type: ignore[return-value]


@lru_cache(maxsize=1)
def icon_charmap() -> dict[str, str]:
    """Material Design Icons name -> glyph character."""
    with open(mdi_dir() / _MDI_CHARMAP, encoding="utf-8") as fh:
        raw = json.load(fh)
    return {name: chr(int(code, 16)) for name, code in raw.items()}


def has_icon(name: str) -> bool:
    return name in icon_charmap()


@lru_cache(maxsize=64)
def _icon_font(px: int) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(str(mdi_dir() / _MDI_FONT), max(4, int(px)))


@lru_cache(maxsize=2048)
def icon_mask(name: str, px: int) -> Image.Image:
    """An ``px`` x ``px`` anti-aliased alpha mask of the named icon."""
    char = icon_charmap().get(name)
    if char is None:
        log.warning("unknown icon %r; drawing a placeholder", name)
        char = icon_charmap()["help-circle-outline"]
    px = max(4, int(px))
    img = Image.new("L", (px, px), 0)
    draw = ImageDraw.Draw(img)
    draw.text((px / 2, px / 2), char, font=_icon_font(px), fill=255, anchor="mm")
    return img


@lru_cache(maxsize=512)
def _corner(r: int) -> Image.Image:
    """An anti-aliased top-left quarter disc of radius ``r`` (255 inside)."""
    s = 4
    big = Image.new("L", (2 * r * s, 2 * r * s), 0)
    ImageDraw.Draw(big).ellipse((0, 0, 2 * r * s - 1, 2 * r * s - 1), fill=255)
    return big.resize((2 * r, 2 * r), Image.Resampling.LANCZOS).crop((0, 0, r, r))


@lru_cache(maxsize=1024)
def corner_masks(r: int, ring: int = 0) -> tuple[Image.Image, Image.Image, Image.Image, Image.Image]:
    """Anti-aliased corner patches (top-left, top-right, bottom-left, bottom-right) of a
    rounded rectangle with radius ``r``; with ``ring`` only the outline ``ring`` px wide."""
    s = 4
    big = Image.new("L", (2 * r * s, 2 * r * s), 0)
    d = ImageDraw.Draw(big)
    d.ellipse((0, 0, 2 * r * s - 1, 2 * r * s - 1), fill=255)
    if ring and ring < r:
        d.ellipse((ring * s, ring * s, 2 * r * s - 1 - ring * s, 2 * r * s - 1 - ring * s), fill=0)
    tl = big.resize((2 * r, 2 * r), Image.Resampling.LANCZOS).crop((0, 0, r, r))
    return (tl, tl.transpose(Image.Transpose.FLIP_LEFT_RIGHT), tl.transpose(Image.Transpose.FLIP_TOP_BOTTOM),
            tl.transpose(Image.Transpose.ROTATE_180))


def _rounded(w: int, h: int, r: int) -> Image.Image:
    m = Image.new("L", (w, h), 255)
    r = max(0, min(r, w // 2, h // 2))
    if r:
        c = _corner(r)
        m.paste(c, (0, 0))
        m.paste(c.transpose(Image.Transpose.FLIP_LEFT_RIGHT), (w - r, 0))
        m.paste(c.transpose(Image.Transpose.FLIP_TOP_BOTTOM), (0, h - r))
        m.paste(c.transpose(Image.Transpose.ROTATE_180), (w - r, h - r))
    return m


@lru_cache(maxsize=4096)
def shape_mask(w: int, h: int, radius: int, ellipse: bool = False, ring: int = 0) -> Image.Image:
    """An anti-aliased mask of a rounded rectangle or ellipse (optionally only its
    outline, ``ring`` pixels wide).  Corners are supersampled; the rest is exact."""
    w, h = max(1, int(w)), max(1, int(h))
    if ellipse:
        s = 4 if w * h < 250_000 else 2
        big = Image.new("L", (w * s, h * s), 0)
        d = ImageDraw.Draw(big)
        d.ellipse((0, 0, w * s - 1, h * s - 1), fill=255)
        if ring:
            d.ellipse((ring * s, ring * s, w * s - 1 - ring * s, h * s - 1 - ring * s), fill=0)
        return big.resize((w, h), Image.Resampling.LANCZOS)
    outer = _rounded(w, h, radius)
    if not ring or w <= 2 * ring or h <= 2 * ring:
        return outer
    inner = Image.new("L", (w, h), 0)
    inner.paste(_rounded(w - 2 * ring, h - 2 * ring, max(0, radius - ring)), (ring, ring))
    return ImageChops.subtract(outer, inner)


@lru_cache(maxsize=16384)
def text_width(text: str, px: int, weight: str = "regular") -> float:
    return font(px, weight).getlength(text)


@lru_cache(maxsize=8192)
def text_mask(text: str, px: int, weight: str, anchor: str) -> tuple[Image.Image, int, int]:
    """The rasterised text as an alpha mask plus its offset from the anchor point.
    Cached, so a string drawn in many frames is rasterised once."""
    f = font(px, weight)
    left, top, right, bottom = (int(v) for v in f.getbbox(text, anchor=anchor))
    img = Image.new("L", (max(1, right - left), max(1, bottom - top)), 0)
    ImageDraw.Draw(img).text((-left, -top), text, font=f, fill=255, anchor=anchor)
    return img, left, top
