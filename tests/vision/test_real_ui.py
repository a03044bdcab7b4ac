"""Checks against real Rico screens in ../shared/real-ui (never copied into the repo)."""

import csv
import json

import pytest

from tests.vision.conftest import REAL_UI
from vision.geometry import Size
from vision.hierarchy import parse_rico
from vision.imageio import load_rgb

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
