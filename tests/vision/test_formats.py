"""Tree formats beyond ``uiautomator dump``: Appium page source and DroidBot state JSON.

The sample files in ``data/`` were written for these tests from the formats' public
descriptions (Appium UiAutomator2 page source: tags named by class, ``displayed``;
DroidBot ``states/state_*.json``: a flat ``views`` list, ``[[l, t], [r, b]]`` bounds,
``parent``/``children`` indices, ``content_description``, ``visible``).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from vision.config import PipelineConfig
from vision.geometry import Rect, Size
from vision.hierarchy import detect_format, parse_hierarchy
from vision.hierarchy_read import read_uiautomator_xml
from vision.pipeline import ScreenParser
from vision.types import ElementKind, Screen

DATA = Path(__file__).parent / "data"
APPIUM = (DATA / "appium_page_source.xml").read_text(encoding="utf-8")
DROIDBOT = (DATA / "droidbot_state.json").read_text(encoding="utf-8")


def test_formats_are_recognised(tmp_path):
    from tests.vision.conftest import settings_dump

    assert detect_format(APPIUM) == "appium"
    assert detect_format(DROIDBOT) == "droidbot"
    assert detect_format(settings_dump()) == "uiautomator"
    assert detect_format(json.dumps({"activity": {"root": {"bounds": [0, 0, 10, 10]}}})) == "rico"
    assert detect_format("hello") == "unknown"


def test_appium_page_source_reads_every_displayed_element():
    tp = parse_hierarchy(APPIUM, Size(1080, 2400))
    assert not tp.warnings
    by_text = {e.text: e for e in tp.elements if e.text}
    assert {"Display", "Dark theme", "Screen timeout", "After 30 seconds of inactivity"} <= set(by_text)
    assert "Off-screen hint" not in by_text  # displayed="false"
    up = next(e for e in tp.elements if e.label == "Navigate up")
    assert up.kind is ElementKind.BUTTON and up.clickable and up.rect == Rect(0, 105, 126, 231)
    switch = next(e for e in tp.elements if e.kind is ElementKind.SWITCH)
    assert switch.checked is True
    seek = next(e for e in tp.elements if e.kind is ElementKind.SEEK_BAR)
    assert seek.label == "Brightness level"
    row = next(e for e in tp.elements if e.clickable and "Screen timeout" in e.label)
    assert row.rect == Rect(0, 441, 1080, 630)


def test_appium_tags_carry_the_class_when_the_attribute_is_missing():
    xml = ('<hierarchy rotation="0"><android.widget.FrameLayout bounds="[0,0][100,200]">'
           '<android.widget.Button text="Go" clickable="true" bounds="[10,10][90,50]"/>'
           '</android.widget.FrameLayout></hierarchy>')
    roots, warnings = read_uiautomator_xml(xml)
    assert not warnings and roots[0].children[0].class_name == "android.widget.Button"
    tp = parse_hierarchy(xml, Size(100, 200))
    assert [(e.kind, e.text) for e in tp.elements] == [(ElementKind.BUTTON, "Go")]


def test_droidbot_state_is_read_with_its_tree_and_scaled_to_the_screenshot():
    tp = parse_hierarchy(DROIDBOT, Size(540, 960))  # state says 1080x1920: half size
    assert not tp.warnings
    by_name = {e.display_name: e for e in tp.elements}
    assert "Hidden row" not in by_name  # "visible": false
    assert by_name["My notes"].rect == Rect(24, 52, 200, 94)
    search = by_name["Search notes"]
    assert search.kind is ElementKind.BUTTON and search.clickable
    done = by_name["Call the plumber"]
    assert done.kind is ElementKind.CHECK_BOX and done.checked is True
    assert any(e.kind is ElementKind.EDIT_TEXT for e in tp.elements)
    lists = [b for b in tp.blocks if b.role == "list"]
    assert lists and by_name["Shopping list"].id in lists[0].element_ids


def test_droidbot_state_at_device_size_keeps_its_pixels():
    tp = parse_hierarchy(DROIDBOT, Size(1080, 1920))
    assert next(e for e in tp.elements if e.text == "My notes").rect == Rect(48, 105, 400, 189)


@pytest.mark.parametrize("text", ["{not json", '{"views": []}', '{"views": [{"parent": 0, "children": [0]}]}',
                                  '{"views": [{"parent": -1, "children": [1]}, {"parent": 0, "children": [0]}]}'])
def test_broken_droidbot_files_give_warnings_not_errors(text):
    tp = parse_hierarchy(text, Size(100, 100))
    assert tp.elements == () or all(e.rect.area >= 0 for e in tp.elements)


def test_unknown_text_says_which_formats_are_read():
    tp = parse_hierarchy("just some words", Size(100, 100))
    assert tp.elements == () and "Appium" in tp.warnings[0] and "DroidBot" in tp.warnings[0]


@pytest.mark.parametrize("sample,size", [(APPIUM, (1080, 2400)), (DROIDBOT, (540, 960))])
def test_the_pipeline_parses_screens_carrying_either_format(sample, size):
    image = np.full((size[1], size[0], 3), 245, np.uint8)
    parse = ScreenParser(PipelineConfig(mode="tree")).parse(Screen(image, hierarchy_xml=sample))
    assert len(parse.elements) >= 5 and not parse.warnings
    assert parse.description.count("[") >= 5


def test_cli_parse_reads_both_samples(tmp_path):
    typer_testing = pytest.importorskip("typer.testing")
    from PIL import Image

    from app.cli.parse import app

    shot = tmp_path / "shot.png"
    Image.fromarray(np.full((960, 540, 3), 245, np.uint8)).save(shot)
    runner = typer_testing.CliRunner()
    for option, sample in (("--hierarchy", DATA / "droidbot_state.json"), ("--xml", DATA / "appium_page_source.xml")):
        result = runner.invoke(app, [str(shot), option, str(sample), "--mode", "tree", "--describe"])
        assert result.exit_code == 0, result.output
        assert "elements" in result.output and "[1]" in result.output


def test_a_tree_saved_beside_a_screenshot_is_found(tmp_path):
    from PIL import Image

    from vision.imageio import load_screen_files, sibling_tree

    shot = tmp_path / "screen_2026-11-24_070000.png"
    Image.fromarray(np.full((960, 540, 3), 245, np.uint8)).save(shot)
    assert sibling_tree(shot) is None
    (tmp_path / "state_2026-11-24_070000.json").write_text(DROIDBOT, encoding="utf-8")
    rgb, tree = load_screen_files(shot)
    assert rgb.shape == (960, 540, 3) and detect_format(tree or "") == "droidbot"
    (tmp_path / "screen_2026-11-24_070000.xml").write_text(APPIUM, encoding="utf-8")
    assert sibling_tree(shot).suffix == ".xml"  # same name first


def test_a_tree_file_finds_the_screenshot_beside_it(tmp_path) -> None:
    from PIL import Image

    from vision.errors import ImageError
    from vision.imageio import image_beside_tree, load_screen_files

    Image.new("RGB", (20, 40), "white").save(tmp_path / "screen_3.png")
    (tmp_path / "state_3.json").write_text('{"views": []}')
    assert image_beside_tree(tmp_path / "state_3.json") == tmp_path / "screen_3.png"
    rgb, tree = load_screen_files(tmp_path / "screen_3.png")
    assert rgb.shape == (40, 20, 3) and tree == '{"views": []}'
    (tmp_path / "lonely.xml").write_text("<hierarchy/>")
    with pytest.raises(ImageError, match="no screenshot beside lonely.xml"):
        image_beside_tree(tmp_path / "lonely.xml")


def test_a_data_set_with_screenshots_and_trees_in_two_folders_side_by_side(tmp_path) -> None:
    """Rico keeps ``screenshots/ID.jpg`` beside ``view_hierarchies/ID.json``: opening either
    finds the other (a newcomer opens what the data set gives)."""
    from PIL import Image

    from vision.imageio import image_beside_tree, load_screen_files, sibling_tree

    shots, trees = tmp_path / "screenshots", tmp_path / "view_hierarchies"
    shots.mkdir()
    trees.mkdir()
    Image.new("RGB", (20, 40), "white").save(shots / "336.jpg")
    (trees / "336.json").write_text('{"activity": {"root": {}}}')
    (trees / "337.json").write_text("{}")
    assert sibling_tree(shots / "336.jpg") == trees / "336.json"
    assert image_beside_tree(trees / "336.json") == shots / "336.jpg"
    rgb, tree = load_screen_files(shots / "336.jpg")
    assert rgb.shape == (40, 20, 3) and tree and "activity" in tree
    assert sibling_tree(shots / "999.jpg") is None
