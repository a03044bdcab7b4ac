"""Fixtures for the vision tests: small synthetic screens drawn with Pillow and dump builders."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
REAL_UI = Path(__file__).resolve().parents[2].parent / "shared" / "real-ui"


def font(px: int) -> ImageFont.FreeTypeFont:
    if os.path.exists(FONT):
        return ImageFont.truetype(FONT, px)
    return ImageFont.load_default(px)


def draw_settings_screen(w: int = 540, h: int = 1200, *, wifi_on: bool = True, title: str = "Settings") -> np.ndarray:
    """A settings-like screen: status bar, app bar, search field, rows with switches, a bottom tab bar."""
    s = w / 540
    im = Image.new("RGB", (w, h), (250, 250, 250))
    d = ImageDraw.Draw(im)
    d.rectangle([0, 0, w, int(40 * s)], fill=(30, 30, 30))
    d.text((int(16 * s), int(8 * s)), "12:45", font=font(int(20 * s)), fill="white")
    d.rectangle([0, int(40 * s), w, int(130 * s)], fill=(26, 115, 232))
    d.text((int(20 * s), int(68 * s)), title, font=font(int(30 * s)), fill="white")
    d.rounded_rectangle([int(20 * s), int(150 * s), w - int(20 * s), int(210 * s)], radius=int(30 * s), fill=(228, 228, 236))
    d.text((int(60 * s), int(165 * s)), "Search settings", font=font(int(22 * s)), fill=(90, 90, 90))
    rows = [("Wi-Fi", wifi_on), ("Bluetooth", False), ("Airplane mode", False), ("Dark theme", True)]
    y = int(240 * s)
    for name, on in rows:
        d.text((int(24 * s), y + int(12 * s)), name, font=font(int(24 * s)), fill=(20, 20, 20))
        x0, x1 = w - int(90 * s), w - int(30 * s)
        d.rounded_rectangle([x0, y + int(12 * s), x1, y + int(44 * s)], radius=int(16 * s),
                            fill=(26, 115, 232) if on else (200, 200, 200))
        cx = x1 - int(16 * s) if on else x0 + int(16 * s)
        d.ellipse([cx - int(12 * s), y + int(16 * s), cx + int(12 * s), y + int(40 * s)], fill="white")
        y += int(70 * s)
        d.line([0, y - int(8 * s), w, y - int(8 * s)], fill=(225, 225, 225), width=max(1, int(s)))
    # bottom tab bar, second tab active (blue), others grey
    top = h - int(110 * s)
    d.rectangle([0, top, w, h], fill=(240, 240, 244))
    for i, label in enumerate(["Home", "Search", "Profile"]):
        cx = int((i + 0.5) * w / 3)
        col = (26, 115, 232) if i == 1 else (110, 110, 110)
        d.ellipse([cx - int(14 * s), top + int(14 * s), cx + int(14 * s), top + int(42 * s)], fill=col)
        d.text((cx, top + int(68 * s)), label, font=font(int(20 * s)), fill=col, anchor="mm")
    return np.asarray(im, dtype=np.uint8).copy()


def node(cls: str, bounds: str, children: str = "", **attrs: str) -> str:
    base = {"index": "0", "text": "", "resource-id": "", "class": cls, "package": "com.example", "content-desc": "",
            "checkable": "false", "checked": "false", "clickable": "false", "enabled": "true", "focusable": "false",
            "focused": "false", "scrollable": "false", "long-clickable": "false", "password": "false",
            "selected": "false", "visible-to-user": "true", "bounds": bounds}
    base.update({k.replace("_", "-"): v for k, v in attrs.items()})
    a = " ".join(f'{k}="{v}"' for k, v in base.items())
    return f"<node {a}>{children}</node>" if children else f"<node {a} />"


def settings_dump(wifi_on: bool = True) -> str:
    rows = ""
    for i, (name, on) in enumerate([("Wi-Fi", wifi_on), ("Bluetooth", False)]):
        y = 240 + i * 70
        rows += node("android.widget.LinearLayout", f"[0,{y}][540,{y + 62}]",
                     node("android.widget.TextView", f"[24,{y + 12}][300,{y + 44}]", text=name)
                     + node("android.widget.Switch", f"[450,{y + 12}][510,{y + 44}]", checkable="true",
                            checked="true" if on else "false", clickable="true"),
                     clickable="true")
    content = node("android.widget.FrameLayout", "[0,0][540,1200]",
                   node("android.widget.LinearLayout", "[0,0][540,1200]",
                        node("android.widget.TextView", "[20,68][200,110]", text="Settings")
                        + node("androidx.recyclerview.widget.RecyclerView", "[0,230][540,1000]", rows, scrollable="true")
                        + node("android.widget.TextView", "[0,1500][200,1600]", text="Below the screen")
                        + node("android.widget.TextView", "[20,20][100,30]", text="Ghost", visible_to_user="false")))
    return f'<?xml version="1.0" encoding="UTF-8"?><hierarchy rotation="0">{content}</hierarchy>'


@pytest.fixture(scope="session")
def settings_image() -> np.ndarray:
    return draw_settings_screen()


@pytest.fixture(scope="session")
def shared_parser():
    """One parser for the session so models load once (CV detector; OCR lazily)."""
    from vision.config import PipelineConfig
    from vision.pipeline import ScreenParser

    return ScreenParser(PipelineConfig(detector="cv", remember_previous=False))
