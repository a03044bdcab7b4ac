"""Reading accessibility trees into parse-time ``TreeNode``s: uiautomator's XML (and
Appium's page source, the same XML with each element's tag named by its class and
``displayed`` for visibility), DroidBot's state JSON (a flat ``views`` list with
``[[left, top], [right, bottom]]`` bounds and child indices) and Rico's JSON.

Subtrees that lie wholly off the screen are counted but never built; a malformed XML dump
is salvaged where it can be and otherwise yields an empty tree and a warning.  Cleaning
and turning nodes into elements is ``vision.hierarchy``'s job; no pixels here.
"""

from __future__ import annotations

import logging
import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from vision.geometry import Rect

log = logging.getLogger(__name__)

_TRUE = {"true", "1", "yes"}
_BOUNDS_RE = re.compile(r"\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]")
MAX_DEPTH = 400  # deeper trees are truncated rather than recursed into


@dataclass(slots=True)
class TreeNode:
    """A mutable, parse-time node (never leaves ``vision.hierarchy`` except through ``TreeParse``)."""

    class_name: str = ""
    text: str = ""
    content_desc: str = ""
    hint: str = ""
    resource_id: str = ""
    package: str = ""
    rect: Rect = field(default_factory=lambda: Rect(0, 0, 0, 0))
    clickable: bool = False
    long_clickable: bool = False
    checkable: bool = False
    checked: bool = False
    selected: bool = False
    enabled: bool = True
    focused: bool = False
    focusable: bool = False
    scrollable: bool = False
    password: bool = False
    visible: bool = True
    children: list[TreeNode] = field(default_factory=list)

    @property
    def short_class(self) -> str:
        return self.class_name.rsplit(".", 1)[-1]

    @property
    def has_words(self) -> bool:
        return bool(self.text.strip() or self.content_desc.strip() or self.hint.strip())

    @property
    def interactive(self) -> bool:
        return self.clickable or self.long_clickable or self.checkable or self.scrollable or _is_editable(self)


def _is_editable(n: TreeNode) -> bool:
    c = n.short_class.lower()
    return "edittext" in c or "autocompletetextview" in c


def _b(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() in _TRUE


def _parse_bounds(text: str) -> Rect | None:
    m = _BOUNDS_RE.search(text or "")
    if not m:
        return None
    left, top, right, bottom = map(int, m.groups())
    return Rect(left, top, right if right > left else left, bottom if bottom > top else top)


def _flag(a: Mapping[str, str], key: str, default: bool) -> bool:
    """A boolean attribute; the common spellings are answered without normalising."""
    v = a.get(key)
    if v is None:
        return default
    if v == "false":
        return False
    return v == "true" or _b(v)


def _node_from_attrib(a: Mapping[str, str], tag: str = "node", rect: Rect | None = None) -> TreeNode:
    if rect is None:
        rect = _parse_bounds(a.get("bounds", "")) or Rect(0, 0, 0, 0)
    return TreeNode(
        class_name=a.get("class", "") or ("" if tag == "node" else tag),
        text=(a.get("text", "") or "").strip(),
        content_desc=(a.get("content-desc", "") or "").strip(),
        hint=(a.get("hint", "") or a.get("hintText", "") or "").strip(),
        resource_id=a.get("resource-id", "") or "",
        package=a.get("package", "") or "",
        rect=rect,
        clickable=_flag(a, "clickable", False),
        long_clickable=_flag(a, "long-clickable", False),
        checkable=_flag(a, "checkable", False),
        checked=_flag(a, "checked", False),
        selected=_flag(a, "selected", False),
        enabled=_flag(a, "enabled", True),
        focused=_flag(a, "focused", False),
        focusable=_flag(a, "focusable", False),
        scrollable=_flag(a, "scrollable", False),
        password=_flag(a, "password", False),
        visible=_visible(a),
    )


def _visible(a: Mapping[str, str]) -> bool:
    return _flag(a, "visible-to-user", True) and _flag(a, "displayed", True)


def _salvage_xml(text: str) -> str:
    """Cut away what ``uiautomator`` and shells add around the XML document."""
    start = text.find("<hierarchy")
    if start < 0:
        start = text.find("<?xml")
    if start < 0:
        start = text.find("<node")
    end = text.rfind("</hierarchy>")
    if start > 0 or end >= 0:
        text = text[max(start, 0) : (end + len("</hierarchy>")) if end >= 0 else len(text)]
    return text


def read_uiautomator_xml(xml_text: str | bytes | None) -> tuple[list[TreeNode], list[str]]:
    """Parse dump text into root ``TreeNode`` objects.  Never raises: problems become warnings."""
    roots, warnings, _ = _read_xml(xml_text, None)
    return roots, warnings


def _read_xml(xml_text: str | bytes | None, screen: Rect | None) -> tuple[list[TreeNode], list[str], int]:
    """Roots, warnings and the number of nodes read.

    With ``screen``, a node below a root that the cleaning would drop (invisible, or its box
    wholly off ``screen``) is counted but not built, nor is anything under it: on a long
    list most of a dump lies below the screen's bottom."""
    warnings: list[str] = []
    if xml_text is None:
        return [], ["no hierarchy dump"], 0
    if isinstance(xml_text, bytes):
        xml_text = xml_text.decode("utf-8", errors="replace")
    if not xml_text.strip():
        return [], ["hierarchy dump is empty"], 0
    try:
        root = ET.fromstring(_salvage_xml(xml_text))
    except ET.ParseError as exc:
        return [], [f"hierarchy dump is not well-formed XML ({exc}); ignoring it"], 0
    total = 0

    def build(el: ET.Element, depth: int) -> TreeNode | None:
        nonlocal total
        if not _is_view_tag(el):
            return None
        a = el.attrib
        rect = _parse_bounds(a.get("bounds", "")) or Rect(0, 0, 0, 0)
        if depth > 0 and screen is not None and (not _visible(a) or rect.intersection(screen) is None):
            total += _subtree_size(el, depth)
            return None
        total += 1
        node = _node_from_attrib(a, el.tag, rect)
        if depth < MAX_DEPTH:
            for child in el:
                c = build(child, depth + 1)
                if c is not None:
                    node.children.append(c)
        return node

    roots: list[TreeNode] = []
    try:
        if _is_view_tag(root) and root.tag != "hierarchy":
            n = build(root, 0)
            if n:
                roots.append(n)
        else:
            for child in root:
                n = build(child, 0)
                if n:
                    roots.append(n)
    except RecursionError:
        warnings.append("hierarchy dump nests too deeply; truncated")
    if not roots:
        warnings.append("hierarchy dump has no nodes")
    return roots, warnings, total


def _subtree_size(el: ET.Element, depth: int) -> int:
    """How many nodes reading ``el`` (at ``depth``) would build: it and its view-tag
    descendants reached through view tags, down to ``MAX_DEPTH``."""
    size = 0
    stack = [(el, depth)]
    while stack:
        e, d = stack.pop()
        size += 1
        if d < MAX_DEPTH:
            stack.extend((c, d + 1) for c in e if _is_view_tag(c))
    return size


def _is_view_tag(el: ET.Element) -> bool:
    """uiautomator's ``<node>``, or Appium's class-named tag (``<android.widget.Button>``,
    ``<androidx.recyclerview.widget.RecyclerView>``; anything with a ``bounds`` attribute)."""
    return el.tag == "node" or (el.tag != "hierarchy" and ("bounds" in el.attrib or "." in el.tag))


def read_droidbot_json(data: Mapping[str, Any], *, scale: float = 1.0) -> tuple[list[TreeNode], list[str]]:
    """DroidBot's state JSON (``views``: a flat list; ``parent``/``children`` are indices into
    it; ``bounds`` is ``[[left, top], [right, bottom]]``) -> ``TreeNode`` roots."""
    views = data.get("views") if isinstance(data, Mapping) else None
    if not isinstance(views, list) or not views:
        return [], ["DroidBot state has no views"]
    warnings: list[str] = []
    nodes: list[TreeNode | None] = []
    for v in views:
        if not isinstance(v, Mapping):
            nodes.append(None)
            continue
        try:
            (left, top), (right, bottom) = v.get("bounds") or [[0, 0], [0, 0]]
            left, top, right, bottom = (round(float(x) * scale) for x in (left, top, right, bottom))
            rect = Rect(left, top, max(left, right), max(top, bottom))
        except (TypeError, ValueError):
            rect = Rect(0, 0, 0, 0)
        nodes.append(TreeNode(
            class_name=str(v.get("class") or ""),
            text=str(v.get("text") or "").strip(),
            content_desc=str(v.get("content_description") or "").strip(),
            resource_id=str(v.get("resource_id") or ""),
            package=str(v.get("package") or ""),
            rect=rect,
            clickable=_b(v.get("clickable", False)),
            long_clickable=_b(v.get("long_clickable", False)),
            checkable=_b(v.get("checkable", False)),
            checked=_b(v.get("checked", False)),
            selected=_b(v.get("selected", False)),
            enabled=_b(v.get("enabled", True)),
            focused=_b(v.get("focused", False)),
            focusable=_b(v.get("focusable", False)),
            scrollable=_b(v.get("scrollable", False)),
            password=_b(v.get("is_password", False)),
            visible=_b(v.get("visible", True)),
        ))
    roots: list[TreeNode] = []
    seen: set[int] = set()  # each view is attached once, from a root down, so a malformed file cannot loop
    for i, v in enumerate(views):
        parent = v.get("parent", -1) if isinstance(v, Mapping) else 0
        if nodes[i] is None or (isinstance(parent, int) and 0 <= parent < len(views) and parent != i):
            continue
        roots.append(nodes[i])  # type: ignore[arg-type]
        seen.add(i)
        stack = [i]
        while stack:
            j = stack.pop()
            kids = views[j].get("children") or []
            for k in kids if isinstance(kids, list) else []:
                if isinstance(k, int) and 0 <= k < len(nodes) and k not in seen and nodes[k] is not None:
                    seen.add(k)
                    nodes[j].children.append(nodes[k])  # type: ignore[union-attr, arg-type]
                    stack.append(k)
    if not roots:
        warnings.append("DroidBot state has no root view (every view names a parent)")
    return roots, warnings


def read_rico_json(data: Mapping[str, Any], *, scale: float = 1.0) -> tuple[list[TreeNode], list[str]]:
    """Rico's combined view-hierarchy JSON (``activity.root``) -> ``TreeNode`` roots.

    ``scale`` maps Rico's 1440x2560 device space onto the screenshot (0.75 for 1080 wide).
    """
    warnings: list[str] = []
    root = data.get("activity", {}).get("root") if isinstance(data, Mapping) else None
    if root is None and isinstance(data, Mapping) and "bounds" in data:
        root = data
    if not isinstance(root, Mapping):
        return [], ["Rico JSON has no activity.root"]

    def build(d: Mapping[str, Any], depth: int) -> TreeNode | None:
        if not isinstance(d, Mapping):
            return None
        b = d.get("bounds") or [0, 0, 0, 0]
        try:
            left, top, right, bottom = (round(float(v) * scale) for v in b[:4])
            rect = Rect(left, top, max(left, right), max(top, bottom))
        except (TypeError, ValueError, IndexError):
            rect = Rect(0, 0, 0, 0)
        desc = d.get("content-desc")
        if isinstance(desc, list):
            desc = " ".join(str(x) for x in desc if x)
        node = TreeNode(
            class_name=str(d.get("class") or ""),
            text=str(d.get("text") or "").strip(),
            content_desc=str(desc or "").strip(),
            resource_id=str(d.get("resource-id") or ""),
            package=str(d.get("package") or ""),
            rect=rect,
            clickable=_b(d.get("clickable", False)),
            long_clickable=_b(d.get("long-clickable", False)),
            checkable=_b(d.get("checkable", False)) if "checkable" in d else False,
            checked=_b(d.get("checked", False)),
            selected=_b(d.get("selected", False)),
            enabled=_b(d.get("enabled", True)),
            focused=_b(d.get("focused", False)),
            focusable=_b(d.get("focusable", False)),
            scrollable=_b(d.get("scrollable-vertical", False)) or _b(d.get("scrollable-horizontal", False)),
            visible=_b(d.get("visible-to-user", True)) and _b(d.get("visibility", "visible") in ("visible", True)),
        )
        if depth < MAX_DEPTH:
            for c in d.get("children") or []:
                cn = build(c, depth + 1)
                if cn is not None:
                    node.children.append(cn)
        return node

    n = build(root, 0)
    return ([n] if n else []), warnings
