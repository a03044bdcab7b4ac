"""The interaction graph of pages (Prompt2Task §4.2.4): nodes are pages, merged when
their texts and text positions are similar; edges link an element (by a stable key) on
one page to the page that acting on it led to.  ``predict`` tells where an action will
probably lead, for planner and assessment prompts.

Plain in-memory structure with ``to_data``/``from_data`` for a ``KnowledgeStore``.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from agent.knowledge.types import GraphEdge, GraphPage, GraphPicture
from agent.types import Fingerprint, new_id
from vision.types import Element, ElementKind, ScreenParse

log = logging.getLogger(__name__)

_CHROME = (ElementKind.STATUS_BAR, ElementKind.NAVIGATION_BAR)


def page_features(parse: ScreenParse) -> tuple[tuple[str, float, float], ...]:
    """(text, relative x, relative y) of each visible text, top to bottom."""
    w = max(1, parse.screen_size.width)
    h = max(1, parse.screen_size.height)
    feats = []
    for e in parse.elements:
        name = (e.text or e.label).strip().casefold()
        if not name or e.kind in _CHROME or len(name) > 60:
            continue
        c = e.rect.center
        feats.append((name, round(c.x / w, 3), round(c.y / h, 3)))
    feats.sort(key=lambda f: (f[2], f[1]))
    return tuple(dict.fromkeys(feats))


def page_similarity(a: tuple[tuple[str, float, float], ...], b: tuple[tuple[str, float, float], ...],
                    max_dist: float = 0.12) -> float:
    """Share of texts found on both pages near the same place (Dice coefficient)."""
    if not a or not b:
        return 0.0
    used: set[int] = set()
    matched = 0
    for text, x, y in a:
        for j, (t2, x2, y2) in enumerate(b):
            if j in used or t2 != text:
                continue
            if abs(x - x2) <= max_dist and abs(y - y2) <= max_dist:
                used.add(j)
                matched += 1
                break
    return 2 * matched / (len(a) + len(b))


def element_key(element: Element | None = None, fingerprint: Fingerprint | None = None) -> str:
    """A key for "this control" that survives re-parsing: resource id, else text, else label."""
    rid = (element.resource_id if element else "") or (fingerprint.resource_id if fingerprint else "")
    if rid:
        return "id:" + rid.rsplit("/", 1)[-1]
    text = (element.text if element else "") or (fingerprint.text if fingerprint else "")
    if text:
        return "text:" + text.strip().casefold()
    label = (element.label if element else "") or (fingerprint.label if fingerprint else "")
    if label:
        return "label:" + label.strip().casefold()
    kind = (element.kind.value if element else "") or (fingerprint.kind if fingerprint else "")
    return "kind:" + (kind or "unknown")


@dataclass
class PageNode:
    id: str
    app: str
    features: tuple[tuple[str, float, float], ...]
    description: str = ""
    visits: int = 1

    def summary(self, n: int = 6) -> str:
        if self.description:
            return self.description
        names = [f[0] for f in self.features[:n]]
        return "page with " + ", ".join(f"'{x}'" for x in names) if names else "an empty page"


@dataclass
class InteractionGraph:
    merge_threshold: float = 0.8
    nodes: dict[str, PageNode] = field(default_factory=dict)
    edges: dict[tuple[str, str], Counter[str]] = field(default_factory=dict)

    def locate(self, parse: ScreenParse, app: str = "", *, add: bool = True) -> str | None:
        """The node for this page (merged with a similar one), created when new."""
        feats = page_features(parse)
        best, best_sim = None, 0.0
        for node in self.nodes.values():
            if app and node.app and node.app != app:
                continue
            s = page_similarity(feats, node.features)
            if s > best_sim:
                best, best_sim = node, s
        if best is not None and best_sim >= self.merge_threshold:
            if add:
                best.visits += 1
            return best.id
        if not add:
            return None
        node = PageNode(id=new_id(), app=app, features=feats)
        self.nodes[node.id] = node
        return node.id

    def add_transition(self, before: ScreenParse, element: Element | None, after: ScreenParse, app: str = "",
                       *, fingerprint: Fingerprint | None = None, app_after: str | None = None) -> tuple[str, str]:
        """Record that acting on ``element`` of ``before`` led to ``after``."""
        src = self.locate(before, app)
        dst = self.locate(after, app_after if app_after is not None else app)
        assert src is not None and dst is not None
        key = element_key(element, fingerprint)
        self.edges.setdefault((src, key), Counter())[dst] += 1
        return src, dst

    def predict(self, parse: ScreenParse, element: Element, app: str = "") -> PageNode | None:
        """The page acting on ``element`` most often led to, if known."""
        src = self.locate(parse, app, add=False)
        if src is None:
            return None
        outs = self.edges.get((src, element_key(element)))
        if not outs:
            return None
        dst, _ = outs.most_common(1)[0]
        return self.nodes.get(dst)

    def hints(self, parse: ScreenParse, app: str = "", limit: int = 8) -> str:
        """Known outcomes of this page's controls, as prompt lines ("'Alarm' -> page with ...")."""
        lines = []
        for e in parse.elements:
            node = self.predict(parse, e, app)
            if node is not None:
                lines.append(f"- {e.display_name or e.kind.value} ({e.id}) -> {node.summary()}")
            if len(lines) >= limit:
                break
        return "\n".join(lines)

    def picture(self, summary_words: int = 3) -> GraphPicture:
        """A frozen snapshot for views: each page's summary and visits, each edge's count."""
        pages = tuple(GraphPage(n.id, n.app, n.summary(summary_words), n.visits) for n in self.nodes.values())
        edges = tuple(GraphEdge(s, k, d, c) for (s, k), ctr in self.edges.items() for d, c in ctr.items())
        return GraphPicture(pages, edges)

    # ---- persistence ----
    def to_data(self) -> dict[str, Any]:
        return {
            "merge_threshold": self.merge_threshold,
            "nodes": [{"id": n.id, "app": n.app, "features": [list(f) for f in n.features],
                       "description": n.description, "visits": n.visits} for n in self.nodes.values()],
            "edges": [{"src": s, "element": k, "dst": d, "count": c}
                      for (s, k), ctr in self.edges.items() for d, c in ctr.items()],
        }

    @classmethod
    def from_data(cls, data: dict[str, Any] | None) -> InteractionGraph:
        g = cls()
        if not data:
            return g
        g.merge_threshold = float(data.get("merge_threshold", g.merge_threshold))
        for n in data.get("nodes", []):
            g.nodes[n["id"]] = PageNode(n["id"], n.get("app", ""),
                                        tuple((str(t), float(x), float(y)) for t, x, y in n.get("features", [])),
                                        n.get("description", ""), int(n.get("visits", 1)))
        for e in data.get("edges", []):
            g.edges.setdefault((e["src"], e["element"]), Counter())[e["dst"]] += int(e.get("count", 1))
        return g
