"""How the vision benchmark (``bench/bench_vision.py``) scores a parse: greedy IoU
matching, OCR string recall (spans whose centres fall in a text's box grown by 4 px, joined
and compared with rapidfuzz at ratio >= 90), the real Rico screens' targets and text nodes
and the split of their apps, the predictions precision is judged on, the frame just after a
tap, and the recall / precision tally of one way of parsing.  The protocols are described
in ``bench_vision``'s docstring; this module only measures.
"""

from __future__ import annotations

import csv
import json
import statistics
from collections import defaultdict
from pathlib import Path

import numpy as np
from rapidfuzz import fuzz

from vision.geometry import Rect, Size
from vision.hierarchy_read import read_rico_json
from vision.types import ElementKind

ROOT = Path(__file__).resolve().parents[1]
REAL = ROOT.parent / "shared" / "real-ui" / "rico-dev"


def norm(s: str) -> str:
    return "".join(s.lower().split())


def match(preds: list[Rect], truths: list[Rect], thr: float = 0.5) -> int:
    """Greedy one-to-one matches at IoU >= thr."""
    pairs = sorted(((p.iou(t), i, j) for i, p in enumerate(preds) for j, t in enumerate(truths)), reverse=True)
    used_p, used_t, n = set(), set(), 0
    for iou, i, j in pairs:
        if iou < thr:
            break
        if i in used_p or j in used_t:
            continue
        used_p.add(i)
        used_t.add(j)
        n += 1
    return n


def ratio(a: int, b: int) -> str:
    return f"{a}/{b} = {a / b:.3f}" if b else "n/a (0 cases)"


def real_targets(json_path: Path, size: Size, webviews: list[Rect] | None = None) -> list[Rect]:
    """Visible clickable or worded nodes of a Rico screen (and, into ``webviews``, its WebViews)."""
    data = json.loads(json_path.read_text(encoding="utf-8"))
    roots, _ = read_rico_json(data, scale=size.width / 1440)
    screen = Rect(0, 0, size.width, size.height)
    out: list[Rect] = []
    stack = [(r, True) for r in roots]
    while stack:
        n, vis = stack.pop()
        vis = vis and n.visible
        if not vis:
            continue
        stack.extend((c, vis) for c in n.children)
        r = n.rect.intersection(screen)
        if r is not None and webviews is not None and "webview" in n.class_name.lower():
            webviews.append(r)
        if r is None or r.width < 8 or r.height < 8 or r.area > 0.9 * screen.area:
            continue
        if n.clickable or n.text or n.content_desc:
            out.append(r)
    return out


def judged_predictions(parse, webviews: list[Rect]) -> list[Rect]:
    """The predictions precision is measured on (see the protocol above)."""
    bars = (ElementKind.STATUS_BAR, ElementKind.NAVIGATION_BAR)
    return [e.rect for e in parse.uncovered() if e.kind not in bars
            and not any(w.contains(e.rect.center) for w in webviews)]


def real_rows(split: str = "all") -> list[dict[str, str]]:
    """The index rows of the real screens; ``even``/``odd``: the apps at even/odd places in
    the sorted list of package names (a split by app, for developing on one half and
    checking on the other)."""
    rows = list(csv.DictReader((REAL / "index.csv").open()))
    if split == "all":
        return rows
    apps = sorted({r.get("package", "?") for r in rows})
    keep = {a for i, a in enumerate(apps) if i % 2 == (0 if split == "even" else 1)}
    return [r for r in rows if r.get("package", "?") in keep]


def real_screens(rows: list[dict[str, str]]):
    """``(row, image, size, tree json path)`` of each index row whose screenshot and tree exist."""
    from vision.imageio import load_rgb

    for row in rows:
        sid = row.get("rico_id") or next(iter(row.values()))
        img_path, js = REAL / "screenshots" / f"{sid}.jpg", REAL / "view_hierarchies" / f"{sid}.json"
        if not img_path.is_file() or not js.is_file():
            continue
        img = load_rgb(img_path)
        yield row, img, Size(img.shape[1], img.shape[0]), js


def ocr_hits(parse, truth) -> tuple[int, int]:
    """(strings read, strings wanted) under the sim OCR-recall protocol."""
    strings = [(e.rect, e.text) for e in truth.elements
               if e.kind in (ElementKind.TEXT, ElementKind.BUTTON) and e.text.strip()]
    return string_hits(parse, strings), len(strings)


def real_truth(json_path: Path, size: Size) -> tuple[list[Rect], list[Rect], list[tuple[Rect, str]]]:
    """Targets, WebView boxes and worded text nodes ``(box, text)`` of a Rico screen."""
    webviews: list[Rect] = []
    targets = real_targets(json_path, size, webviews)
    data = json.loads(json_path.read_text(encoding="utf-8"))
    roots, _ = read_rico_json(data, scale=size.width / 1440)
    screen = Rect(0, 0, size.width, size.height)
    texts: list[tuple[Rect, str]] = []
    stack = [r for r in roots if r.visible]
    while stack:
        n = stack.pop()
        stack.extend(c for c in n.children if c.visible)
        r = n.rect.intersection(screen)
        if r is not None and r.width >= 8 and r.height >= 8 and n.text.strip() and not n.password:
            texts.append((r, n.text.strip()))
    return targets, webviews, texts


def string_hits(parse, strings: list[tuple[Rect, str]]) -> int:
    """Strings read under the sim OCR-recall protocol (spans with centres in the box grown by 4 px)."""
    hit = 0
    for rect, text in strings:
        box = Rect(rect.left - 4, rect.top - 4, rect.right + 4, rect.bottom + 4)
        inside = sorted((s for s in parse.text_spans if box.contains(s.rect.center)), key=lambda s: (s.rect.top, s.rect.left))
        read = " ".join(s.text for s in inside)
        hit += bool(read) and fuzz.ratio(norm(read), norm(text)) >= 90
    return hit


def pressed(image: np.ndarray, targets: list[Rect]) -> tuple[np.ndarray, Rect | None]:
    """The frame just after a tap: the middle mid-sized target drawn in its pressed state
    (a 12 % dark overlay, as a Material ripple leaves it)."""
    h, w = image.shape[:2]
    fits = sorted((t for t in targets if 0.005 * w * h <= t.area <= 0.15 * w * h), key=lambda t: (t.top, t.left))
    if not fits:
        return image.copy(), None
    r = fits[len(fits) // 2]
    out = image.copy()
    region = out[r.top : r.bottom, r.left : r.right].astype(np.float32)
    out[r.top : r.bottom, r.left : r.right] = (region * 0.88).astype(np.uint8)
    return out, r


def stats(values: list[float]) -> dict:
    if not values:
        return {"n": 0}
    ordered = sorted(values)
    p90 = ordered[min(len(ordered) - 1, int(round(0.9 * (len(ordered) - 1))))]
    return {"n": len(values), "median_s": round(statistics.median(values), 3), "p90_s": round(p90, 3),
            "max_s": round(ordered[-1], 3)}


class Tally:
    """Recall and precision counters for one way of parsing the real screens."""

    def __init__(self) -> None:
        self.targets = self.hit = self.strict = self.judged = self.good = self.strings = self.read = 0
        self.missed_by_kind: dict[str, int] = defaultdict(int)  # judged predictions on no target, by kind

    def add(self, parse, targets: list[Rect], webviews: list[Rect], strings: list[tuple[Rect, str]]) -> None:
        preds = [e.rect for e in parse.uncovered()]
        shown = judged_predictions(parse, webviews)
        self.targets += len(targets)
        self.hit += sum(any(t.contains(p.center) and p.contains(t.center) for p in preds) for t in targets)
        self.strict += match(preds, targets)
        self.judged += len(shown)
        self.good += sum(any(t.contains(p.center) for t in targets) for p in shown)
        bars = (ElementKind.STATUS_BAR, ElementKind.NAVIGATION_BAR)
        for e in parse.uncovered():
            if e.kind not in bars and not any(w.contains(e.rect.center) for w in webviews) \
                    and not any(t.contains(e.rect.center) for t in targets):
                self.missed_by_kind[e.kind.value] += 1
        self.strings += len(strings)
        self.read += string_hits(parse, strings)

    def row(self) -> dict:
        return {"recall_centre_hit": ratio(self.hit, self.targets), "recall_iou50": ratio(self.strict, self.targets),
                "precision_centre_in_target": ratio(self.good, self.judged),
                "ocr_string_recall": ratio(self.read, self.strings),
                "off_target_by_kind": dict(sorted(self.missed_by_kind.items(), key=lambda kv: -kv[1]))}
