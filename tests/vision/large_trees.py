"""Generated accessibility dumps of a chosen size, for the large-tree tests and the benchmark.

``grid_dump`` lays ``n`` nodes out as a scrolling list of rows (a clickable row holding an
icon, a title and a subtitle), as a long list or a dense grid in a real app does; rows that
do not fit the screen run on below it, like a list's off-screen items in a dump.
``deep_dump`` nests containers ``depth`` levels deep with a worded leaf at every level.
Both return uiautomator XML and the texts whose boxes reach onto the screen.
"""

from __future__ import annotations

from xml.sax.saxutils import quoteattr


def _node(cls: str, l: int, t: int, r: int, b: int, body: str = "", **attrs: str) -> str:  # noqa: E741
    base = {"text": "", "resource-id": "", "class": cls, "package": "com.example.big", "content-desc": "",
            "checkable": "false", "checked": "false", "clickable": "false", "enabled": "true",
            "focusable": "false", "focused": "false", "scrollable": "false", "long-clickable": "false",
            "password": "false", "selected": "false", "bounds": f"[{l},{t}][{r},{b}]"}
    base.update({k.replace("_", "-"): v for k, v in attrs.items()})
    a = " ".join(f"{k}={quoteattr(v)}" for k, v in base.items())
    return f"<node {a}>{body}</node>" if body else f"<node {a} />"


def _wrap(body: str, width: int, height: int) -> str:
    root = _node("android.widget.FrameLayout", 0, 0, width, height, body)
    return f'<?xml version="1.0" encoding="UTF-8"?><hierarchy rotation="0">{root}</hierarchy>'


def grid_dump(n: int, width: int = 1080, height: int = 2400, columns: int = 0) -> tuple[str, list[str]]:
    """About ``n`` nodes: rows of (row, icon, title, subtitle) in ``columns`` columns (0: as
    many as keep the on-screen part dense), the list scrolling below the screen."""
    rows = max(1, n // 4)
    if columns <= 0:
        columns = max(1, min(24, rows // 60))
    cell_w = width // columns
    cell_h = max(24, min(160, (height - 200) * columns // max(1, rows)))
    parts: list[str] = []
    visible: list[str] = []
    for i in range(rows):
        col, line = i % columns, i // columns
        l, t = col * cell_w, 200 + line * cell_h  # noqa: E741
        r, b = l + cell_w - 2, t + cell_h - 2
        title, sub = f"Item {i}", f"detail {i}"
        mid = t + cell_h // 2
        icon = _node("android.widget.ImageView", l + 2, t + 2, l + 2 + cell_h // 2, t + 2 + cell_h // 2, content_desc=f"icon {i}")
        title_node = _node("android.widget.TextView", l + cell_h // 2 + 4, t + 2, r - 2, mid, text=title)
        sub_node = _node("android.widget.TextView", l + cell_h // 2 + 4, mid, r - 2, b - 2, text=sub)
        parts.append(_node("android.widget.LinearLayout", l, t, r, b, icon + title_node + sub_node, clickable="true"))
        visible.extend(word for word, top in ((title, t + 2), (sub, mid)) if top < height)
    body = _node("android.widget.TextView", 0, 60, width, 180, text="Big list")
    body += _node("androidx.recyclerview.widget.RecyclerView", 0, 200, width, height, "".join(parts), scrollable="true")
    return _wrap(body, width, height), visible


def deep_dump(depth: int, width: int = 1080, height: int = 2400) -> tuple[str, list[str]]:
    """Containers nested ``depth`` deep, each also holding a worded leaf (built without recursion)."""
    opening: list[str] = []
    closing: list[str] = []
    visible: list[str] = []
    for d in range(depth):
        inset = min(d, 400)
        l, t, r, b = inset, inset, width - inset, height - inset  # noqa: E741
        leaf = _node("android.widget.TextView", l, t, min(r, l + 300), t + 40, text=f"Level {d}")
        attrs = _node("android.widget.LinearLayout", l, t, r, b, "X")
        opening.append(attrs[: attrs.rindex("X")] + leaf)
        closing.append("</node>")
        visible.append(f"Level {d}")
    return _wrap("".join(opening) + "".join(reversed(closing)), width, height), visible
