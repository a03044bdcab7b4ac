"""The virtual phone's view tree and its widget builders.

Every frame the foreground app builds a fresh tree of ``Node``s: each node carries its
box in device pixels, its accessibility attributes (what ``uiautomator dump`` would
report), its VisionTasker class, callbacks for input, and a list of paint operations.
Renderer, XML dumper and ground truth all read this one tree, so they cannot disagree.
This module lays out and describes; it never rasterises (see ``render``) and holds no
app state.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from phone.virtual import assets
from phone.virtual.i18n import translate
from phone.virtual.look import RGB, Palette, Profile
from vision.geometry import Rect
from vision.types import ElementKind

K = ElementKind
Callback = Callable[..., None]  # called with no arguments (lambdas may bind defaults)


@dataclass(eq=False)
class Node:
    rect: Rect
    cls: str = "android.widget.FrameLayout"
    kind: ElementKind = ElementKind.CONTAINER
    rid: str = ""
    text: str = ""
    desc: str = ""
    icon: str = ""
    clickable: bool = False
    long_clickable: bool = False
    checkable: bool = False
    checked: bool = False
    scrollable: bool = False
    selected: bool = False
    focused: bool = False
    focusable: bool = False
    password: bool = False
    enabled: bool = True
    on_tap: Callable[[int, int], None] | None = None
    on_long: Callback | None = None
    on_scroll: Callable[[int], bool] | None = None
    on_hswipe: Callable[[int], bool] | None = None
    ops: list[tuple] = field(default_factory=list)
    children: list[Node] = field(default_factory=list)
    clip: Rect | None = None
    xml: bool = True
    gt: bool | None = None
    block: tuple[str, str] | None = None
    active_tab: str = ""
    package: str = ""

    def add(self, *nodes: Node | None) -> Node:
        for n in nodes:
            if n is not None:
                self.children.append(n)
        return self

    def walk(self):
        yield self
        for c in self.children:
            yield from c.walk()


def tapper(cb: Callback | None) -> Callable[[int, int], None] | None:
    """Adapt a no-argument callback to the (x, y) tap signature."""
    if cb is None:
        return None
    return lambda _x, _y: cb()


class Ui:
    """Layout context for one build: sizes, colours, language, fonts."""

    def __init__(self, profile: Profile, palette: Palette, lang: str, font_scale: float, package: str) -> None:
        self.profile = profile
        self.p = palette
        self.lang = lang
        self.font_scale = font_scale
        self.package = package
        self.W = profile.width
        self.H = profile.height
        self.scale = profile.scale
        self.status_h = self.dp(28)
        self.nav_h = self.dp(48)
        self.keyboard_h = 0
        self.dark = palette.name == "dark"
        self.layout = "default"  # look.LAYOUTS

    # -- units ---------------------------------------------------------------------
    def dp(self, v: float) -> int:
        return int(round(v * self.scale))

    def sp(self, v: float) -> int:
        return int(round(v * self.scale * self.font_scale))

    def tr(self, text: str) -> str:
        return translate(text, self.lang)

    @property
    def content(self) -> Rect:
        """The app's window: below the status bar, above the nav bar (and keyboard)."""
        return Rect(0, self.status_h, self.W, self.H - self.nav_h - self.keyboard_h)

    @property
    def gutter(self) -> int:
        """Horizontal page margin; wider on tablets so content does not stretch."""
        return self.dp(16) if not self.profile.is_tablet else self.dp(48)

    def rid(self, name: str) -> str:
        if not name or ":" in name:
            return name
        return f"{self.package}:id/{name}"

    # -- text ---------------------------------------------------------------------------
    def measure(self, s: str, px: int, weight: str = "regular") -> int:
        return int(assets.text_width(s, px, weight))

    def ellipsize(self, s: str, px: int, weight: str, max_w: int) -> str:
        if max_w <= 0 or self.measure(s, px, weight) <= max_w:
            return s
        lo, hi = 0, len(s)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.measure(s[:mid] + "…", px, weight) <= max_w:
                lo = mid
            else:
                hi = mid - 1
        return s[:lo].rstrip() + "…"

    def wrap(self, s: str, px: int, weight: str, max_w: int, max_lines: int = 50) -> list[str]:
        lines: list[str] = []
        for para in s.split("\n"):
            words = para.split(" ")
            cur = ""
            for w in words:
                trial = f"{cur} {w}" if cur else w
                if self.measure(trial, px, weight) <= max_w or not cur:
                    cur = trial
                else:
                    lines.append(cur)
                    cur = w
            lines.append(cur)
        if len(lines) > max_lines:
            lines = lines[:max_lines]
            lines[-1] = self.ellipsize(lines[-1] + "…", px, weight, max_w)
        return lines


# ---- builders ------------------------------------------------------------------------


def box(rect: Rect, *, fill: RGB | None = None, radius: int = 0, outline: RGB | None = None,
        width: int = 0, cls: str = "android.widget.FrameLayout", **kw: Any) -> Node:
    n = Node(rect=rect, cls=cls, **kw)
    if fill is not None or outline is not None:
        n.ops.append(("rect", *rect.as_tuple(), fill, radius, outline, width))
    return n


def label(ui: Ui, x: int, y: int, s: str, *, size: float = 14, color: RGB | None = None,
          weight: str = "regular", anchor: str = "lm", max_w: int = 0, rid: str = "",
          xml: bool = True, gt: bool | None = None, translate_: bool = True) -> Node:
    """A single-line TextView; ``anchor`` is Pillow's text anchor (l/m/r + t/m/b)."""
    px = ui.sp(size)
    s = ui.tr(s) if translate_ else s
    s = ui.ellipsize(s, px, weight, max_w)
    w = ui.measure(s, px, weight)
    h = int(px * 1.25)
    left = x if anchor[0] == "l" else x - w // 2 if anchor[0] == "m" else x - w
    top = y - h // 2 if anchor[1] == "m" else y if anchor[1] in "ta" else y - h
    rect = Rect(left, top, left + max(1, w), top + h)
    n = Node(rect=rect, cls="android.widget.TextView", kind=K.TEXT, text=s, rid=ui.rid(rid), xml=xml, gt=gt)
    n.ops.append(("text", x, y, s, px, weight, color or ui.p.on_surface, anchor))
    return n


def paragraph(ui: Ui, rect: Rect, s: str, *, size: float = 14, color: RGB | None = None,
              weight: str = "regular", max_lines: int = 50, rid: str = "", line_gap: float = 1.35) -> Node:
    px = ui.sp(size)
    lines = ui.wrap(s, px, weight, rect.width, max_lines)
    lh = int(px * line_gap)
    h = max(lh, lh * len(lines))
    w = max((ui.measure(li, px, weight) for li in lines), default=1)
    n = Node(rect=Rect(rect.left, rect.top, rect.left + max(1, w), rect.top + h),
             cls="android.widget.TextView", kind=K.TEXT, text=s, rid=ui.rid(rid))
    for i, li in enumerate(lines):
        n.ops.append(("text", rect.left, rect.top + i * lh + lh // 2, li, px, weight, color or ui.p.on_surface, "lm"))
    return n


def icon(ui: Ui, cx: int, cy: int, name: str, *, size: float = 24, color: RGB | None = None,
         desc: str = "", gt: bool | None = None) -> Node:
    px = ui.dp(size)
    r = Rect(cx - px // 2, cy - px // 2, cx - px // 2 + px, cy - px // 2 + px)
    n = Node(rect=r, cls="android.widget.ImageView", kind=K.IMAGE, icon=name, desc=ui.tr(desc) if desc else "", gt=gt)
    n.ops.append(("icon", cx, cy, name, px, color or ui.p.on_variant))
    return n


def icon_button(ui: Ui, cx: int, cy: int, name: str, desc: str, on_tap: Callback | None, *,
                rid: str = "", size: float = 24, color: RGB | None = None, bg: RGB | None = None,
                touch: float = 48, bg_size: float = 40) -> Node:
    t = ui.dp(touch)
    r = Rect(cx - t // 2, cy - t // 2, cx - t // 2 + t, cy - t // 2 + t)
    n = Node(rect=r, cls="android.widget.ImageButton", kind=K.BUTTON, icon=name, desc=ui.tr(desc),
             rid=ui.rid(rid), clickable=True, focusable=True, on_tap=tapper(on_tap))
    if bg is not None:
        b = ui.dp(bg_size)
        n.ops.append(("oval", cx - b // 2, cy - b // 2, cx - b // 2 + b, cy - b // 2 + b, bg, None, 0))
    px = ui.dp(size)
    n.ops.append(("icon", cx, cy, name, px, color or ui.p.on_variant))
    return n


def button(ui: Ui, rect: Rect, text: str, on_tap: Callback | None, *, style: str = "filled",
           rid: str = "", icon_name: str = "", enabled: bool = True, size: float = 14) -> Node:
    p = ui.p
    fg = {"filled": p.on_primary, "tonal": p.on_secondary_container}.get(style, p.primary)
    if not enabled:
        fg = p.outline
    n = Node(rect=rect, cls="android.widget.Button", kind=K.BUTTON, text=ui.tr(text), rid=ui.rid(rid),
             clickable=enabled, focusable=True, enabled=enabled, on_tap=tapper(on_tap) if enabled else None)
    radius = rect.height // 2
    if style == "filled":
        n.ops.append(("rect", *rect.as_tuple(), p.primary if enabled else p.container_high, radius, None, 0))
    elif style == "tonal":
        n.ops.append(("rect", *rect.as_tuple(), p.secondary_container, radius, None, 0))
    elif style == "outlined":
        n.ops.append(("rect", *rect.as_tuple(), None, radius, p.outline, max(1, ui.dp(1))))
    s = ui.tr(text)
    px = ui.sp(size)
    cx, cy = rect.center.x, rect.center.y
    if icon_name:
        ip = ui.dp(18)
        tw = ui.measure(s, px, "medium")
        start = cx - (tw + ip + ui.dp(8)) // 2
        n.ops.append(("icon", start + ip // 2, cy, icon_name, ip, fg))
        n.ops.append(("text", start + ip + ui.dp(8), cy, s, px, "medium", fg, "lm"))
    else:
        n.ops.append(("text", cx, cy, s, px, "medium", fg, "mm"))
    return n


def avatar(ui: Ui, cx: int, cy: int, size: float, letter: str, color: RGB) -> Node:
    d = ui.dp(size)
    r = Rect(cx - d // 2, cy - d // 2, cx - d // 2 + d, cy - d // 2 + d)
    n = Node(rect=r, cls="android.widget.ImageView", kind=K.IMAGE, icon="account-circle")
    n.ops.append(("oval", *r.as_tuple(), color, None, 0))
    n.ops.append(("text", cx, cy, letter[:1].upper(), int(d * 0.45), "medium", (255, 255, 255), "mm"))
    return n


def photo(ui: Ui, rect: Rect, seed: int, icon_name: str, *, radius: float = 12, desc: str = "") -> Node:
    n = Node(rect=rect, cls="android.widget.ImageView", kind=K.IMAGE, icon=icon_name, desc=desc)
    n.ops.append(("photo", *rect.as_tuple(), seed, icon_name, ui.dp(radius)))
    return n


def rating(ui: Ui, x: int, cy: int, value: float, *, size: float = 14) -> Node:
    s = ui.dp(size)
    r = Rect(x, cy - s // 2, x + 5 * s, cy - s // 2 + s)
    n = Node(rect=r, cls="android.widget.RatingBar", kind=K.RATING_BAR, text=f"{value:.1f}")
    for i in range(5):
        name = "star" if value >= i + 0.75 else "star-half-full" if value >= i + 0.25 else "star-outline"
        n.ops.append(("icon", x + i * s + s // 2, cy, name, s, (240, 170, 20)))
    return n


def page_indicator(ui: Ui, cx: int, cy: int, count: int, active: int) -> Node:
    d, gap = ui.dp(7), ui.dp(8)
    w = count * d + (count - 1) * gap
    r = Rect(cx - w // 2, cy - d, cx - w // 2 + w, cy + d)
    n = Node(rect=r, cls="android.view.View", kind=K.PAGE_INDICATOR, desc=f"Page {active + 1} of {count}")
    for i in range(count):
        x = r.left + i * (d + gap)
        col = (255, 255, 255) if i == active else (200, 200, 210)
        n.ops.append(("oval", x, cy - d // 2, x + d, cy - d // 2 + d, col, None, 0))
    return n


def divider(ui: Ui, x0: int, x1: int, y: int) -> Node:
    n = Node(rect=Rect(x0, y, x1, y + 1), cls="android.view.View", xml=False, gt=False)
    n.ops.append(("rect", x0, y, x1, y + max(1, ui.dp(1)), ui.p.divider, 0, None, 0))
    return n


def top_bar(ui: Ui, title: str, *, on_back: Callback | None = None, actions: tuple = (),
            large: bool = False, rid: str = "toolbar", bg: RGB | None = None, translate_title: bool = True) -> Node:
    """A Material top app bar: optional back arrow, title, icon-only actions."""
    c = ui.content
    h = ui.dp(64) if not large else ui.dp(112)
    r = Rect(0, c.top, ui.W, c.top + h)
    bar = box(r, fill=bg or ui.p.background, cls="android.view.ViewGroup", rid=ui.rid(rid),
              block=("app_bar", title))
    cy = r.top + ui.dp(32)
    x = ui.dp(16)
    if on_back is not None:
        bar.add(icon_button(ui, ui.dp(28), cy, "arrow-left", "Navigate up", on_back, color=ui.p.on_surface))
        x = ui.dp(64)
    ax = ui.W - ui.dp(28)
    for a in actions:
        name, desc, cb = a[0], a[1], a[2]
        bar.add(icon_button(ui, ax, cy, name, desc, cb, color=ui.p.on_variant,
                            rid=a[3] if len(a) > 3 else ""))
        ax -= ui.dp(48)
    if large:
        bar.add(label(ui, ui.gutter, r.bottom - ui.dp(28), title, size=30, translate_=translate_title,
                      max_w=ui.W - 2 * ui.gutter))
    else:
        bar.add(label(ui, x, cy, title, size=22, translate_=translate_title, max_w=ax - x))
    return bar


def fab(ui: Ui, name: str, desc: str, on_tap: Callback, *, text: str = "", rid: str = "fab",
        bottom: int | None = None) -> Node:
    p = ui.p
    c = ui.content
    bottom = bottom if bottom is not None else c.bottom - ui.dp(16)
    h = ui.dp(56)
    if text:
        w = ui.dp(56) + ui.measure(ui.tr(text), ui.sp(14), "medium") + ui.dp(4)
    else:
        w = h
    r = Rect(ui.W - ui.dp(16) - w, bottom - h, ui.W - ui.dp(16), bottom)
    cls = "android.widget.Button" if text else "android.widget.ImageButton"
    n = Node(rect=r, cls=cls, kind=K.BUTTON, icon=name, desc=ui.tr(desc), text=ui.tr(text) if text else "",
             rid=ui.rid(rid), clickable=True, focusable=True, on_tap=tapper(on_tap))
    n.ops.append(("shadow", *r.as_tuple(), ui.dp(16)))
    n.ops.append(("rect", *r.as_tuple(), p.primary_container, ui.dp(16), None, 0))
    if text:
        n.ops.append(("icon", r.left + ui.dp(28), r.center.y, name, ui.dp(24), p.on_primary_container))
        n.ops.append(("text", r.left + ui.dp(52), r.center.y, ui.tr(text), ui.sp(14), "medium",
                      p.on_primary_container, "lm"))
    else:
        n.ops.append(("icon", r.center.x, r.center.y, name, ui.dp(24), p.on_primary_container))
    return n


def tabs(ui: Ui, rect: Rect, items: list[tuple[str, str]], active: int, on_select: Callable[[int], None], *,
         bottom_nav: bool = False, rid: str = "tabs", caption: str = "tabs") -> Node:
    """A tab row (top) or bottom navigation bar; the active tab is highlighted and selected."""
    p = ui.p
    cont = box(rect, fill=p.container if bottom_nav else p.background,
               cls="android.widget.LinearLayout" if bottom_nav else "android.widget.HorizontalScrollView",
               rid=ui.rid(rid), block=("bottom_navigation" if bottom_nav else "tab_bar", caption))
    n = len(items)
    w = rect.width / max(1, n)
    for i, (text, icon_name) in enumerate(items):
        r = Rect(int(rect.left + i * w), rect.top, int(rect.left + (i + 1) * w), rect.bottom)
        sel = i == active
        t = box(r, cls="android.widget.FrameLayout" if bottom_nav else "android.widget.LinearLayout",
                kind=K.BUTTON, clickable=True, focusable=True, selected=sel, desc=ui.tr(text),
                on_tap=tapper(partial(on_select, i)), rid=ui.rid(f"tab_{i}"))
        t.text = ""
        if bottom_nav:
            cx = r.center.x
            iy = r.top + ui.dp(28)
            if sel:
                pw, ph = ui.dp(64), ui.dp(32)
                t.ops.append(("rect", cx - pw // 2, iy - ph // 2, cx + pw // 2, iy + ph // 2,
                              p.secondary_container, ph // 2, None, 0))
            t.ops.append(("icon", cx, iy, icon_name, ui.dp(24), p.on_secondary_container if sel else p.on_variant))
            t.add(label(ui, cx, r.top + ui.dp(60), text, size=12, weight="medium" if sel else "regular",
                        color=p.on_surface if sel else p.on_variant, anchor="mm", max_w=r.width - ui.dp(4)))
        else:
            col = p.primary if sel else p.on_variant
            if icon_name:
                t.ops.append(("icon", r.center.x, r.top + ui.dp(18), icon_name, ui.dp(22), col))
                t.add(label(ui, r.center.x, r.bottom - ui.dp(14), text, size=13, weight="medium", color=col,
                            anchor="mm", max_w=r.width - ui.dp(4)))
            else:
                t.add(label(ui, r.center.x, r.center.y, text, size=14, weight="medium", color=col, anchor="mm",
                            max_w=r.width - ui.dp(4)))
            if sel:
                tw = min(r.width - ui.dp(8), max(ui.dp(40), ui.measure(ui.tr(text), ui.sp(14), "medium")))
                t.ops.append(("rect", r.center.x - tw // 2, r.bottom - ui.dp(3), r.center.x + tw // 2, r.bottom,
                              p.primary, ui.dp(2), None, 0))
        cont.add(t)
    if not bottom_nav:
        cont.add(divider(ui, rect.left, rect.right, rect.bottom - 1))
    cont.active_tab = ui.tr(items[active][0]) if 0 <= active < n else ""
    return cont


@dataclass
class Item:
    """One entry of a scrolling list: its height in px and a builder given its top."""

    height: int
    build: Callable[[int], Node | None]


def scroll_list(ui: Ui, rect: Rect, holder: dict, key: str, items: list[Item], *, rid: str = "recycler_view",
                cls: str = "androidx.recyclerview.widget.RecyclerView", pad_bottom: float = 88,
                bg: RGB | None = None) -> Node:
    """A vertically scrolling list: only items inside ``rect`` are built (like a
    RecyclerView); boxes of partly visible items are clipped to the viewport."""
    total = sum(i.height for i in items) + ui.dp(pad_bottom)
    max_off = max(0, total - rect.height)
    off = max(0, min(int(holder.get(key, 0)), max_off))
    holder[key] = off
    scrollable = max_off > 0

    def on_scroll(delta: int) -> bool:
        cur = int(holder.get(key, 0))
        new = max(0, min(cur + delta, max_off))
        holder[key] = new
        return new != cur

    n = box(rect, fill=bg, cls=cls, rid=ui.rid(rid), scrollable=scrollable, focusable=scrollable,
            on_scroll=on_scroll if scrollable else None)
    y = rect.top - off
    for it in items:
        if y + it.height > rect.top and y < rect.bottom:
            child = it.build(y)
            if child is not None:
                n.add(child)
        y += it.height
    for c in n.walk():
        if c is not n:
            c.clip = rect
    return n
