"""Helpers shared by the apps: scrolling settings-style pages built from row specs.

Only layout helpers; no app state.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from phone.virtual.controls import list_row, seekbar
from phone.virtual.view import Item, Node, Ui, box, label, scroll_list, top_bar
from vision.geometry import Rect


@dataclass
class Row:
    """One row of a settings-style page.

    ``kind``: nav (chevron-less link), switch, check, radio, seek, info, header, custom.
    """

    kind: str
    title: str = ""
    subtitle: str = ""
    icon: str = ""
    checked: bool = False
    on_tap: Callable[..., None] | None = None
    value: float = 0.0
    on_set: Callable[[float], None] | None = None
    rid: str = ""
    height: int = 0
    build: Callable[[int], Node] | None = None
    translate: bool = True
    on_long: Callable[..., None] | None = None


def row_items(ui: Ui, rows: list[Row], *, left: int = 0, right: int = 0) -> list[Item]:
    right = right or ui.W
    items: list[Item] = []
    for r in rows:
        if r.kind == "header":
            def b(top: int, r=r) -> Node:
                return label(ui, left + ui.gutter, top + ui.dp(30), r.title, size=14, weight="medium",
                             color=ui.p.primary, translate_=r.translate)
            items.append(Item(ui.dp(44), b))
        elif r.kind == "seek":
            def b(top: int, r=r) -> Node:
                n = box(Rect(left, top, right, top + ui.dp(88)), cls="android.widget.LinearLayout")
                x = left + ui.gutter + (ui.dp(56) if r.icon else 0)
                if r.icon:
                    from phone.virtual.view import icon as icon_node
                    n.add(icon_node(ui, left + ui.gutter + ui.dp(12), top + ui.dp(28), r.icon))
                n.add(label(ui, x, top + ui.dp(24), r.title, size=16, translate_=r.translate,
                            rid="android:id/title"))
                n.add(seekbar(ui, Rect(x - ui.dp(12), top + ui.dp(44), right - ui.gutter, top + ui.dp(84)),
                              r.value, r.on_set or (lambda v: None), rid=r.rid or "seekbar", desc=r.title))
                return n
            items.append(Item(ui.dp(88), b))
        elif r.kind == "custom" and r.build is not None:
            items.append(Item(r.height, r.build))
        else:
            trailing = {"switch": "switch", "check": "checkbox", "radio": "radio"}.get(r.kind, "")
            h = r.height or (72 if r.subtitle else 56)

            def row(top: int, r: Row = r, trailing: str = trailing, h: int = h) -> Node:
                clickable = r.kind != "info"
                return list_row(ui, top, r.title, subtitle=r.subtitle, icon_name=r.icon,
                                on_tap=r.on_tap if clickable else None, trailing=trailing, checked=r.checked,
                                on_toggle=r.on_tap, rid=r.rid, translate_title=r.translate, height=h,
                                left=left, right=right, on_long=r.on_long)
            items.append(Item(ui.dp(h), row))
    return items


def list_page(ui: Ui, root: Node, holder: dict, title: str, rows: list[Row], *, on_back=None, actions: tuple = (),
              large: bool = False, rid: str = "recycler_view", translate_title: bool = True,
              top_extra: int = 0, caption: str = "") -> Node:
    """A page with a top app bar and a scrolling list of rows; returns the list node.
    On the ``shifted`` layout a suggestion card comes first and every row sits lower; on
    the ``reordered`` one each pair of rows changes places (the first and the second, the
    third and the fourth …)."""
    if ui.layout == "shifted" and rows:
        rows = [Row("info", "Suggestions for you", "Tips to get more out of your phone", "lightbulb-outline",
                    height=96), *rows]
    elif ui.layout == "reordered":
        rows = [r for pair in zip(rows[1::2], rows[::2], strict=False) for r in pair] + rows[len(rows) // 2 * 2:]
    bar = top_bar(ui, title, on_back=on_back, actions=actions, large=large, translate_title=translate_title)
    c = ui.content
    lr = Rect(0, bar.rect.bottom + top_extra, ui.W, c.bottom)
    lst = scroll_list(ui, lr, holder, "scroll", row_items(ui, rows), rid=rid)
    lst.block = ("list", caption or (ui.tr(title) if translate_title else title))
    root.add(lst, bar)
    return lst
