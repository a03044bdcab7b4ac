"""The virtual phone's form controls: switch, check box, radio button, seek bar, text
field and spinner, and the list row that ends in one of them, as view-tree ``Node``s
(``phone.virtual.view``) with their accessibility attributes, input callbacks and paint
operations.  Lays out and describes only: no rasterising, no app state.
"""

from __future__ import annotations

from collections.abc import Callable

from phone.virtual.view import Callback, K, Node, Ui, box, icon, label, tapper
from vision.geometry import Rect
from vision.types import ElementKind


def switch(ui: Ui, right: int, cy: int, checked: bool, on_tap: Callback | None, *, rid: str = "android:id/switch_widget",
           desc: str = "") -> Node:
    p = ui.p
    w, h = ui.dp(52), ui.dp(32)
    r = Rect(right - w, cy - h // 2, right, cy - h // 2 + h)
    n = Node(rect=r, cls="android.widget.Switch", kind=K.SWITCH, rid=ui.rid(rid), checkable=True,
             checked=checked, clickable=True, focusable=True, on_tap=tapper(on_tap), desc=desc,
             text=ui.tr("ON") if checked else ui.tr("OFF"))
    if checked:
        n.ops.append(("rect", *r.as_tuple(), p.primary, h // 2, None, 0))
        t = ui.dp(24)
        cx = r.right - ui.dp(16)
        n.ops.append(("oval", cx - t // 2, cy - t // 2, cx - t // 2 + t, cy - t // 2 + t, p.on_primary, None, 0))
        n.ops.append(("icon", cx, cy, "check", ui.dp(16), p.primary))
    else:
        n.ops.append(("rect", *r.as_tuple(), p.switch_off_track, h // 2, p.switch_off_thumb, max(1, ui.dp(2))))
        t = ui.dp(16)
        cx = r.left + ui.dp(16)
        n.ops.append(("oval", cx - t // 2, cy - t // 2, cx - t // 2 + t, cy - t // 2 + t, p.switch_off_thumb, None, 0))
    return n


def checkbox(ui: Ui, cx: int, cy: int, checked: bool, on_tap: Callback | None, *, rid: str = "android:id/checkbox",
             text: str = "") -> Node:
    p = ui.p
    n, b = _checkable(ui, cx, cy, 18, "android.widget.CheckBox", K.CHECK_BOX, checked, on_tap, rid, text)
    if checked:
        n.ops.append(("rect", *b, p.primary, ui.dp(2), None, 0))
        n.ops.append(("icon", cx, cy, "check-bold", ui.dp(14), p.on_primary))
    else:
        n.ops.append(("rect", *b, None, ui.dp(2), p.on_variant, max(1, ui.dp(2))))
    return n


def radio(ui: Ui, cx: int, cy: int, checked: bool, on_tap: Callback | None, *, rid: str = "radio",
          text: str = "") -> Node:
    p = ui.p
    n, b = _checkable(ui, cx, cy, 20, "android.widget.RadioButton", K.RADIO_GROUP, checked, on_tap, rid, text)
    col = p.primary if checked else p.on_variant
    n.ops.append(("ring", *b, col, max(1, ui.dp(2))))
    if checked:
        d = ui.dp(10)
        n.ops.append(("oval", cx - d // 2, cy - d // 2, cx - d // 2 + d, cy - d // 2 + d, col, None, 0))
    return n


def seekbar(ui: Ui, rect: Rect, value: float, on_set: Callable[[float], None], *, rid: str = "seekbar",
            desc: str = "") -> Node:
    p = ui.p
    value = max(0.0, min(1.0, value))
    pad = ui.dp(12)

    def tap(x: int, _y: int) -> None:
        on_set(max(0.0, min(1.0, (x - rect.left - pad) / max(1, rect.width - 2 * pad))))

    n = Node(rect=rect, cls="android.widget.SeekBar", kind=K.SEEK_BAR, rid=ui.rid(rid), clickable=True,
             focusable=True, on_tap=tap, desc=ui.tr(desc) if desc else "", text=str(round(value * 100)))
    cy = rect.center.y
    x0, x1 = rect.left + pad, rect.right - pad
    xv = int(x0 + (x1 - x0) * value)
    th = ui.dp(16)
    n.ops.append(("rect", x0, cy - th // 2, x1, cy + th // 2, p.container_high, th // 2, None, 0))
    n.ops.append(("rect", x0, cy - th // 2, max(x0 + th, xv), cy + th // 2, p.primary, th // 2, None, 0))
    kw, kh = ui.dp(4), ui.dp(40)
    n.ops.append(("rect", xv - kw // 2, cy - kh // 2, xv + kw // 2, cy + kh // 2, p.primary, kw // 2, None, 0))
    return n


def edit(ui: Ui, rect: Rect, value: str, hint: str, *, focused: bool, on_focus: Callback, rid: str = "",
         password: bool = False, style: str = "outlined", lead_icon: str = "", size: float = 16,
         multiline: bool = False) -> Node:
    p = ui.p
    n = Node(rect=rect, cls="android.widget.EditText", kind=K.EDIT_TEXT, rid=ui.rid(rid), clickable=True,
             focusable=True, focused=focused, password=password, on_tap=tapper(on_focus),
             text=("•" * len(value) if password else value) if value else ui.tr(hint))
    radius = ui.dp(4)
    if style == "outlined":
        col = p.primary if focused else p.outline
        n.ops.append(("rect", *rect.as_tuple(), None, radius, col, ui.dp(2) if focused else max(1, ui.dp(1))))
    elif style == "filled":
        n.ops.append(("rect", *rect.as_tuple(), p.container, radius, None, 0))
        n.ops.append(("rect", rect.left, rect.bottom - ui.dp(2), rect.right, rect.bottom,
                      p.primary if focused else p.on_variant, 0, None, 0))
    elif style == "pill":
        n.ops.append(("rect", *rect.as_tuple(), p.container_high, rect.height // 2, None, 0))
    x = rect.left + ui.dp(16)
    cy = rect.center.y if not multiline else rect.top + ui.dp(20)
    if lead_icon:
        n.ops.append(("icon", x + ui.dp(10), rect.center.y, lead_icon, ui.dp(24), p.on_variant))
        x += ui.dp(36)
    px = ui.sp(size)
    shown = ("•" * len(value)) if password else value
    max_w = rect.right - x - ui.dp(16)
    if shown:
        if multiline:
            lines = ui.wrap(shown, px, "regular", max_w, 8)
            lh = int(px * 1.35)
            for i, li in enumerate(lines):
                n.ops.append(("text", x, cy + i * lh, li, px, "regular", p.on_surface, "lm"))
            last = lines[-1]
            cx_end = x + ui.measure(last, px, "regular")
            cy_end = cy + (len(lines) - 1) * lh
        else:
            vis = shown
            while ui.measure(vis, px, "regular") > max_w and len(vis) > 1:
                vis = vis[1:]
            n.ops.append(("text", x, cy, vis, px, "regular", p.on_surface, "lm"))
            cx_end, cy_end = x + ui.measure(vis, px, "regular"), cy
    else:
        n.ops.append(("text", x, cy, ui.ellipsize(ui.tr(hint), px, "regular", max_w), px, "regular", p.on_variant, "lm"))
        cx_end, cy_end = x, cy
    if focused:
        n.ops.append(("rect", cx_end + 1, cy_end - px * 6 // 10, cx_end + 1 + max(2, ui.dp(2)),
                      cy_end + px * 6 // 10, p.primary, 0, None, 0))
    return n


def spinner(ui: Ui, rect: Rect, value: str, on_tap: Callback, *, rid: str = "spinner") -> Node:
    p = ui.p
    n = Node(rect=rect, cls="android.widget.Spinner", kind=K.SPINNER, rid=ui.rid(rid), clickable=True,
             focusable=True, on_tap=tapper(on_tap), text=value)
    n.ops.append(("rect", *rect.as_tuple(), None, ui.dp(4), p.outline, max(1, ui.dp(1))))
    n.ops.append(("text", rect.left + ui.dp(12), rect.center.y, value, ui.sp(14), "regular", p.on_surface, "lm"))
    n.ops.append(("icon", rect.right - ui.dp(16), rect.center.y, "menu-down", ui.dp(24), p.on_variant))
    return n


def list_row(ui: Ui, top: int, title: str, *, subtitle: str = "", icon_name: str = "", on_tap: Callback | None = None,
             trailing: str = "", checked: bool = False, on_toggle: Callback | None = None, height: float = 0,
             rid: str = "", translate_title: bool = True, lead: Node | None = None, left: int = 0,
             right: int = 0, title_rid: str = "android:id/title", sub_rid: str = "android:id/summary", on_long: Callback | None = None,
             title_weight: str = "regular") -> Node:
    """A settings-style row: optional leading icon, title and summary, and a trailing
    switch, checkbox, radio or chevron.  Tapping the row toggles its switch."""
    p = ui.p
    left = left or 0
    right = right or ui.W
    h = ui.dp(height or (72 if subtitle else 56))
    r = Rect(left, top, right, top + h)
    cb = on_toggle if trailing in ("switch", "checkbox", "radio") and on_toggle else on_tap
    row = box(r, cls="android.widget.LinearLayout", clickable=cb is not None, focusable=cb is not None,
              on_tap=tapper(cb), rid=ui.rid(rid), on_long=on_long, long_clickable=on_long is not None)
    x = left + ui.gutter
    cy = r.center.y
    if lead is not None:
        row.add(lead)
        x = left + ui.gutter + ui.dp(56)
    elif icon_name:
        row.add(icon(ui, x + ui.dp(12), cy, icon_name, color=p.on_variant))
        x += ui.dp(56)
    tr_w = ui.dp(72) if trailing else 0
    max_w = right - ui.gutter - tr_w - x
    if subtitle:
        row.add(label(ui, x, cy - ui.dp(11), title, size=16, rid=title_rid, max_w=max_w,
                      translate_=translate_title, weight=title_weight))
        row.add(label(ui, x, cy + ui.dp(12), subtitle, size=14, color=p.on_variant, rid=sub_rid, max_w=max_w,
                      translate_=translate_title))
    else:
        row.add(label(ui, x, cy, title, size=16, rid=title_rid, max_w=max_w, translate_=translate_title,
                      weight=title_weight))
    rx = right - ui.gutter
    if trailing == "switch":
        row.add(switch(ui, rx, cy, checked, on_toggle))
    elif trailing == "checkbox":
        row.add(checkbox(ui, rx - ui.dp(14), cy, checked, on_toggle))
    elif trailing == "radio":
        row.add(radio(ui, rx - ui.dp(14), cy, checked, on_toggle))
    elif trailing == "chevron":
        row.add(icon(ui, rx - ui.dp(12), cy, "chevron-right", color=p.on_variant, gt=False))
    return row


def _checkable(ui: Ui, cx: int, cy: int, mark_dp: float, cls: str, kind: ElementKind, checked: bool,
               on_tap: Callback | None, rid: str, text: str) -> tuple[Node, tuple[int, int, int, int]]:
    """A 48 dp touch target centred on (cx, cy) and the box of its ``mark_dp`` mark."""
    t, s = ui.dp(48), ui.dp(mark_dp)
    r = Rect(cx - t // 2, cy - t // 2, cx - t // 2 + t, cy - t // 2 + t)
    n = Node(rect=r, cls=cls, kind=kind, rid=ui.rid(rid), checkable=True, checked=checked, clickable=True,
             focusable=True, on_tap=tapper(on_tap), text=text)
    return n, (cx - s // 2, cy - s // 2, cx - s // 2 + s, cy - s // 2 + s)
