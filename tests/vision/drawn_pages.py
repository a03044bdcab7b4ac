"""Screens drawn at 1080x2400 (a tall phone) for the tests of list rows, links, the choice
list and the closer second look: a settings page without divider lines, and a page whose
only action is a line of tiny grey words."""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw

from tests.vision.conftest import font
from vision.geometry import Rect

W, H = 1080, 2400


def chevron(d: ImageDraw.ImageDraw, x: int, y: int, colour=(150, 150, 150)) -> None:
    d.line([(x, y - 18), (x + 16, y), (x, y + 18)], fill=colour, width=5)


def settings_page() -> tuple[np.ndarray, dict[str, Rect]]:
    """A list without divider lines: rows of a title (one with a line under it) and a value
    and/or a chevron at the right end; a small blue link under a grey panel."""
    im = Image.new("RGB", (W, H), (255, 255, 255))
    d = ImageDraw.Draw(im)
    d.text((60, 150), "Display", font=font(64), fill=(0, 0, 0))
    rows: dict[str, Rect] = {}
    y = 400
    for title, sub, value in [("Colour scheme", "", ""), ("Font settings", "Fonts and text size", ""),
                              ("Refresh rate", "", "Default"), ("Screen timeout", "", "30 seconds"),
                              ("Always-on display &\nLock screen", "", "")]:
        top = y
        first, _, wrapped = title.partition("\n")
        d.text((60, y), first, font=font(46), fill=(20, 20, 20))
        bottom = y + 56
        if wrapped:
            d.text((60, y + 58), wrapped, font=font(46), fill=(20, 20, 20))
            bottom = y + 114
        if sub:
            d.text((60, y + 66), sub, font=font(34), fill=(120, 120, 120))
            bottom = y + 110
        mid = (top + bottom) // 2
        if value:
            d.text((1000 - 40, mid), value, font=font(40), fill=(140, 140, 140), anchor="rm")
        chevron(d, 1000, mid)
        rows[first] = Rect(30, top - 40, 1050, bottom + 40)
        y = bottom + 110
    d.rounded_rectangle([40, 1700, 1040, 1980], radius=40, fill=(243, 243, 243))
    d.text((90, 1740), "Need other settings?", font=font(40), fill=(140, 140, 140))
    d.text((90, 1850), "Upgrade Now", font=font(40), fill=(40, 110, 220))
    rows["link"] = Rect(85, 1845, 340, 1900)
    return np.asarray(im, dtype=np.uint8).copy(), rows


def faint_target() -> tuple[np.ndarray, Rect]:
    """A tall screen whose only action is a line of tiny grey words low on the page (too small
    for the first reading of the whole frame)."""
    im = Image.new("RGB", (W, H), (255, 255, 255))
    d = ImageDraw.Draw(im)
    d.text((60, 150), "Storage", font=font(64), fill=(0, 0, 0))
    d.text((60, 500), "Used space", font=font(46), fill=(20, 20, 20))
    d.text((700, 2050), "Clear cache", font=font(7), fill=(100, 100, 100))
    return np.asarray(im, dtype=np.uint8).copy(), Rect(695, 2043, 750, 2065)

