"""Password fields painted over: what a stored frame keeps of a screen.

``mask_password_fields`` covers every node the screen's tree marks as a password field
(``password="true"`` in a uiautomator or Appium dump) with a flat grey box, so that a
password shown in clear (a "show password" toggle, or the last character Android flashes
while typing) never reaches a stored screenshot.  Frames without a tree, and fields the
tree does not mark, are left as they are: masking needs the tree's word for it.  The
live mirror is never masked (it is the user's own screen); stored frames are, and so is
every frame the parser reads (``vision.pipeline``), so OCR never reads a password.

Pure image work on a copy; the input ``Screen`` is not changed.  No I/O, no LLM.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from vision.geometry import Rect
from vision.hierarchy_read import read_uiautomator_xml
from vision.types import Screen

#: The colour a masked field is painted (a mid grey that reads as "hidden" in light and dark themes).
MASK_RGB = (128, 128, 128)


def password_rects(screen: Screen) -> list[Rect]:
    """The rectangles of the password fields the screen's tree marks (none without a tree)."""
    xml = screen.hierarchy_xml
    if not xml or 'password="true"' not in xml or xml.lstrip().startswith("{"):  # cheap: most screens have none
        return []
    roots, _warnings = read_uiautomator_xml(xml)
    found: list[Rect] = []
    stack = list(roots)
    while stack:
        node = stack.pop()
        if node.password and node.rect.width > 0 and node.rect.height > 0:
            found.append(node.rect)
        stack.extend(node.children)
    return found


def mask_password_fields(screen: Screen) -> Screen:
    """``screen`` with its password fields painted over (the same object when it has none)."""
    rects = password_rects(screen)
    if not rects:
        return screen
    image = np.array(screen.image, copy=True)
    h, w = image.shape[:2]
    for r in rects:
        left, top = max(0, r.left), max(0, r.top)
        right, bottom = min(w, r.right), min(h, r.bottom)
        if right > left and bottom > top:
            image[top:bottom, left:right] = MASK_RGB
    return replace(screen, image=image)
