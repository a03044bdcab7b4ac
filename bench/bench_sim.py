"""Benchmark of the virtual phone: render time per frame at each resolution, and the
time from an input to the updated frame (input + rebuild + render + numpy copy).

Run: .venv/bin/python bench/bench_sim.py [--repeats N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from phone.virtual.phone import VirtualPhone
from phone.virtual.tasks import Step

SCREENS = [
    ("home", None),
    ("settings", "com.android.settings"),
    ("clock", "com.google.android.deskclock"),
    ("contacts", "com.google.android.contacts"),
    ("shop", "com.tapwise.shop"),
    ("calendar", "com.google.android.calendar"),
]


def _ms(samples: list[float]) -> str:
    return f"median {statistics.median(samples):6.1f} ms  p90 {sorted(samples)[int(len(samples) * 0.9) - 1]:6.1f} ms"


def bench_render(profile: str, repeats: int) -> None:
    phone = VirtualPhone(profile=profile)
    cold, warm = [], []
    for _name, pkg in SCREENS:
        phone.reset()
        if pkg:
            phone.open_app(pkg)
        t = time.perf_counter()
        phone.repaint()
        cold.append((time.perf_counter() - t) * 1000)
        for _ in range(repeats):
            t = time.perf_counter()
            phone.repaint()
            warm.append((time.perf_counter() - t) * 1000)
    size = phone.screen_size()
    print(f"render {profile:6s} {size}: first paint of a screen {_ms(cold)}; repaint {_ms(warm)}")


def bench_input(profile: str, repeats: int) -> None:
    phone = VirtualPhone(profile=profile)
    phone.open_app("Settings")
    phone.screenshot()
    toggle = Step("tap", target={"text": "Network & internet"})
    samples, scroll = [], []
    for _ in range(repeats):
        el = toggle.resolve(phone.ground_truth())
        t = time.perf_counter()
        phone.tap(el.rect.center.x, el.rect.center.y)
        phone.screenshot()
        samples.append((time.perf_counter() - t) * 1000)
        phone.key("BACK")
        phone.screenshot()
        w, h = phone.screen_size().width, phone.screen_size().height
        t = time.perf_counter()
        phone.swipe(w // 2, h * 3 // 4, w // 2, h // 2)
        phone.screenshot()
        scroll.append((time.perf_counter() - t) * 1000)
        phone.swipe(w // 2, h // 2, w // 2, h * 3 // 4)
    print(f"input  {profile:6s}: tap -> new screenshot {_ms(samples)}; swipe-scroll -> new screenshot {_ms(scroll)}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeats", type=int, default=10)
    args = ap.parse_args()
    for profile in ("phone", "small", "tablet"):
        bench_render(profile, args.repeats)
    for profile in ("phone", "small", "tablet"):
        bench_input(profile, args.repeats)


if __name__ == "__main__":
    main()
