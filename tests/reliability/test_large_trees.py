"""Large and deep trees (item 7's inputs; making them fast is the vision pipeline's
work): a long list parses into its elements, and trees nested 100k deep (XML or JSON)
end in a parse or a clear error, never a crash of the run or the CLI.  Timings are the
benchmark's (``bench/bench_reliability.py``), not asserted here."""

from __future__ import annotations

import numpy as np

from tests.reliability.support import tapwise
from tests.reliability.trees import big_tree, deep_tree
from vision.config import PipelineConfig
from vision.pipeline import ScreenParser
from vision.types import Screen


def _parse(xml: str):
    return ScreenParser(PipelineConfig(mode="tree")).parse(Screen(np.full((2400, 1080, 3), 255, np.uint8),
                                                                  hierarchy_xml=xml))


def test_a_2000_node_list_parses_into_its_rows_and_texts():
    parse = _parse(big_tree(2000))
    words = " ".join(f"{e.text} {e.label}" for e in parse.elements)
    assert "Item number 0 " in words and "Details of 498" in words, "the first and the last row are read"
    assert len(parse.elements) >= 1500


def test_a_tree_nested_100k_deep_does_not_crash_the_parser():
    parse = _parse(deep_tree(100_000))
    assert parse.screen_size.width == 1080


def test_the_cli_reads_a_deep_xml_tree_without_a_traceback(tmp_path):
    from PIL import Image

    shot = tmp_path / "s.png"
    Image.new("RGB", (1080, 2400), "white").save(shot)
    tree = tmp_path / "s.xml"
    tree.write_text(deep_tree(100_000))
    out = tapwise("parse", str(shot), "--hierarchy", str(tree), "--mode", "tree")
    assert "Traceback" not in out.stdout + out.stderr
    assert out.returncode in (0, 2), out.stderr
