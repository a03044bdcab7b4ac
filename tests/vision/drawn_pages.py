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


def menu_page() -> tuple[np.ndarray, dict[str, Rect]]:
    """A drop-down menu of plain one-line entries on a white card over a page, and a
    paragraph whose lines follow each other closely below it (not a list)."""
    im = Image.new("RGB", (W, H), (235, 235, 235))
    d = ImageDraw.Draw(im)
    d.text((60, 150), "Groups", font=font(64), fill=(0, 0, 0))
    d.rectangle([40, 400, 760, 1150], fill=(255, 255, 255))
    entries: dict[str, Rect] = {}
    for i, word in enumerate(["All posts", "Close friends", "Special follow", "Nearby"]):
        y = 460 + i * 170
        d.text((100, y), word, font=font(44), fill=(30, 30, 30))
        entries[word] = Rect(40, y - 55, 760, y + 105)
    for i, line in enumerate(["These lines are one paragraph of", "plain words set close to each",
                              "other as prose is, one under the", "next, with no gap between them."]):
        d.text((60, 1500 + i * 58), line, font=font(40), fill=(60, 60, 60))
    return np.asarray(im, dtype=np.uint8).copy(), entries


def slider_page() -> tuple[np.ndarray, list[Rect], Rect]:
    """A stepped slider (a pale grey track with five dots, the knob on the fourth) and a
    divider running from edge to edge with a round badge on it (not a slider)."""
    im = Image.new("RGB", (W, H), (255, 255, 255))
    d = ImageDraw.Draw(im)
    d.text((60, 150), "Font size", font=font(64), fill=(0, 0, 0))
    y, left, right = 1400, 140, 940
    d.line([(left, y), (right, y)], fill=(215, 215, 215), width=6)
    stops = []
    for i in range(5):
        x = left + i * (right - left) // 4
        d.ellipse([x - 14, y - 14, x + 14, y + 14], fill=(215, 215, 215))
        stops.append(Rect(x - 30, y - 30, x + 30, y + 30))
    knob = stops[3].center
    d.ellipse([knob.x - 40, knob.y - 40, knob.x + 40, knob.y + 40], fill=(40, 110, 220))
    d.line([(0, 1900), (W, 1900)], fill=(215, 215, 215), width=6)
    d.ellipse([500, 1860, 580, 1940], fill=(40, 110, 220))
    return np.asarray(im, dtype=np.uint8).copy(), stops, Rect(0, 1850, W, 1950)
