"""Vision benchmark: accuracy on unseen virtual-phone screens and real Rico screens, and speed.

    .venv/bin/python bench/bench_vision.py                 # everything
    .venv/bin/python bench/bench_vision.py --only sim      # sim accuracy (detection, OCR, icons)
    .venv/bin/python bench/bench_vision.py --only real     # ../shared/real-ui element recall
    .venv/bin/python bench/bench_vision.py --only speed    # warm timings at 1080x2400
    .venv/bin/python bench/bench_vision.py --only realspeed  # ../shared/real-ui: fused and pixel-only, first frame and after a tap
    .venv/bin/python bench/bench_vision.py --only trees    # generated trees of 2k / 20k / 50k nodes

Protocols
---------
Sim (virtual phone, ``phone.virtual``): seeds 1000.. (training used 0..N-1), every profile
including ``tablet`` (1600x2560, never used in training), both themes and languages.
Frames come from the same seeded random explorer as the training data.
* Detection: predicted elements of the 12 VisionTasker classes vs ground-truth elements
  of those classes; greedy one-to-one matching per class at IoU >= 0.5; P and R per class.
* OCR string recall: ground-truth TEXT/BUTTON strings; one counts as read when the OCR
  spans whose centres fall in its box (grown by 4 px) join to a string with rapidfuzz
  ratio >= 90 (case- and space-insensitive), so wrapped paragraphs count.
* Icon top-1: ground-truth icon-only elements (no text: launcher tiles with captions are
  excluded, as are the sim's letter avatars tagged ``account-circle``) whose glyph is in
  the vocabulary; the element box is cropped and classified; correct when the top label
  equals the glyph's function.
* Active tab: frames whose ground truth marks an active tab; correct when a predicted
  tab bar's active element has its centre inside the true active tab.

Real (``../shared/real-ui/rico-dev``, Rico, CC BY 4.0; never copied into the repo):
targets are view-hierarchy nodes with ``visible-to-user`` true, a box inside the
screenshot of at least 8x8 px after scaling (``image_width / 1440``), that are clickable
or carry text/content-desc; boxes covering > 90 % of the screen are skipped.  A target is
recalled at IoU >= 0.5 by any predicted element (strict), and "hit" when some predicted
element's centre lies inside the target and the target's centre inside that element
(a tap on the prediction would land on the target).  Vision-only parse (no tree).
``--real-split even|odd`` keeps the apps at even/odd places in the sorted list of package
names: develop on one half, check on the other.
Precision: of the predicted elements a person is shown (not covered by a dialog; system
bars left out, the Rico tree has none), the share whose centre lies inside some target
(on something a person could tap or read); predictions whose centre lies on a WebView
node are not judged (Rico's tree has no WebView content).

Real-screen speed (``realspeed``): every ``../shared/real-ui`` screen parsed warm, fused with
its real Rico tree (``mode=auto``) and pixel-only (``mode=vision``): the first frame, then the
frame just after a tap (the middle mid-sized target darkened by 12 %, as a pressed row looks)
parsed with the first as ``previous`` (the incremental path).  Median, p90 and max per way,
with the load average seen during the run; and on the first frames, the recall of the
targets above, precision (with the judged predictions on no target counted by element kind),
and OCR string recall of the tree's visible texts (protocol of the sim OCR recall: spans
whose centres fall in the text's box grown by 4 px).

Large trees (``trees``): generated dumps (tests/vision/large_trees.py) of 2k, 20k and 50k
nodes, tree only and fused with a blank-but-textured screen (OCR off), wall and CPU time.

Speed: warm (models loaded) medians over 1080x2400 virtual-phone screens (one per app,
both themes, with their uiautomator dumps) for each configuration in ``SPEED_CONFIGS``:
pixels only at two OCR detection sizes, fusion with OCR everywhere or only where the tree
has no words, and the tree alone; each with the OCR string recall it keeps on the same
screens (protocol as above).  Wall time depends on what else runs on the machine, so the
1-minute load average and the process CPU time are printed too (with ``--threads 1`` the
CPU time is what one uncontended core would take).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))


from bench.vision_scoring import (  # noqa: E402
    REAL,
    Tally,
    judged_predictions,
    match,
    ocr_hits,
    pressed,
    ratio,
    real_rows,
    real_screens,
    real_targets,
    real_truth,
    stats,
)
from vision.config import PipelineConfig  # noqa: E402
from vision.describe import estimate_tokens  # noqa: E402
from vision.geometry import Rect, Size  # noqa: E402
from vision.icon_vocab import ICON_FUNCTIONS  # noqa: E402
from vision.imageio import load_rgb  # noqa: E402
from vision.pipeline import ScreenParser  # noqa: E402
from vision.types import DETECTOR_CLASSES, ElementKind, Screen  # noqa: E402

GLYPH_TO_FUNCTION = {g: f for f, gs in ICON_FUNCTIONS for g in gs}
NOT_DRAWN_AS_GLYPH = {"account-circle"}  # the sim draws avatars as a letter in a disc, tagged with this icon


def sim_frames(n_seeds: int, steps: int):
    from train_detector import explore

    for k in range(n_seeds):
        seed = 1000 + k
        profile = ("phone", "small", "tablet")[k % 3]
        theme = ("light", "dark")[k % 2]
        lang = ("en", "de")[(k // 2) % 2]
        for img, truth in explore(profile, theme, lang, seed, steps):
            yield img, truth, f"{profile}/{theme}/{lang}/{seed}"


class _OnceOcr:
    """Reads each frame once even when several parsers look at it (bench speed-up only)."""

    def __init__(self, inner) -> None:
        self.inner, self._key, self._spans = inner, None, []

    def read(self, image):
        key = (image.shape, hash(image[::7, ::7].tobytes()))
        if key != self._key:
            self._key, self._spans = key, self.inner.read(image)
        return list(self._spans)


def _vision_parsers(args) -> dict[str, ScreenParser]:
    """Pixel-only parsers sharing one OCR pass per frame: the configured one ("default") and,
    unless it is the CV detector already or ``--no-cv``, the CV detector for comparison."""
    base = ScreenParser(PipelineConfig(mode="vision", remember_previous=False))
    ocr = _OnceOcr(base.ocr_backend())
    parsers = {"default": ScreenParser(PipelineConfig(mode="vision", remember_previous=False, **args.set), ocr=ocr)}
    parsers["default"].detector()
    if parsers["default"].detector_name != "cv" and not args.no_cv:
        parsers["cv"] = ScreenParser(PipelineConfig(mode="vision", detector="cv", remember_previous=False), ocr=ocr,
                                     icons=parsers["default"].icon_classifier())
    return parsers


def bench_sim(args) -> dict:
    parsers = _vision_parsers(args)
    counts = {name: defaultdict(lambda: [0, 0, 0]) for name in parsers}  # tp, n_pred, n_true
    ocr_hit = ocr_total = 0
    icon_hit = icon_total = 0
    tab_hit = tab_total = 0
    tokens = []
    frames = 0
    icons = parsers["default"].icon_classifier()
    for img, truth, _tag in sim_frames(args.sim_seeds, args.steps):
        frames += 1
        parse = None
        for name, parser in parsers.items():
            p = parser.parse(Screen(img))
            if name == "default":
                parse = p
            for cls in DETECTOR_CLASSES:
                preds = [e.rect for e in p.elements if e.kind is cls]
                gts = [e.rect for e in truth.elements if e.kind is cls]
                c = counts[name][cls]
                c[0] += match(preds, gts)
                c[1] += len(preds)
                c[2] += len(gts)
        assert parse is not None
        tokens.append(estimate_tokens(parse.description))
        truth_tab = next((b for b in truth.blocks if b.active_child), None)
        if truth_tab is not None:
            want = next(e for e in truth.elements if e.id == truth_tab.active_child)
            tab_total += 1
            got = [parse.element(b.active_child) for b in parse.blocks if b.role == "tab_bar" and b.active_child]
            tab_hit += any(g is not None and want.rect.contains(g.rect.center) for g in got)
        read, wanted = ocr_hits(parse, truth)
        ocr_hit += read
        ocr_total += wanted
        if icons is not None:
            wanted = [e for e in truth.elements if e.icon in GLYPH_TO_FUNCTION and e.rect.width >= 8 and e.rect.height >= 8
                      and e.kind in (ElementKind.BUTTON, ElementKind.IMAGE) and e.rect.width <= 0.25 * truth.size.width
                      and not e.text and e.icon not in NOT_DRAWN_AS_GLYPH]
            if wanted:
                crops = [np.ascontiguousarray(img[e.rect.top : e.rect.bottom, e.rect.left : e.rect.right]) for e in wanted]
                for e, g in zip(wanted, icons.classify(crops), strict=True):
                    icon_total += 1
                    icon_hit += g.label == GLYPH_TO_FUNCTION[e.icon]
    out: dict = {"frames": frames, "ocr_string_recall": ratio(ocr_hit, ocr_total), "icon_top1": ratio(icon_hit, icon_total),
                 "active_tab": ratio(tab_hit, tab_total),
                 "description_tokens_mean": round(statistics.mean(tokens), 1) if tokens else None, "detection": {}}
    for name, table in counts.items():
        rows = {}
        tp_all = np_all = nt_all = 0
        for cls in DETECTOR_CLASSES:
            tp, npred, ntrue = table[cls]
            tp_all, np_all, nt_all = tp_all + tp, np_all + npred, nt_all + ntrue
            rows[cls.value] = {"P": ratio(tp, npred), "R": ratio(tp, ntrue), "n_true": ntrue, "n_pred": npred}
        rows["ALL"] = {"P": ratio(tp_all, np_all), "R": ratio(tp_all, nt_all), "n_true": nt_all, "n_pred": np_all}
        out["detection"][f"{name} ({parsers[name].detector_name})"] = rows
    return out


def bench_real(args) -> dict:
    if not REAL.is_dir():
        return {"skipped": f"{REAL} not found (the real-screen check runs beside the project only)"}
    parsers = _vision_parsers(args)
    rows = real_rows(args.real_split)[: args.real_limit or None]
    strict = dict.fromkeys(parsers, 0)
    hit = dict.fromkeys(parsers, 0)
    good = dict.fromkeys(parsers, 0)
    judged = dict.fromkeys(parsers, 0)
    seconds: dict[str, list[float]] = {name: [] for name in parsers}
    total = 0
    per_app: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for row in rows:
        sid = row.get("rico_id") or next(iter(row.values()))
        img_path = REAL / "screenshots" / f"{sid}.jpg"
        js = REAL / "view_hierarchies" / f"{sid}.json"
        if not img_path.is_file() or not js.is_file():
            continue
        img = load_rgb(img_path)
        size = Size(img.shape[1], img.shape[0])
        webviews: list[Rect] = []
        targets = real_targets(js, size, webviews)
        total += len(targets)
        for name, parser in parsers.items():
            t0 = time.perf_counter()
            parsed = parser.parse(Screen(img))
            seconds[name].append(time.perf_counter() - t0)
            shown = judged_predictions(parsed, webviews)
            judged[name] += len(shown)
            good[name] += sum(any(t.contains(pr.center) for t in targets) for pr in shown)
            preds = [e.rect for e in parsed.uncovered()]
            strict[name] += match(preds, targets)
            for t in targets:
                ok = any(t.contains(pr.center) and pr.contains(t.center) for pr in preds)
                hit[name] += ok
                if name == "default":
                    per_app[row.get("package", "?")][0] += ok
                    per_app[row.get("package", "?")][1] += 1
    out: dict = {"split": args.real_split, "apps": len({r.get("package", "?") for r in rows}), "screens": len(rows),
                 "targets": total}
    for name, parser in parsers.items():
        out[f"{name} ({parser.detector_name})"] = {"recall_iou50": ratio(strict[name], total),
                                                   "recall_centre_hit": ratio(hit[name], total),
                                                   "precision_centre_in_target": ratio(good[name], judged[name]),
                                                   "parse_s_median": round(statistics.median(seconds[name]), 3) if seconds[name] else None}
    out["per_app_centre_hit_default"] = {k: ratio(*v) for k, v in sorted(per_app.items())}
    return out


SPEED_CONFIGS: dict[str, dict] = {
    "vision, OCR det 960 (default)": {"mode": "vision"},
    "vision, OCR det 640": {"mode": "vision", "ocr_det_max_side": 640},
    "fusion, OCR everywhere": {"mode": "fusion", "ocr_tree_gaps": False},
    "fusion, OCR only where the tree has no words (default)": {"mode": "fusion"},
    "fusion, tree gaps + det 640": {"mode": "fusion", "ocr_det_max_side": 640},
    "tree only": {"mode": "tree"},
}
SPEED_APPS = ("Settings", "Shop", "Calendar", "Contacts", "Clock", "Notes", "Messages")


def speed_frames(n: int):
    """1080x2400 virtual-phone screens with their dumps and ground truth (both themes)."""
    from phone.virtual.phone import VirtualPhone

    for k in range(n):
        phone = VirtualPhone(profile="phone", theme=("light", "dark")[k % 2], seed=4242 + k)
        phone.open_app(SPEED_APPS[k % len(SPEED_APPS)])
        yield phone.screenshot(with_hierarchy=True), phone.ground_truth()


def bench_speed(args) -> dict:
    """Median wall and CPU time per parse of 1080x2400 screens for each configuration, and the
    OCR string recall it keeps on the same screens.  With ``--threads 1`` the CPU time is what
    one uncontended core takes (the machine is shared; wall time is noisy)."""
    import os

    frames = list(speed_frames(args.speed_frames))
    out: dict = {"image": "1080x2400", "frames": len(frames), "cpu_cores": os.cpu_count(),
                 "ocr_threads": args.threads or "all", "configs": {}}
    base_ocr = None
    for name, cfg in SPEED_CONFIGS.items():
        parser = ScreenParser(PipelineConfig(remember_previous=False, ocr_threads=args.threads, **cfg))
        parser.parse(frames[0][0])  # warm up: load every model once
        wall, cpu, stages = [], [], defaultdict(list)
        hit = total = 0
        for screen, truth in frames:
            for _ in range(args.repeat):
                t0, c0 = time.perf_counter(), time.process_time()
                parse = parser.parse(screen)
                wall.append(time.perf_counter() - t0)
                cpu.append(time.process_time() - c0)
                for t in parse.timings:
                    stages[t.stage].append(t.ms)
            h, n = ocr_hits(parse, truth)
            hit, total = hit + h, total + n
        row = {"wall_s_median": round(statistics.median(wall), 3), "cpu_s_median": round(statistics.median(cpu), 3),
               "ocr_string_recall": ratio(hit, total) if cfg["mode"] != "tree" else "n/a (no OCR)",
               "stage_ms_median": {k: round(statistics.median(v), 1) for k, v in stages.items()},
               "load_average_1min": round(os.getloadavg()[0], 2)}
        if base_ocr is None:
            base_ocr = statistics.median(cpu)
        row["cpu_ratio_to_first"] = round(statistics.median(cpu) / base_ocr, 2) if base_ocr else None
        out["configs"][name] = row
        print(name, json.dumps(row), flush=True)
    out["incremental_after_a_one_row_change"] = _incremental(args, frames[0])
    return out


def _incremental(args, frame) -> dict:
    """Re-parse after a change confined to one list row (OCR re-reads only that region)."""
    import cv2

    screen, truth = frame
    parser = ScreenParser(PipelineConfig(mode="vision", ocr_threads=args.threads, remember_previous=False))
    a = Screen(screen.image)
    pa = parser.parse(a)
    b_img = screen.image.copy()
    row = next((e for e in truth.elements if e.kind is ElementKind.TEXT and e.rect.top > 600 and e.text), None)
    r = row.rect if row else Rect(60, 900, 600, 960)
    b_img[r.top : r.bottom, r.left : r.right] = b_img[r.top, r.left]
    cv2.putText(b_img, "Changed", (r.left, r.bottom - 8), cv2.FONT_HERSHEY_SIMPLEX, r.height / 40, (30, 30, 30), 2)
    wall, cpu = [], []
    for _ in range(max(3, args.repeat)):
        t0, c0 = time.perf_counter(), time.process_time()
        parser.parse(Screen(b_img), previous=(a, pa))
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return {"wall_s_median": round(statistics.median(wall), 3), "cpu_s_median": round(statistics.median(cpu), 3)}


# --------------------------------------------------------------------------- real-screen speed


def bench_real_speed(args) -> dict:
    """Warm parse times on the real Rico screens: fused with the real tree and pixel-only, the
    first frame and the frame after a tap (the incremental path), with the recall each keeps."""
    import os

    if not REAL.is_dir():
        return {"skipped": f"{REAL} not found (the real-screen check runs beside the project only)"}
    rows = real_rows(args.real_split)[: args.real_limit or None]
    parsers = {"fused": ScreenParser(PipelineConfig(mode="auto", remember_previous=False, **args.set)),
               "pixels": ScreenParser(PipelineConfig(mode="vision", remember_previous=False, **args.set))}
    loads = [os.getloadavg()[0]]
    times: dict[str, list[float]] = defaultdict(list)
    cpu: dict[str, list[float]] = defaultdict(list)
    stages: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    tallies = {name: Tally() for name in parsers}
    warmed = False
    for _row, img, size, js in real_screens(rows):
        tree_text = js.read_text(encoding="utf-8")
        targets, webviews, strings = real_truth(js, size)
        after, _ = pressed(img, targets)
        for name, parser in parsers.items():
            tree = tree_text if name == "fused" else None
            first = Screen(img, hierarchy_xml=tree)
            if not warmed:
                parser.parse(first)  # load every model once
            t0, c0 = time.perf_counter(), time.process_time()
            parse = parser.parse(first)
            times[f"{name} first frame"].append(time.perf_counter() - t0)
            cpu[f"{name} first frame"].append(time.process_time() - c0)
            for t in parse.timings:
                stages[name][t.stage].append(t.ms)
            tallies[name].add(parse, targets, webviews, strings)
            t0, c0 = time.perf_counter(), time.process_time()
            again = parser.parse(Screen(after, hierarchy_xml=tree), previous=(first, parse))
            times[f"{name} after a tap"].append(time.perf_counter() - t0)
            cpu[f"{name} after a tap"].append(time.process_time() - c0)
            for t in again.timings:
                stages[f"{name} after a tap"][t.stage].append(t.ms)
        warmed = True
        loads.append(os.getloadavg()[0])
    out: dict = {"split": args.real_split, "screens": len(times.get("fused first frame", [])),
                 "cpu_cores": os.cpu_count(), "load_average_1min": {"min": min(loads), "max": max(loads)},
                 "wall": {k: stats(v) for k, v in times.items()},
                 "cpu (all threads)": {k: stats(v) for k, v in cpu.items()},
                 "quality (first frame)": {name: t.row() for name, t in tallies.items()},
                 "stage_ms_median": {name: {k: round(statistics.median(v), 1) for k, v in st.items()} for name, st in stages.items()}}
    return out


def bench_trees(args) -> dict:
    """Parse time of generated uiautomator dumps with 2k / 20k / 50k nodes (a long list of
    rows; tests/vision/large_trees.py), tree only and fused with the pixels (OCR off: the
    generated screen has no words drawn, so this times the tree and fusion work)."""
    import os

    from tests.vision.large_trees import grid_dump

    image = np.full((2400, 1080, 3), 245, np.uint8)
    image[::7, :, :] = 40
    out: dict = {"cpu_cores": os.cpu_count(), "screen": "1080x2400", "repeat": args.repeat, "nodes": {}}
    for n in (2_000, 20_000, 50_000):
        xml, _ = grid_dump(n)
        row: dict = {}
        for mode in ("tree", "fusion"):
            parser = ScreenParser(PipelineConfig(mode=mode, ocr="none", remember_previous=False))
            wall, cpu = [], []
            for _ in range(max(1, args.repeat)):
                t0, c0 = time.perf_counter(), time.process_time()
                parse = parser.parse(Screen(image, hierarchy_xml=xml))
                wall.append(time.perf_counter() - t0)
                cpu.append(time.process_time() - c0)
            row[mode] = {"wall_s_median": round(statistics.median(wall), 3), "cpu_s_median": round(statistics.median(cpu), 3),
                         "elements": len(parse.elements), "load_average_1min": round(os.getloadavg()[0], 2),
                         "stage_ms": {t.stage: round(t.ms) for t in parse.timings}}
        out["nodes"][n] = row
        print(n, json.dumps(row), flush=True)
    return out


PARTS = {"sim": bench_sim, "real": bench_real, "speed": bench_speed, "realspeed": bench_real_speed, "trees": bench_trees}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", choices=["sim", "real", "speed", "realspeed", "trees"], action="append")
    ap.add_argument("--sim-seeds", type=int, default=12)
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--real-limit", type=int, default=0)
    ap.add_argument("--real-split", choices=["all", "even", "odd"], default="all",
                    help="real screens of the apps at even/odd places in the sorted package list (a split by app)")
    ap.add_argument("--repeat", type=int, default=3, help="parses per screen in the speed test")
    ap.add_argument("--speed-frames", type=int, default=7, help="screens in the speed test (one app each, both themes)")
    ap.add_argument("--threads", type=int, default=0, help="onnxruntime threads for OCR in the speed test (0 = all)")
    ap.add_argument("--no-cv", action="store_true", help="skip the CV-detector comparison on sim screens")
    ap.add_argument("--json", type=Path, help="also write the results here")
    ap.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                    help="PipelineConfig field for the default parser in sim/real, e.g. --set evidence=false")
    args = ap.parse_args()
    args.set = {k: (v.lower() == "true" if v.lower() in ("true", "false") else int(v) if v.isdigit() else v)
                for k, v in (item.split("=", 1) for item in args.set)}
    parts = args.only or list(PARTS)
    results = {}
    for part in parts:
        t0 = time.time()
        results[part] = PARTS[part](args)
        results[part]["bench_seconds"] = round(time.time() - t0, 1)
        print(f"== {part} ==")
        print(json.dumps(results[part], indent=1, ensure_ascii=False))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
