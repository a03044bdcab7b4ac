"""Accessibility trees (``uiautomator dump`` XML, Appium page source, Rico and DroidBot JSON)
-> cleaned ``Element`` lists.

Appium's page source is uiautomator's XML with each element's tag named by its class
(``<android.widget.FrameLayout …>``, ``displayed`` for visibility); DroidBot's state JSON is
a flat ``views`` list with ``[[left, top], [right, bottom]]`` bounds and child indices.

Cleaning follows the latent-state paper's App. A: nodes marked invisible and nodes whose
box lies completely off the screen are dropped with their subtrees, and chains of
containers that carry no text, description or hint collapse into their child.  What is
left becomes ``Element`` objects (and ``Block`` candidates from the tree's structure).

The formats are read by ``vision.hierarchy_read``; this module cleans the nodes and turns
them into elements and blocks.  It parses text; it never looks at pixels and never raises on malformed input
unless asked to (``strict=True``): a broken dump yields an empty tree and a warning.
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from vision.errors import HierarchyError
from vision.geometry import Rect, Size
from vision.hierarchy_read import TreeNode, _read_xml, read_droidbot_json, read_rico_json
from vision.occlusion import tree_occlusion
from vision.types import Block, Element, ElementKind, ElementSource

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class TreeParse:
    """The result of parsing one dump: elements in reading order, blocks, and warnings."""

    elements: tuple[Element, ...] = ()
    blocks: tuple[Block, ...] = ()
    warnings: tuple[str, ...] = ()
    node_count: int = 0
    kept_count: int = 0
    occluder: Rect | None = None  # the top dialog / sheet / menu panel, if the tree shows one


# --------------------------------------------------------------------------- cleaning


def _count(nodes: Iterable[TreeNode]) -> int:
    total = 0
    stack = list(nodes)
    while stack:
        n = stack.pop()
        total += 1
        stack.extend(n.children)
    return total


def clean_tree(roots: list[TreeNode], screen: Size, *, collapse: bool = True) -> list[TreeNode]:
    """App. A cleaning: drop invisible/off-screen subtrees, clamp boxes, collapse empty chains.

    Walks the tree with an explicit stack (children before their parent), so a deep tree
    costs memory in proportion to its size, never Python's recursion limit."""
    screen_rect = Rect(0, 0, screen.width, screen.height)
    sized = screen.width > 0 and screen.height > 0
    cleaned: dict[int, TreeNode | None] = {}
    stack: list[tuple[TreeNode, bool]] = [(r, False) for r in reversed(roots)]
    while stack:
        n, children_done = stack.pop()
        if children_done:
            n.children = [k for k in (cleaned.pop(id(c), None) for c in n.children) if k is not None]
            cleaned[id(n)] = _collapsed(n) if collapse else n
            continue
        r = n.rect
        inside = sized and 0 <= r.left and 0 <= r.top and r.right <= screen.width and r.bottom <= screen.height and r.left < r.right and r.top < r.bottom
        inter = r if inside or not sized else r.intersection(screen_rect)  # a box on the screen is its own intersection
        if not n.visible or inter is None or (not sized and n.rect.is_empty()):
            cleaned[id(n)] = None
            continue
        n.rect = inter
        stack.append((n, True))
        stack.extend((c, False) for c in reversed(n.children))
    return [k for k in (cleaned.pop(id(r), None) for r in roots) if k is not None]


def _collapsed(n: TreeNode) -> TreeNode:
    """A container with no words and a single child adds nothing but depth: its child stands in."""
    while len(n.children) == 1 and not n.has_words and not n.interactive and not n.children[0].rect.is_empty():
        n = n.children[0]
    return n


# --------------------------------------------------------------------------- elements

_KIND_BY_CLASS: tuple[tuple[str, ElementKind], ...] = (
    ("edittext", ElementKind.EDIT_TEXT),
    ("autocompletetextview", ElementKind.EDIT_TEXT),
    ("searchview", ElementKind.EDIT_TEXT),
    ("switch", ElementKind.SWITCH),
    ("togglebutton", ElementKind.SWITCH),
    ("checkbox", ElementKind.CHECK_BOX),
    ("checkedtextview", ElementKind.CHECK_BOX),
    ("radiobutton", ElementKind.RADIO_GROUP),
    ("radiogroup", ElementKind.RADIO_GROUP),
    ("seekbar", ElementKind.SEEK_BAR),
    ("slider", ElementKind.SEEK_BAR),
    ("ratingbar", ElementKind.RATING_BAR),
    ("spinner", ElementKind.SPINNER),
    ("pageindicator", ElementKind.PAGE_INDICATOR),
    ("imagebutton", ElementKind.BUTTON),
    ("floatingactionbutton", ElementKind.BUTTON),
    ("button", ElementKind.BUTTON),
    ("imageview", ElementKind.IMAGE),
    ("image", ElementKind.IMAGE),
    ("textview", ElementKind.TEXT),
    ("text", ElementKind.TEXT),
)


def kind_for(n: TreeNode) -> ElementKind:
    """The element kind a node's class name (and flags) suggest."""
    rid = n.resource_id.lower()
    if "statusbar" in rid or rid.endswith("status_bar"):
        return ElementKind.STATUS_BAR
    if "navigationbar" in rid or rid.endswith("navigation_bar") or rid.endswith("nav_bar"):
        return ElementKind.NAVIGATION_BAR
    c = n.short_class.lower()
    for needle, kind in _KIND_BY_CLASS:
        if needle in c:
            if kind in (ElementKind.TEXT, ElementKind.IMAGE) and (n.clickable or n.long_clickable):
                return ElementKind.BUTTON
            return kind
    if n.checkable:
        return ElementKind.CHECK_BOX
    if n.clickable or n.long_clickable:
        return ElementKind.BUTTON
    if n.scrollable or n.children:
        return ElementKind.CONTAINER
    if n.has_words:
        return ElementKind.TEXT
    return ElementKind.UNKNOWN


def _emit(n: TreeNode) -> bool:
    """Whether a node deserves to be an element: it has words, is interactive or is a leaf widget."""
    if n.rect.is_empty():
        return False
    if n.has_words or n.interactive:
        return True
    if not n.children:
        k = kind_for(n)
        return k not in (ElementKind.UNKNOWN, ElementKind.CONTAINER, ElementKind.TEXT)
    return kind_for(n) in (ElementKind.STATUS_BAR, ElementKind.NAVIGATION_BAR)


def _to_element(n: TreeNode, eid: str, *, covered: bool = False) -> Element:
    """The element for node ``n``; a clickable one with no words of its own is labelled with
    its descendants' words (a row's title and summary)."""
    kind = kind_for(n)
    text = n.text
    label = n.content_desc or (n.hint if not n.text else "")
    if not text and kind is ElementKind.TEXT and n.content_desc:
        text, label = n.content_desc, ""
    clickable = n.clickable or n.long_clickable
    if clickable and not text and not label:
        label = _descendant_words(n)
    checkable = n.checkable or kind in (ElementKind.SWITCH, ElementKind.CHECK_BOX, ElementKind.RADIO_GROUP)
    return Element(
        id=eid,
        kind=kind,
        rect=n.rect,
        text=text,
        label=label,
        resource_id=n.resource_id,
        class_name=n.class_name,
        clickable=clickable,
        checkable=checkable,
        checked=n.checked if checkable else None,
        selected=n.selected,
        enabled=n.enabled,
        focused=n.focused,
        scrollable=n.scrollable,
        password=n.password,
        source=ElementSource.HIERARCHY,
        confidence=1.0,
        covered=covered,
    )


def reading_order_key(rect: Rect) -> tuple[int, int]:
    """Top-to-bottom, then left-to-right, with a small row tolerance."""
    return (rect.top // 8, rect.left)


def tree_to_parse(roots: list[TreeNode], screen: Size, *, id_prefix: str = "t") -> TreeParse:
    """Turn cleaned roots into elements (reading order) and structural blocks.

    Nodes under a dialog, sheet or menu (see ``vision.occlusion``) become ``covered``
    elements and stay out of the blocks."""
    occ = tree_occlusion(roots, screen)
    flat: list[TreeNode] = []
    stack = list(reversed(roots))
    while stack:
        n = stack.pop()
        flat.append(n)
        stack.extend(reversed(n.children))
    chosen = [n for n in flat if _emit(n)]
    ids: dict[int, str] = {}
    elements: list[Element] = []
    for i, n in enumerate(sorted(chosen, key=lambda n: reading_order_key(n.rect))):
        eid = f"{id_prefix}{i + 1}"
        ids[id(n)] = eid
        elements.append(_to_element(n, eid, covered=id(n) in occ.covered))
    visible_ids = {k: v for k, v in ids.items() if k not in occ.covered}
    blocks = [b for b in _tree_blocks(roots, visible_ids, screen) if b.element_ids]
    return TreeParse(elements=tuple(elements), blocks=tuple(blocks), node_count=len(flat), kept_count=len(elements),
                     occluder=occ.panel)


def _descendant_words(n: TreeNode, limit: int = 3) -> str:
    """Words of non-interactive descendants (a clickable row's title and summary)."""
    words: list[str] = []
    stack = list(reversed(n.children))
    while stack and len(words) < limit:
        m = stack.pop()
        if m.clickable:
            continue
        w = m.text or m.content_desc
        if w:
            words.append(w)
        stack.extend(reversed(m.children))
    return " · ".join(words)


def _subtree_ids(n: TreeNode, ids: Mapping[int, str]) -> list[str]:
    out: list[str] = []
    stack = [n]
    while stack:
        m = stack.pop()
        if id(m) in ids:
            out.append(ids[id(m)])
        stack.extend(m.children)
    return out


def _tree_blocks(roots: list[TreeNode], ids: Mapping[int, str], screen: Size) -> list[Block]:
    """Blocks = the largest subtrees that cover less than ~70 % of the screen."""
    area = max(1, screen.area)
    found: list[tuple[TreeNode, list[str]]] = []

    def visit(n: TreeNode, depth: int) -> None:
        members = _subtree_ids(n, ids)
        if not members:
            return
        if _tree_role(n, screen) == "list":
            found.append((n, members))
            return
        big = n.rect.area > 0.7 * area
        if (big or (len(members) > 1 and len(n.children) > 1 and n.rect.area > 0.4 * area and depth < 2)) and n.children and depth < 60:
            own = ids.get(id(n))
            for c in n.children:
                visit(c, depth + 1)
            if own:  # the big node itself is an element (e.g. a scrollable list)
                found.append((n, [own]))
            return
        found.append((n, members))

    for r in roots:
        visit(r, 0)
    blocks: list[Block] = []
    for i, (n, members) in enumerate(sorted(found, key=lambda x: reading_order_key(x[0].rect))):
        blocks.append(Block(id=f"b{i + 1}", role=_tree_role(n, screen), rect=n.rect, element_ids=tuple(members)))
    return blocks


def _tree_role(n: TreeNode, screen: Size) -> str:
    k = kind_for(n)
    if k is ElementKind.STATUS_BAR:
        return "status_bar"
    if k is ElementKind.NAVIGATION_BAR:
        return "navigation_bar"
    c = n.short_class.lower()
    if "toolbar" in c or "actionbar" in c:
        return "app_bar"
    if "tablayout" in c or "bottomnavigation" in c or "tabwidget" in c:
        return "tab_bar"
    if n.scrollable or "recycler" in c or "listview" in c or "scrollview" in c:
        return "list"
    if screen.height and n.rect.bottom >= screen.height * 0.9 and n.rect.height < screen.height * 0.12:
        return "bottom_bar"
    return "group"


# --------------------------------------------------------------------------- entry points


def parse_uiautomator(xml_text: str | bytes | None, screen: Size, *, collapse: bool = True, strict: bool = False) -> TreeParse:
    """``uiautomator dump`` text -> ``TreeParse`` (empty with a warning on bad input)."""
    sized = screen.width > 0 and screen.height > 0
    roots, warnings, total = _read_xml(xml_text, Rect(0, 0, screen.width, screen.height) if sized else None)
    if strict and not roots:
        raise HierarchyError(warnings[0] if warnings else "empty hierarchy", "capture the dump again")
    if not sized:
        screen = _infer_size(roots)
    cleaned = clean_tree(roots, screen, collapse=collapse)
    parse = tree_to_parse(cleaned, screen)
    return TreeParse(parse.elements, parse.blocks, tuple(warnings), total, parse.kept_count, parse.occluder)


def parse_rico(data: Mapping[str, Any], image_size: Size, *, device_width: int = 1440, collapse: bool = True) -> TreeParse:
    """Rico JSON -> ``TreeParse`` in screenshot pixels (bounds scaled by ``image_width/device_width``)."""
    scale = image_size.width / device_width if device_width else 1.0
    roots, warnings = read_rico_json(data, scale=scale)
    total = _count(roots)
    cleaned = clean_tree(roots, image_size, collapse=collapse)
    parse = tree_to_parse(cleaned, image_size)
    return TreeParse(parse.elements, parse.blocks, tuple(warnings), total, parse.kept_count, parse.occluder)


def _infer_size(roots: list[TreeNode]) -> Size:
    w = max((r.rect.right for r in roots), default=0)
    h = max((r.rect.bottom for r in roots), default=0)
    return Size(w, h)


def detect_format(text: str | bytes) -> str:
    """Which tree format a file holds: ``uiautomator``, ``appium``, ``rico``, ``droidbot`` or ``unknown``."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    head = text.lstrip()[:4096]
    if head.startswith("{"):
        try:
            data = json.loads(text)
        except ValueError:
            return "unknown"
        if isinstance(data, Mapping) and isinstance(data.get("views"), list):
            return "droidbot"
        if isinstance(data, Mapping) and (isinstance(data.get("activity"), Mapping) or "bounds" in data):
            return "rico"
        return "unknown"
    if "<node" in head:
        return "uiautomator"
    if re.search(r"<[A-Za-z_][\w$]*\.[\w.$]+[\s>/]", head):
        return "appium"
    return "unknown"


def _whole(value: object) -> int:
    """``value`` as a positive whole number, or 0 when it is not one (``"abc"``, NaN, -5)."""
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return 0
    return int(number) if math.isfinite(number) and number > 0 else 0


def parse_hierarchy(text: str | bytes | None, screen: Size, *, collapse: bool = True,
                    device_size: Size | None = None) -> TreeParse:
    """Any supported tree (see ``detect_format``) -> ``TreeParse`` in ``screen`` pixels.

    JSON trees are scaled from their device space to ``screen``: DroidBot's ``width`` field
    (or ``device_size``), Rico's 1440-pixel-wide space.  An unknown format gives an empty
    parse whose warning names the formats that are read."""
    if text is None:
        return TreeParse(warnings=("no hierarchy dump",))
    fmt = detect_format(text)
    if fmt in ("uiautomator", "appium"):
        return parse_uiautomator(text, screen, collapse=collapse)
    if fmt == "unknown":
        return TreeParse(warnings=("not a hierarchy this reader knows: expected uiautomator or Appium XML, "
                                   "Rico or DroidBot JSON",))
    data = json.loads(text)
    if fmt == "rico":
        width = device_size.width if device_size else 1440
        return parse_rico(data, screen, device_width=width, collapse=collapse)
    width = device_size.width if device_size else _whole(data.get("width"))
    scale = screen.width / width if width > 0 and screen.width > 0 else 1.0
    roots, warnings = read_droidbot_json(data, scale=scale)
    if width <= 0 and data.get("width") not in (None, "", 0):
        warnings = [*warnings, f"DroidBot 'width' is not a number of pixels ({str(data.get('width'))[:20]!r}): "
                               "the tree was not scaled"]
    if screen.width == 0 or screen.height == 0:
        screen = _infer_size(roots)
    total = _count(roots)
    cleaned = clean_tree(roots, screen, collapse=collapse)
    parse = tree_to_parse(cleaned, screen)
    return TreeParse(parse.elements, parse.blocks, tuple(warnings), total, parse.kept_count, parse.occluder)
