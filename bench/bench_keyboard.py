"""The soft-keyboard finder (``vision.keyboard``): does the parse make one block of the
keyboard, and only of a keyboard?

    .venv/bin/python bench/bench_keyboard.py                 # virtual phone + real screens
    .venv/bin/python bench/bench_keyboard.py --no-real       # the virtual phone only

Tuning material (the rule was written looking at it): the virtual phone's keyboard under
each app's first text field, and each app's first screen without it, on the 1080x2400
phone in English and light theme, then in German and dark theme (the first version missed
those keys: the detector finds fewer boxes on the dark keyboard, so single characters read
by OCR were added as keys).  Held out (never looked at while writing the rule): the small
720x1600 phone in German, the 1600x2560 tablet in dark theme, and the real screens in
``../shared/real-ui`` (Rico with its tree, ScreenSpot from pixels only), labelled by eye:
the screen listed in ``REAL_KEYBOARDS`` shows a soft QWERTY keyboard, the one in
``REAL_NUMERIC`` a soft number pad (counted apart: the rule asks for rows of six keys),
and every other screen none (a calculator's keypad included).
Prints, per set, keyboards found on keyboard screens and on the others.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from phone.virtual.phone import VirtualPhone
from vision.config import PipelineConfig
from vision.hierarchy import parse_hierarchy
from vision.imageio import load_rgb
from vision.keyboard import keyboard_rect
from vision.pipeline import ScreenParser
from vision.types import ElementKind, Screen

REAL = Path(__file__).resolve().parents[1].parent / "shared" / "real-ui"
#: Real screens that show a soft QWERTY keyboard (by eye).
REAL_KEYBOARDS = {"2b80c9bf-0040-492e-8dca-d81cc9042b5a"}
#: Real screens that show a soft numeric pad (three keys a row).
REAL_NUMERIC = {"97752e81-d94b-49a1-8cb2-709395d63372"}
APPS = ("Settings", "Contacts", "Messages", "Notes", "Shop", "Files", "Clock", "Calendar")


def virtual(theme: str, lang: str, profile: str = "phone") -> Iterator[tuple[str, bool, Screen]]:
    """Each app's first screen (no keyboard), then with its first text field tapped (a keyboard)."""
    for app in APPS:
        phone = VirtualPhone(profile=profile, theme=theme, lang=lang)
        phone.open_app(app)
        shot = phone.screenshot(with_hierarchy=True)
        yield f"{app}", False, shot
        fields = [e for e in parse_hierarchy(shot.hierarchy_xml or "", shot.size).elements
                  if e.kind is ElementKind.EDIT_TEXT]
        if not fields:
            continue
        c = fields[0].rect.center
        phone.tap(c.x, c.y)
        yield f"{app} + keyboard", True, phone.screenshot(with_hierarchy=True)


def _rico_tree(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def real() -> Iterator[tuple[str, bool | None, Screen]]:
    """Rico (with its tree) and ScreenSpot (pixels only); None: a numeric pad."""
    rico = REAL / "rico-dev"
    for shot in sorted((rico / "screenshots").glob("*.jpg")):
        tree = rico / "view_hierarchies" / f"{shot.stem}.json"
        xml = _rico_tree(tree) if tree.exists() else None
        yield f"rico {shot.stem}", shot.stem in REAL_KEYBOARDS, Screen(load_rgb(shot), hierarchy_xml=xml)
    for shot in sorted((REAL / "screenspot-dev" / "images").glob("*.png")):
        label: bool | None = None if shot.stem in REAL_NUMERIC else shot.stem in REAL_KEYBOARDS
        yield f"screenspot {shot.stem[:8]}", label, Screen(load_rgb(shot))


def tally(name: str, screens: Iterator[tuple[str, bool | None, Screen]], parser: ScreenParser,
          verbose: bool) -> dict[str, object]:
    hits = misses = false_alarms = negatives = 0
    numeric: list[str] = []
    for label, has, screen in screens:
        found = keyboard_rect(parser.parse(screen)) is not None
        if has is None:
            numeric.append(f"{label}: {'found' if found else 'not found'}")
        elif has:
            hits += found
            misses += not found
        else:
            negatives += 1
            false_alarms += found
        if verbose or (has is not None and found != has):
            print(f"  {name:<28} {label:<44} keyboard={'yes' if found else 'no':<3} expected={has}")
    return {"set": name, "keyboards found": f"{hits}/{hits + misses}",
            "found on other screens": f"{false_alarms}/{negatives}", "numeric pads": "; ".join(numeric)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--no-real", action="store_true", help="leave out ../shared/real-ui")
    ap.add_argument("-v", "--verbose", action="store_true", help="every screen, not only the wrong ones")
    args = ap.parse_args()
    parser = ScreenParser(PipelineConfig())
    rows = [tally("virtual, en, light (tuned)", virtual("light", "en"), parser, args.verbose),
            tally("virtual, de, dark (tuned)", virtual("dark", "de"), parser, args.verbose),
            tally("virtual small, de, light (held out)", virtual("light", "de", "small"), parser, args.verbose),
            tally("virtual tablet, en, dark (held out)", virtual("dark", "en", "tablet"), parser, args.verbose)]
    if not args.no_real:
        if REAL.is_dir():
            rows.append(tally("real screens (held out)", real(), parser, args.verbose))
        else:
            print(f"no real screens at {REAL}: left out")
    print(json.dumps(rows, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
