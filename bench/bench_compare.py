"""Tree versus pixels (``vision.compare``): what the Parse tab's comparison finds, and what
it costs, on virtual-phone screens where the two readings agree and where they plainly
differ.

    .venv/bin/python bench/bench_compare.py            # 3 repeats per screen
    .venv/bin/python bench/bench_compare.py --repeats 5

For each screen: the fused parse alone (what a run sees) and the same parse with the
comparison (what the Parse tab shows while open), both warm, each parser fresh per
screen so no incremental OCR helps either; median wall time of the repeats, and the
disagreements by kind.  Prints a table; timings depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from phone.virtual.noise import NoiseConfig
from phone.virtual.phone import VirtualPhone
from vision.compare import ComparingParser
from vision.config import PipelineConfig
from vision.hierarchy import parse_hierarchy
from vision.pipeline import ScreenParser
from vision.types import Screen


def _tap_text(phone: VirtualPhone, text: str) -> None:
    shot = phone.screenshot(with_hierarchy=True)
    el = next(e for e in parse_hierarchy(shot.hierarchy_xml, shot.size).elements if e.text == text)
    phone.tap(el.rect.center.x, el.rect.center.y)


def _screen(noise: NoiseConfig, app: str, then: Callable[[VirtualPhone], None] | None = None) -> Screen:
    phone = VirtualPhone(noise=noise)
    phone.open_app(app)
    if then is not None:
        then(phone)
    return phone.screenshot(with_hierarchy=True)


SCREENS: list[tuple[str, Callable[[], Screen]]] = [
    ("Settings (agree)", lambda: _screen(NoiseConfig(), "Settings")),
    ("Files (agree)", lambda: _screen(NoiseConfig(), "Files")),
    ("Network & internet (agree)", lambda: _screen(NoiseConfig(), "Settings",
                                                    lambda p: _tap_text(p, "Network & internet"))),
    ("Settings drawn opaque (no children in the dump)", lambda: _screen(NoiseConfig(opaque_packages=("*",)), "Settings")),
    ("stale dump after opening Network & internet", lambda: _screen(NoiseConfig(stale_nodes=1.0), "Settings",
                                                                    lambda p: _tap_text(p, "Network & internet"))),
]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    shared = ScreenParser(PipelineConfig(remember_previous=False))
    shared.warm_up()
    ocr, detector, icons = shared.ocr_backend(), shared.detector(), shared.icon_classifier()
    print(f"{'screen':50} {'fused ms':>9} {'+compare ms':>12} {'count':>6}  kinds")
    for name, make in SCREENS:
        screen = make()
        config = PipelineConfig(mode="fusion", remember_previous=False)
        plain = ScreenParser(config, ocr=ocr, detector=detector, icons=icons)
        comparing = ComparingParser(ScreenParser(config, ocr=ocr, detector=detector, icons=icons), lambda: True)
        fused: list[float] = []
        both: list[float] = []
        kinds: Counter[str] = Counter()
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            plain.parse(screen)
            fused.append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            parse = comparing.parse(screen)
            both.append((time.perf_counter() - t0) * 1000)
            kinds = Counter(d.kind for d in parse.disagreements)
        shown = ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())) or "—"
        print(f"{name:50} {statistics.median(fused):9.0f} {statistics.median(both):12.0f} "
              f"{sum(kinds.values()):6d}  {shown}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
