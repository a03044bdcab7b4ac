"""In-window panels for the virtual phone's apps: a modal bottom sheet and an overflow menu.

Both are laid out the way Material lays them out in one window: a full-screen,
tappable ``touch_outside`` view (dimmed for the sheet, clear for the menu) drawn over
the page, then the panel.  A tap outside the panel closes it; what lies under the
scrim is not reachable.  Builders only: they return view-tree nodes and call back into
the app; the app keeps whether a panel is open in its page's ``args``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from phone.virtual.view import K, Node, Ui, box, label, tapper
from vision.geometry import Rect

Choice = tuple[str, str, Callable[[], None]]  # (icon name or "", text, callback)


def _scrim(ui: Ui, close: Callable[[], None], dim: float) -> Node:
    n = Node(rect=Rect(0, 0, ui.W, ui.H), cls="android.view.View", rid=ui.rid("touch_outside"), clickable=True,
             on_tap=tapper(close), gt=False, block=("scrim", ""))
    if dim > 0:
        n.ops.append(("scrim", dim))
    return n


def bottom_sheet(ui: Ui, title: str, choices: Sequence[Choice], close: Callable[[], None]) -> list[Node]:
    """A modal bottom sheet: dimmed scrim, then a panel at the bottom with a title and rows."""
    p = ui.p
    row_h = ui.dp(56)
    height = ui.dp(36) + ui.dp(56) + row_h * len(choices) + ui.dp(16)
    bottom = ui.content.bottom
    r = Rect(0, bottom - height, ui.W, bottom)
    panel = box(r, cls="android.widget.FrameLayout", rid=ui.rid("design_bottom_sheet"),
                block=("dialog", ui.tr(title)))
    panel.ops.append(("shadow", *r.as_tuple(), ui.dp(28)))
    panel.ops.append(("rect", *r.as_tuple(), p.container_high if ui.dark else p.container, ui.dp(28), None, 0))
    handle = Rect(ui.W // 2 - ui.dp(16), r.top + ui.dp(14), ui.W // 2 + ui.dp(16), r.top + ui.dp(18))
    panel.ops.append(("rect", *handle.as_tuple(), p.outline, ui.dp(2), None, 0))
    panel.add(label(ui, ui.gutter, r.top + ui.dp(36) + ui.dp(28), title, size=20, rid="sheet_title"))
    y = r.top + ui.dp(36) + ui.dp(56)
    for name, text, cb in choices:
        def choose(cb: Callable[[], None] = cb) -> None:
            close()
            cb()

        row = box(Rect(0, y, ui.W, y + row_h), cls="android.widget.LinearLayout", clickable=True, focusable=True,
                  on_tap=tapper(choose), rid=ui.rid("sheet_item"), kind=K.BUTTON)
        x = ui.gutter
        if name:
            row.ops.append(("icon", x + ui.dp(12), y + row_h // 2, name, ui.dp(24), p.on_variant))
            x += ui.dp(56)
        row.add(label(ui, x, y + row_h // 2, text, size=16, rid="android:id/title"))
        panel.add(row)
        y += row_h
    return [_scrim(ui, close, 0.32), panel]


def overflow_menu(ui: Ui, anchor: Rect, choices: Sequence[Choice], close: Callable[[], None]) -> list[Node]:
    """A popup menu under ``anchor`` (the overflow button), aligned to the right edge: a
    clear scrim (taps outside close the menu), then the menu card."""
    p = ui.p
    item_h = ui.dp(48)
    width = max(ui.dp(200), max((ui.measure(ui.tr(t), ui.sp(16), "regular") for _, t, _ in choices), default=0)
                + ui.dp(32))
    right = ui.W - ui.dp(8)
    top = anchor.top + ui.dp(4)
    r = Rect(right - width, top, right, top + ui.dp(8) * 2 + item_h * len(choices))
    menu = box(r, cls="android.widget.ListView", rid=ui.rid("popup_menu"), block=("dialog", ""))
    menu.ops.append(("shadow", *r.as_tuple(), ui.dp(8)))
    menu.ops.append(("rect", *r.as_tuple(), p.container_high if ui.dark else p.container, ui.dp(8), None, 0))
    y = r.top + ui.dp(8)
    for _name, text, cb in choices:
        def choose(cb: Callable[[], None] = cb) -> None:
            close()
            cb()

        item = box(Rect(r.left, y, r.right, y + item_h), cls="android.widget.LinearLayout", clickable=True,
                   focusable=True, on_tap=tapper(choose), kind=K.BUTTON)
        item.add(label(ui, r.left + ui.dp(16), y + item_h // 2, text, size=16, rid="android:id/title"))
        menu.add(item)
        y += item_h
    return [_scrim(ui, close, 0.0), menu]
