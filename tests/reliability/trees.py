"""Generated accessibility trees for the large- and deep-tree cases (a long list of rows,
and a chain of nested nodes), in uiautomator dump format."""

from __future__ import annotations


def big_tree(nodes: int, width: int = 1080, height: int = 2400) -> str:
    """A uiautomator dump of a long list: ``nodes`` nodes in rows of (row, icon, title, subtitle)."""
    parts = ['<?xml version="1.0" encoding="UTF-8"?><hierarchy rotation="0">',
             f'<node index="0" text="" resource-id="" class="android.widget.FrameLayout" package="com.example.list" '
             f'content-desc="" clickable="false" enabled="true" focusable="false" scrollable="true" '
             f'bounds="[0,0][{width},{height}]">']
    rows = max(1, (nodes - 1) // 4)
    row_h = 120
    for i in range(rows):
        top = (i * row_h) % (height - row_h)
        b = f"[0,{top}][{width},{top + row_h}]"
        parts.append(f'<node index="{i}" text="" resource-id="com.example.list:id/row" class="android.widget.LinearLayout" '
                     f'package="com.example.list" content-desc="" clickable="true" enabled="true" focusable="true" '
                     f'scrollable="false" bounds="{b}">')
        parts.append(f'<node index="0" text="" resource-id="com.example.list:id/icon" class="android.widget.ImageView" '
                     f'package="com.example.list" content-desc="Item {i} icon" clickable="false" enabled="true" '
                     f'focusable="false" scrollable="false" bounds="[16,{top + 16}][104,{top + 104}]"/>')
        parts.append(f'<node index="1" text="Item number {i}" resource-id="com.example.list:id/title" '
                     f'class="android.widget.TextView" package="com.example.list" content-desc="" clickable="false" '
                     f'enabled="true" focusable="false" scrollable="false" bounds="[120,{top + 10}][{width - 20},{top + 60}]"/>')
        parts.append(f'<node index="2" text="Details of {i}" resource-id="com.example.list:id/sub" '
                     f'class="android.widget.TextView" package="com.example.list" content-desc="" clickable="false" '
                     f'enabled="true" focusable="false" scrollable="false" bounds="[120,{top + 64}][{width - 20},{top + 110}]"/>')
        parts.append('</node>')
    parts.append('</node></hierarchy>')
    return "".join(parts)


def deep_tree(depth: int, width: int = 1080, height: int = 2400) -> str:
    """A uiautomator dump of ``depth`` nodes each nested in the one before."""
    node = (f'<node text="" class="android.widget.FrameLayout" package="com.example.deep" clickable="false" '
            f'enabled="true" bounds="[0,0][{width},{height}]">')
    return '<?xml version="1.0" encoding="UTF-8"?><hierarchy rotation="0">' + node * depth + "</node>" * depth + \
        "</hierarchy>"
