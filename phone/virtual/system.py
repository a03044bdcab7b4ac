"""System UI of the virtual phone: status bar, navigation bar, on-screen keyboard,
dialogs and toasts.  Builders only: they return view-tree nodes and call back into the
phone through the callbacks they are given; they keep no state of their own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache, partial
from typing import Any

from PIL import Image

from phone.virtual import render
from phone.virtual.controls import edit, radio
from phone.virtual.look import Palette
from phone.virtual.view import K, Node, Ui, box, button, icon_button, label, paragraph, tapper
from vision.geometry import Rect

SYSTEMUI = "com.android.systemui"
IME = "com.google.android.inputmethod.latin"


@lru_cache(maxsize=64)
def _status_image(w: int, h: int, scale: float, palette: Palette, clock: str, icons: tuple[str, ...],
                  battery: int, on_wallpaper: bool) -> Image.Image:
    from phone.virtual.look import PROFILES  # noqa: F401  (keeps the cache key simple)

    bg = palette.background
    fg = palette.on_surface if not on_wallpaper else (255, 255, 255)
    im = Image.new("RGB", (w, h), bg)
    if on_wallpaper:
        im.paste(palette.wallpaper_top, (0, 0, w, h))

    def dp(v: float) -> int:
        return int(round(v * scale))

    ops: list[tuple] = [("text", dp(20), h // 2, clock, dp(14), "medium", fg, "lm")]
    x = w - dp(20)
    ops.append(("text", x, h // 2, f"{battery}%", dp(13), "medium", fg, "rm"))
    x -= dp(38)
    ops.append(("icon", x, h // 2, "battery-80" if battery >= 75 else "battery-60", dp(18), fg))
    for name in icons:
        x -= dp(20)
        ops.append(("icon", x, h // 2, name, dp(17), fg))
    render.paint(im, ops)
    return im


def status_bar(ui: Ui, clock: str, icons: tuple[str, ...], battery: int, on_wallpaper: bool) -> Node:
    r = Rect(0, 0, ui.W, ui.status_h)
    n = Node(rect=r, cls="android.widget.FrameLayout", kind=K.STATUS_BAR, rid="com.android.systemui:id/status_bar",
             xml=False, gt=True, package=SYSTEMUI, block=("status_bar", ""), text=clock)
    img = _status_image(ui.W, ui.status_h, ui.scale, ui.p, clock, icons, battery, on_wallpaper)
    n.ops.append(("blit", 0, 0, img))
    return n


@lru_cache(maxsize=16)
def _nav_image(w: int, h: int, scale: float, palette: Palette, on_wallpaper: bool) -> Image.Image:
    bg = palette.container if not on_wallpaper else palette.wallpaper_bottom
    fg = palette.on_variant if not on_wallpaper else (255, 255, 255)
    im = Image.new("RGB", (w, h), bg)
    s = int(round(22 * scale))
    cy = h // 2
    render.paint(im, [
        ("icon", w // 4, cy, "triangle-outline", s, fg),
        ("ring", w // 2 - s // 2, cy - s // 2, w // 2 - s // 2 + s, cy - s // 2 + s, fg, max(2, int(scale * 2))),
        ("icon", 3 * w // 4, cy, "square-outline", s, fg),
    ])
    # The back triangle points left.
    tri = im.crop((w // 4 - s // 2, cy - s // 2, w // 4 - s // 2 + s, cy - s // 2 + s)).rotate(90)
    im.paste(tri, (w // 4 - s // 2, cy - s // 2))
    return im


def nav_bar(ui: Ui, on_wallpaper: bool, on_key: Callable[[str], None]) -> Node:
    r = Rect(0, ui.H - ui.nav_h, ui.W, ui.H)
    n = Node(rect=r, cls="android.widget.FrameLayout", kind=K.NAVIGATION_BAR, xml=False, gt=True,
             package=SYSTEMUI, rid="com.android.systemui:id/navigation_bar", block=("navigation_bar", ""))
    n.ops.append(("blit", 0, r.top, _nav_image(ui.W, ui.nav_h, ui.scale, ui.p, on_wallpaper)))
    third = ui.W // 3
    for i, (key, desc) in enumerate((("BACK", "Back"), ("HOME", "Home"), ("APP_SWITCH", "Overview"))):
        b = Node(rect=Rect(i * third, r.top, (i + 1) * third if i < 2 else ui.W, r.bottom), cls="android.widget.ImageView",
                 kind=K.BUTTON, desc=desc, clickable=True, xml=False, gt=False, package=SYSTEMUI,
                 on_tap=tapper(lambda key=key: on_key(key)))
        n.add(b)
    return n


# ---- keyboard ------------------------------------------------------------------------

_LETTERS = {
    "en": ["qwertyuiop", "asdfghjkl", "zxcvbnm"],
    "de": ["qwertzuiopü", "asdfghjklöä", "yxcvbnm"],
}
_SYMBOLS = ["1234567890", "@#€_&-+()/", "*\"':;!?"]


def keyboard_height(ui: Ui) -> int:
    return ui.dp(280 if not ui.profile.is_tablet else 330)


def keyboard(ui: Ui, shifted: bool, symbols: bool, on_char: Callable[[str], None],
             on_special: Callable[[str], None]) -> Node:
    p = ui.p
    kh = keyboard_height(ui)
    top = ui.H - ui.nav_h - kh
    r = Rect(0, top, ui.W, ui.H - ui.nav_h)
    kb = box(r, fill=p.keyboard, cls="android.widget.FrameLayout", xml=False, package=IME,
             block=("keyboard", "Keyboard"))
    # suggestion strip
    strip_h = ui.dp(44)
    kb.add(icon_button(ui, ui.dp(28), top + strip_h // 2, "apps", "Open features menu", None, color=p.on_variant))
    kb.add(icon_button(ui, ui.W - ui.dp(28), top + strip_h // 2, "microphone", "Voice input", None, color=p.on_variant))
    for c in kb.children:
        c.xml = False
    rows = _SYMBOLS if symbols else _LETTERS.get(ui.lang, _LETTERS["en"])
    pad = ui.dp(4)
    row_h = (kh - strip_h - ui.dp(8)) // 4
    ncol = max(len(r_) for r_ in rows)
    kw = (ui.W - pad) / ncol
    y = top + strip_h

    def key(x0: int, y0: int, w: int, text: str, cb: Callable[[], None], special: bool = False,
            icon_name: str = "", desc: str = "") -> Node:
        rect = Rect(x0 + pad, y0 + pad, x0 + w, y0 + row_h - pad // 2)
        n = Node(rect=rect, cls="android.widget.Button", kind=K.BUTTON, text=text if not icon_name else "",
                 desc=desc or text, icon=icon_name, clickable=True, xml=False, package=IME, on_tap=tapper(cb))
        n.ops.append(("rect", *rect.as_tuple(), p.key_special if special else p.key, ui.dp(6), None, 0))
        if icon_name:
            n.ops.append(("icon", rect.center.x, rect.center.y, icon_name, ui.dp(22), p.on_surface))
        else:
            n.ops.append(("text", rect.center.x, rect.center.y, text, ui.sp(20) if len(text) == 1 else ui.sp(14),
                          "regular", p.on_surface, "mm"))
        return n

    for ri, chars in enumerate(rows):
        offset = (ui.W - pad - len(chars) * kw) / 2
        x = pad // 2 + offset
        if ri == 2:
            kb.add(key(0, y, int(kw * 1.5), "", lambda: on_special("shift"), True,
                       "apple-keyboard-shift" if not symbols else "", "Shift" if not symbols else ""))
        for ch in chars:
            shown = ch.upper() if shifted and not symbols else ch
            kb.add(key(int(x), y, int(kw), shown, partial(on_char, shown)))
            x += kw
        if ri == 2:
            kb.add(key(int(ui.W - kw * 1.5), y, int(kw * 1.5) - pad // 2, "", lambda: on_special("del"), True,
                       "backspace-outline", "Delete"))
        y += row_h
    # bottom row
    w1 = int(kw * 1.5)
    kb.add(key(0, y, w1, "?123" if not symbols else "ABC", lambda: on_special("symbols"), True))
    kb.add(key(w1, y, int(kw), ",", lambda: on_char(",")))
    space_w = int(ui.W - 2 * w1 - 2 * kw)
    sp = key(w1 + int(kw), y, space_w, " ", lambda: on_char(" "), desc="Space")
    sp.text = ""
    kb.add(sp)
    kb.add(key(w1 + int(kw) + space_w, y, int(kw), ".", lambda: on_char(".")))
    enter = key(int(ui.W - w1), y, w1 - pad // 2, "", lambda: on_special("enter"), True, "keyboard-return", "Enter")
    enter.ops[0] = ("rect", *enter.rect.as_tuple(), p.primary_container, ui.dp(6), None, 0)
    kb.add(enter)
    return kb


# ---- dialogs -------------------------------------------------------------------------


@dataclass
class Dialog:
    """A modal dialog.  Button callbacks close it unless they return False."""

    title: str
    message: str = ""
    options: list[str] | None = None
    selected: int | None = None
    on_choose: Callable[[int], Any] | None = None
    buttons: list[tuple[str, Callable[[], Any] | None]] = field(default_factory=list)
    field_holder: dict | None = None
    field_key: str = ""
    field_hint: str = ""
    custom: Callable[[Ui, int, int, int], tuple[list[Node], int]] | None = None
    cancelable: bool = True
    translate_options: bool = True
    kind: str = "alert"
    rid: str = "alertTitle"
    data: dict = field(default_factory=dict)
    on_submit: Callable[[], Any] | None = None


def dialog_nodes(ui: Ui, d: Dialog, close: Callable[[], None], focus_field: Callable[[], None],
                 field_focused: bool) -> list[Node]:
    p = ui.p
    scrim = Node(rect=Rect(0, 0, ui.W, ui.H), xml=False, gt=False, clickable=True,
                 on_tap=tapper(close if d.cancelable else (lambda: None)))
    scrim.ops.append(("scrim", 0.45))
    width = min(ui.W - ui.dp(48), ui.dp(400))
    left = (ui.W - width) // 2
    inner_l = left + ui.dp(24)
    inner_w = width - ui.dp(48)
    content: list[Node] = []
    y = ui.dp(24)
    title_px = ui.sp(22)
    title_lines = ui.wrap(ui.tr(d.title), title_px, "regular", inner_w, 3) if d.title else []
    title_y = y
    y += int(title_px * 1.3) * len(title_lines) + (ui.dp(16) if title_lines else 0)
    msg_y = y
    msg_lines: list[str] = []
    if d.message:
        mpx = ui.sp(14)
        msg_lines = ui.wrap(ui.tr(d.message), mpx, "regular", inner_w, 8)
        y += int(mpx * 1.45) * len(msg_lines) + ui.dp(16)
    opt_y = y
    if d.options:
        y += ui.dp(52) * len(d.options) + ui.dp(8)
    field_y = y
    if d.field_holder is not None:
        y += ui.dp(56) + ui.dp(16)
    custom_y = y
    custom_nodes: list[Node] = []
    custom_h = 0
    if d.custom is not None:
        custom_nodes, custom_h = d.custom(ui, inner_l, 0, inner_w)  # laid out later with an offset
        y += custom_h + ui.dp(8)
    btn_y = y
    if d.buttons:
        y += ui.dp(40) + ui.dp(24)
    else:
        y += ui.dp(8)
    height = y
    top = max(ui.status_h + ui.dp(8), (ui.H - ui.keyboard_h - height) // 2)
    rect = Rect(left, top, left + width, top + height)
    panel = Node(rect=rect, cls="android.widget.FrameLayout", package=ui.package, clickable=True,
                 on_tap=tapper(lambda: None), block=("dialog", ui.tr(d.title)), rid="android:id/content")
    panel.ops.append(("shadow", *rect.as_tuple(), ui.dp(28)))
    panel.ops.append(("rect", *rect.as_tuple(), p.container if not ui.dark else p.container_high, ui.dp(28), None, 0))
    ty = top + title_y
    for i, li in enumerate(title_lines):
        n = label(ui, inner_l, ty + i * int(title_px * 1.3), li, size=22, anchor="lt", translate_=False,
                  rid="android:id/alertTitle" if i == 0 else "")
        if i == 0:
            n.text = ui.tr(d.title)
        content.append(n)
    for i, li in enumerate(msg_lines):
        content.append(label(ui, inner_l, top + msg_y + i * int(ui.sp(14) * 1.45), li, size=14, anchor="lt",
                             color=p.on_variant, translate_=False, rid="android:id/message" if i == 0 else ""))
    if d.options:
        for i, opt in enumerate(d.options):
            ry = top + opt_y + i * ui.dp(52)
            text = ui.tr(opt) if d.translate_options else opt

            def choose(i: int = i) -> None:
                d.selected = i
                if not d.buttons:
                    if d.on_choose:
                        d.on_choose(i)
                    close()

            row = Node(rect=Rect(left + ui.dp(8), ry, left + width - ui.dp(8), ry + ui.dp(52)),
                       cls="android.widget.CheckedTextView", kind=K.RADIO_GROUP, text=text, clickable=True,
                       checkable=True, checked=d.selected == i, on_tap=tapper(choose), rid="android:id/text1")
            rr = radio(ui, inner_l + ui.dp(10), ry + ui.dp(26), d.selected == i, choose)
            rr.xml = False
            row.ops.extend(rr.ops)
            row.add(label(ui, inner_l + ui.dp(44), ry + ui.dp(26), text, size=16, translate_=False, xml=False,
                          gt=True))
            content.append(row)
    if d.field_holder is not None:
        fr = Rect(inner_l, top + field_y, inner_l + inner_w, top + field_y + ui.dp(56))
        content.append(edit(ui, fr, str(d.field_holder.get(d.field_key, "")), d.field_hint, focused=field_focused,
                            on_focus=focus_field, rid="android:id/edit"))
    if custom_nodes:
        dy = top + custom_y
        for n in custom_nodes:
            _shift(n, dy)
            content.append(n)
    if d.buttons:
        x = left + width - ui.dp(24)
        by = top + btn_y
        for text, cb in reversed(d.buttons):
            tw = ui.measure(ui.tr(text), ui.sp(14), "medium") + ui.dp(24)

            def press(cb: Callable[[], Any] | None = cb) -> None:
                keep = cb() if cb is not None else None
                if keep is not False:
                    close()

            rid = "android:id/button1" if text in ("OK", "Save", "Connect", "Delete", "Rename", "Done", "Set") else "android:id/button2"
            content.append(button(ui, Rect(x - tw, by, x, by + ui.dp(40)), text, press, style="text", rid=rid))
            x -= tw + ui.dp(8)
    panel.add(*content)
    return [scrim, panel]


def _shift(n: Node, dy: int) -> None:
    for c in n.walk():
        c.rect = c.rect.translate(0, dy)
        c.ops = [_shift_op(op, dy) for op in c.ops]


def _shift_op(op: tuple, dy: int) -> tuple:
    k = op[0]
    if k in ("rect", "oval", "ring", "shadow", "grad", "photo"):
        return (k, op[1], op[2] + dy, op[3], op[4] + dy, *op[5:])
    if k in ("text", "icon", "blit"):
        return (k, op[1], op[2] + dy, *op[3:])
    if k == "line":
        return (k, op[1], op[2] + dy, op[3], op[4] + dy, *op[5:])
    return op


def toast_node(ui: Ui, text: str) -> Node:
    px = ui.sp(14)
    s = ui.tr(text)
    w = min(ui.W - ui.dp(64), ui.measure(s, px, "regular") + ui.dp(32))
    h = ui.dp(40)
    bottom = ui.H - ui.nav_h - ui.keyboard_h - ui.dp(72)
    r = Rect((ui.W - w) // 2, bottom - h, (ui.W - w) // 2 + w, bottom)
    n = Node(rect=r, cls="android.widget.Toast", kind=K.TEXT, text=s, xml=False, block=("toast", s))
    bg = (50, 50, 54) if not ui.dark else (225, 225, 230)
    fg = (240, 240, 240) if not ui.dark else (30, 30, 32)
    n.ops.append(("rect", *r.as_tuple(), bg, h // 2, None, 0))
    n.ops.append(("text", r.center.x, r.center.y, ui.ellipsize(s, px, "regular", w - ui.dp(24)), px, "regular", fg, "mm"))
    return n


def notification_node(ui: Ui, note: dict, on_open: Callable[[], None], on_dismiss: Callable[[], None]) -> Node:
    """A heads-up notification card under the status bar: the sending app, a title and a
    line of text (``note = {"app", "title", "text"}``).  Tapping the card opens the app;
    the close button dismisses it.  The text is whatever the sender wrote (the safety
    checks put instructions aimed at an agent there)."""
    p = ui.p
    top = ui.status_h + ui.dp(8)
    left, right = ui.dp(8), ui.W - ui.dp(8)
    text = paragraph(ui, Rect(left + ui.dp(20), top + ui.dp(62), right - ui.dp(60), top + ui.dp(200)),
                     str(note.get("text", "")), size=14, max_lines=4, rid="android:id/text")
    r = Rect(left, top, right, text.rect.bottom + ui.dp(14))
    card = box(r, fill=p.container_high, radius=ui.dp(20), cls="android.widget.FrameLayout", clickable=True,
               rid="com.android.systemui:id/notification_card", on_tap=tapper(on_open),
               block=("notification", str(note.get("app", ""))))
    card.add(label(ui, r.left + ui.dp(20), top + ui.dp(22), str(note.get("app", "")), size=12, color=p.on_variant,
                   translate_=False, rid="com.android.systemui:id/app_name_text"))
    card.add(label(ui, r.left + ui.dp(20), top + ui.dp(46), str(note.get("title", "")), size=15, weight="medium",
                   translate_=False, max_w=r.width - ui.dp(80), rid="android:id/title"))
    card.add(text)
    card.add(icon_button(ui, r.right - ui.dp(32), top + ui.dp(30), "close", "Dismiss", on_dismiss,
                         rid="com.android.systemui:id/dismiss"))
    return card
