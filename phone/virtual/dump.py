"""Serialises a view tree as ``uiautomator dump`` XML, applying the tree-level noise
knobs (missing content-desc, invisible and stale nodes, opaque regions).

Reads the tree; never changes it or the phone.
"""

from __future__ import annotations

import random
from xml.sax.saxutils import quoteattr

from phone.virtual.noise import NoiseConfig, stable_chance
from phone.virtual.view import Node
from vision.geometry import Rect, Size

_DECOYS = ("Loading…", "Sponsored", "Tap to retry", "New", "Undo", "See all", "OK", "More options")


def _b(v: bool) -> str:
    return "true" if v else "false"


def visible_rect(n: Node, screen: Size) -> Rect | None:
    r = n.rect
    if n.clip is not None:
        r = r.intersection(n.clip)  # type: ignore[assignment]
        if r is None:
            return None
    r = r.clamp(screen)
    return None if r.is_empty() else r


def _attrs(index: int, text: str, rid: str, cls: str, pkg: str, desc: str, n: Node | None, rect: Rect) -> str:
    f = n or Node(rect=rect)
    return (
        f'index="{index}" text={quoteattr(text)} resource-id={quoteattr(rid)} class={quoteattr(cls)} '
        f'package={quoteattr(pkg)} content-desc={quoteattr(desc)} checkable="{_b(f.checkable)}" '
        f'checked="{_b(f.checked)}" clickable="{_b(f.clickable)}" enabled="{_b(f.enabled)}" '
        f'focusable="{_b(f.focusable)}" focused="{_b(f.focused)}" scrollable="{_b(f.scrollable)}" '
        f'long-clickable="{_b(f.long_clickable)}" password="{_b(f.password)}" selected="{_b(f.selected)}" '
        f'bounds="{rect.to_bounds_string()}"'
    )


class _Writer:
    def __init__(self, screen: Size, package: str, noise: NoiseConfig, seed: int) -> None:
        self.screen = screen
        self.package = package
        self.noise = noise
        self.seed = seed
        self.lines: list[str] = []

    def desc_of(self, n: Node) -> str:
        if (
            n.desc
            and self.noise.missing_desc > 0
            and n.icon
            and not n.text
            and stable_chance(self.seed, "desc", n.rid, n.icon, n.desc) < self.noise.missing_desc
        ):
            return ""
        return n.desc

    def node(self, n: Node, index: int, depth: int) -> None:
        if not n.xml:
            return
        rect = visible_rect(n, self.screen)
        if rect is None:
            return
        pad = "  " * depth
        pkg = n.package or self.package
        if n.package and self.noise.is_opaque(n.package):
            self.lines.append(f"{pad}<node {_attrs(index, '', '', 'android.view.View', pkg, '', None, rect)} />")
            return
        kids = [c for c in n.children if c.xml and visible_rect(c, self.screen) is not None]
        head = f"{pad}<node {_attrs(index, n.text, n.rid, n.cls, pkg, self.desc_of(n), n, rect)}"
        if not kids:
            self.lines.append(head + " />")
            return
        self.lines.append(head + ">")
        for i, c in enumerate(kids):
            self.node(c, i, depth + 1)
        self.lines.append(f"{pad}</node>")

    def decoys(self, count: int, frame_key: int, depth: int) -> None:
        rng = random.Random(f"{self.seed}:decoy:{frame_key}")
        w, h = self.screen.width, self.screen.height
        for i in range(count):
            text = rng.choice(_DECOYS)
            if i % 2 == 0:
                x, y = rng.randrange(0, w), rng.randrange(0, h)
                rect = Rect(x, y, x, y)
            else:
                x, y = rng.randrange(0, w * 3 // 4), rng.randrange(h // 8, h * 7 // 8)
                rect = Rect(x, y, min(w, x + w // 4), min(h, y + h // 20))
            self.lines.append(
                f"{'  ' * depth}<node {_attrs(100 + i, text, '', 'android.widget.TextView', self.package, '', None, rect)} />"
            )


def dump_xml(root: Node, screen: Size, package: str, noise: NoiseConfig, seed: int, *, frame_key: int = 0,
             stale: Node | None = None) -> str:
    """The tree as uiautomator XML (UTF-8 declaration, ``<hierarchy rotation="0">``)."""
    w = _Writer(screen, package, noise, seed)
    w.lines.append("<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>")
    w.lines.append('<hierarchy rotation="0">')
    w.node(root, 0, 1)
    if stale is not None:
        # The previous screen's nodes, left behind by a slow accessibility service.
        for i, c in enumerate(stale.children):
            w.node(c, len(root.children) + i, 2)
    if noise.invisible_nodes:
        w.decoys(noise.invisible_nodes, frame_key, 2)
    w.lines.append("</hierarchy>")
    return "\n".join(w.lines)
