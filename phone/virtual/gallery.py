"""Writes gallery PNGs of the virtual phone's main screens in each profile, theme and
language, and contact sheets for the docs.  Drives the phone only through its public
input API (plus ``reset``); writes files and nothing else.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from pathlib import Path

from PIL import Image

from agent.device import Key
from phone.virtual.phone import VirtualPhone
from phone.virtual.tasks import Step

log = logging.getLogger(__name__)


def _tap(phone: VirtualPhone, **target) -> None:
    Step("tap", target=target).execute(phone)


def _open(app: str, *then: Callable[[VirtualPhone], object]) -> Callable[[VirtualPhone], None]:
    def run(phone: VirtualPhone) -> None:
        phone.open_app(app)
        for f in then:
            f(phone)
    return run


def _tapper(**target) -> Callable[[VirtualPhone], None]:
    return lambda phone: _tap(phone, **target)


SCREENS: list[tuple[str, Callable[[VirtualPhone], None]]] = [
    ("home", lambda phone: None),
    ("drawer", lambda phone: phone.swipe(phone.screen_size().width // 2, phone.screen_size().height * 3 // 4,
                                         phone.screen_size().width // 2, phone.screen_size().height // 4)),
    ("settings", _open("com.android.settings")),
    ("settings_network", _open("com.android.settings", _tapper(id="android:id/title", index=0))),
    ("settings_display", _open("com.android.settings", lambda p: Step("scroll", direction="down").execute(p),
                               _tapper(icon="brightness-6"))),
    ("clock_alarms", _open("com.google.android.deskclock")),
    ("clock_time_picker", _open("com.google.android.deskclock", _tapper(resource_id_fab=None) if False else
                                _tapper(id="fab"))),
    ("clock_timer", _open("com.google.android.deskclock", _tapper(id="tab_2"))),
    ("contacts", _open("com.google.android.contacts")),
    ("contact_detail", _open("com.google.android.contacts", _tapper(text="Ben Carter"))),
    ("messages", _open("com.google.android.apps.messaging")),
    ("messages_thread", _open("com.google.android.apps.messaging", _tapper(id="conversation_name", index=1),
                              _tapper(id="compose_message_text"))),
    ("notes", _open("com.google.android.keep")),
    ("shop", _open("com.tapwise.shop")),
    ("shop_product", _open("com.tapwise.shop", _tapper(id="product_card", index=0))),
    ("calendar", _open("com.google.android.calendar")),
    ("calendar_new_event", _open("com.google.android.calendar", _tapper(id="fab"), lambda p: p.key(Key.BACK))),
    ("files", _open("com.google.android.documentsui")),
]


def write_gallery(outdir: str | Path, *, profiles: Iterable[str] = ("phone",), themes: Iterable[str] = ("light",),
                  langs: Iterable[str] = ("en",), only: str = "") -> list[Path]:
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for profile in profiles:
        for theme in themes:
            for lang in langs:
                phone = VirtualPhone(profile=profile.strip(), theme=theme.strip(), lang=lang.strip())
                for name, setup in SCREENS:
                    if only and only not in name:
                        continue
                    phone.reset()
                    try:
                        setup(phone)
                    except Exception as exc:  # a broken screen must not stop the gallery
                        log.warning("gallery screen %s failed: %s", name, exc)
                        continue
                    path = out / f"{profile}_{theme}_{lang}_{name}.png"
                    phone.render_image().save(path, optimize=False, compress_level=6)
                    written.append(path)
    return written


def contact_sheet(paths: list[Path], dest: Path, *, thumb_w: int = 270, cols: int = 6) -> Path:
    """Downscaled screenshots side by side in one PNG (for the docs)."""
    ims = [Image.open(p).convert("RGB") for p in paths]
    thumbs = [im.resize((thumb_w, round(im.height * thumb_w / im.width)), Image.Resampling.LANCZOS) for im in ims]
    th = max(t.height for t in thumbs)
    rows = (len(thumbs) + cols - 1) // cols
    gap = 12
    sheet = Image.new("RGB", (cols * (thumb_w + gap) + gap, rows * (th + gap) + gap), (32, 33, 36))
    for i, t in enumerate(thumbs):
        sheet.paste(t, (gap + (i % cols) * (thumb_w + gap), gap + (i // cols) * (th + gap)))
    sheet.save(dest, optimize=True)
    return dest
