"""Fit the phantom rules' thresholds on one half of the real development screens and judge
them on the other half, then the reverse (``../shared/real-ui/rico-dev``, Rico, CC BY 4.0).

    PYTHONPATH=. .venv/bin/python bench/fit_phantoms.py            # both directions, a table each

Each screen is parsed once from pixels; the elements the phantom rules judge are kept
(``vision.parse_modes.drop_phantoms``' input), and for every setting of the grid the rules
run again on them, followed by the list rows and tiles the parse adds after them.  The
measures are those of ``bench/bench_vision.py --only real``: precision (the share of shown
predictions whose centre lies in a view of the tree), tap recall (targets with a
prediction holding each other's centre) and element recall (IoU >= 0.5).  A setting is
fitted on one half by the sum of precision and tap recall (a rule that drops real
elements loses what it gains); the halves are the apps at even / odd places of the sorted
package names (``--real-split`` of bench_vision).  Prints; writes nothing.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import vision.phantoms as ph  # noqa: E402
from bench.vision_scoring import REAL, judged_predictions, match, real_rows, real_screens, real_targets  # noqa: E402
from vision import parse_modes  # noqa: E402
from vision.config import PipelineConfig  # noqa: E402
from vision.geometry import Rect  # noqa: E402
from vision.pipeline import ScreenParser  # noqa: E402
from vision.rows import find_rows  # noqa: E402
from vision.tiles import find_tiles  # noqa: E402
from vision.types import Screen, ScreenParse  # noqa: E402

GRID = {
    "BLANK_CONTRAST": (6, 9, 12, 16, 22),
    "HOST_AREA": (2, 3, 5, 8),
    "MIN_CUT_LINES": (2, 3, 4),
}


def screens(split: str) -> list[dict]:
    """Per screen: the image, the judged elements before the phantom rules, the rest, the tree's targets."""
    parser = ScreenParser(PipelineConfig(mode="vision", remember_previous=False))
    seen: dict = {}
    real = parse_modes.drop_phantoms

    def spy(job, pixels):
        seen["pixels"] = list(pixels)
        return real(job, pixels)

    parse_modes.drop_phantoms = spy
    out = []
    try:
        for _row, img, size, js in real_screens(real_rows(split)):
            webviews: list[Rect] = []
            targets = real_targets(js, size, webviews)
            parser.parse(Screen(img))
            out.append({"image": img, "pixels": seen["pixels"], "targets": targets, "webviews": webviews, "size": size})
    finally:
        parse_modes.drop_phantoms = real
    return out


def measure(data: list[dict], setting: dict[str, int]) -> tuple[float, float, float]:
    """(precision, tap recall, element recall) with the rules' constants set to ``setting``."""
    old = {k: getattr(ph, k) for k in setting}
    for k, v in setting.items():
        setattr(ph, k, v)
    good = judged = hit = strict = total = 0
    try:
        for s in data:
            kept, _ = ph.split_phantoms(s["image"], s["pixels"])
            kept = kept + find_rows(s["image"], kept)
            kept = kept + find_tiles(s["image"], kept)
            parse = ScreenParse(s["size"], elements=tuple(kept))
            shown = judged_predictions(parse, s["webviews"])
            judged += len(shown)
            good += sum(any(t.contains(p.center) for t in s["targets"]) for p in shown)
            preds = [e.rect for e in parse.uncovered()]
            strict += match(preds, s["targets"])
            total += len(s["targets"])
            hit += sum(any(t.contains(p.center) and p.contains(t.center) for p in preds) for t in s["targets"])
    finally:
        for k, v in old.items():
            setattr(ph, k, v)
    return good / max(1, judged), hit / max(1, total), strict / max(1, total)


def fit(data: list[dict]) -> dict[str, int]:
    keys = list(GRID)
    best, best_score = None, -1.0
    for values in itertools.product(*(GRID[k] for k in keys)):
        setting = dict(zip(keys, values, strict=True))
        p, r, _ = measure(data, setting)
        if p + r > best_score + 1e-9:
            best, best_score = setting, p + r
    assert best is not None
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.parse_args()
    if not REAL.is_dir():
        print(f"skipped: {REAL} not found (the real-screen check runs beside the project only)")
        return
    halves = {"even": screens("even"), "odd": screens("odd")}
    shipped = {k: getattr(ph, k) for k in GRID}
    print(f"shipped: {shipped}")
    for fit_on, judge_on in (("even", "odd"), ("odd", "even")):
        setting = fit(halves[fit_on])
        print(f"\nfitted on {fit_on} ({len(halves[fit_on])} screens): {setting}")
        for name, s in (("fitted", setting), ("shipped", shipped), ("no phantom rule", None)):
            for half in (fit_on, judge_on):
                if s is None:
                    p, r, e = measure(halves[half], {"BLANK_CONTRAST": -1, "HOST_AREA": 10**9, "MIN_CUT_LINES": 10**6})
                else:
                    p, r, e = measure(halves[half], s)
                role = "tuned on" if half == fit_on else "held out"
                print(f"  {name:16} {half:4} ({role:8}): precision {p:.3f}  tap recall {r:.3f}  element recall {e:.3f}")


if __name__ == "__main__":
    main()
