"""Checks against real Rico screens in ../shared/real-ui (never copied into the repo)."""

import csv
import json

import pytest

from tests.vision.conftest import REAL_UI
from vision.geometry import Rect, Size
from vision.hierarchy import parse_rico
from vision.imageio import load_rgb
from vision.occlusion import mark_covered
from vision.types import Element, ElementKind

pytestmark = pytest.mark.realui
RICO = REAL_UI / "rico-dev"


@pytest.fixture(scope="module")
def first_screen():
    if not (RICO / "index.csv").is_file():
        pytest.skip(f"real screens not found at {RICO} (they live beside the project, not in it)")
    row = next(csv.DictReader((RICO / "index.csv").open()))
    sid = row["rico_id"]
    return load_rgb(RICO / "screenshots" / f"{sid}.jpg"), json.loads((RICO / "view_hierarchies" / f"{sid}.json").read_text())


def test_rico_hierarchy_parses_into_elements_inside_the_screenshot(first_screen):
    image, data = first_screen
    size = Size(image.shape[1], image.shape[0])
    p = parse_rico(data, size)
    assert p.elements
    assert all(0 <= e.rect.left <= e.rect.right <= size.width and 0 <= e.rect.top <= e.rect.bottom <= size.height for e in p.elements)


def test_vision_parse_lands_on_most_text_nodes_of_a_real_screen(shared_parser, first_screen):
    from vision.types import Screen

    image, data = first_screen
    tree = parse_rico(data, Size(image.shape[1], image.shape[0]))
    targets = [e.rect for e in tree.elements if e.text]
    parse = shared_parser.parse(Screen(image))
    hits = sum(any(t.contains(e.rect.center) and e.rect.contains(t.center) for e in parse.elements) for t in targets)
    assert targets and hits >= 0.6 * len(targets)


def _rico_rows():
    index = REAL_UI / "rico-dev" / "index.csv"
    if not index.is_file():
        pytest.skip(f"{REAL_UI} not found (real screens are checked beside the project only)")
    return list(csv.DictReader(index.open()))


def test_rico_dialog_and_menu_windows_cover_the_rest_and_full_windows_do_not():
    """Rico dumps the top window only: a root that does not fill the screen is a dialog or
    popup, and everything else on the screenshot is covered."""
    rows = _rico_rows()
    small = full = 0
    for row in rows:
        left, top, right, bottom = json.loads(row["root_bounds"])
        size = Size(int(row["img_w"]), int(row["img_h"]))
        data = json.loads((REAL_UI / "rico-dev" / "view_hierarchies" / f"{row['rico_id']}.json").read_text())
        tp = parse_rico(data, size)
        if (right - left) * (bottom - top) < 0.7 * 1440 * 2560:
            small += 1
            assert tp.occluder is not None, row["rico_id"]
            image = load_rgb(REAL_UI / "rico-dev" / "screenshots" / f"{row['rico_id']}.jpg")
            outside = Element("x", ElementKind.TEXT, Rect(0, size.height // 2, 8, size.height // 2 + 8), text="behind")
            assert mark_covered([outside], tp.occluder)[0].covered
            assert image.shape[:2] == (size.height, size.width)
        elif tp.occluder is None:
            full += 1
    assert small >= 1 and full >= 0.8 * (len(rows) - small)
