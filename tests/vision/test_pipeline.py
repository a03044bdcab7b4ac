from dataclasses import FrozenInstanceError

import numpy as np
import pytest

from tests.vision.conftest import draw_settings_screen, settings_dump
from vision.config import PipelineConfig
from vision.errors import ImageError
from vision.geometry import Size
from vision.imageio import as_rgb, load_rgb
from vision.pipeline import ScreenParser
from vision.types import ElementKind, Screen


def test_vision_parse_finds_text_switches_and_blocks(shared_parser, settings_image):
    p = shared_parser.parse(Screen(settings_image))
    assert {"Settings", "Wi-Fi"} <= {e.text for e in p.elements}
    assert sum(e.kind is ElementKind.SWITCH for e in p.elements) == 4
    assert p.blocks and p.description.startswith("Screen 540x1200")
    assert [e.id for e in p.elements] == [str(i + 1) for i in range(len(p.elements))]
    stages = [t.stage for t in p.timings]
    assert stages[:3] == ["ocr", "detect", "group"] and stages[-1] == "total"


def test_every_block_member_is_an_element(shared_parser, settings_image):
    p = shared_parser.parse(Screen(settings_image))
    ids = {e.id for e in p.elements}
    assert all(set(b.element_ids) <= ids for b in p.blocks)


def test_tree_only_parse_needs_no_ocr(settings_image):
    class NoOcrAllowed:
        def read(self, image):
            raise AssertionError("tree mode must not run OCR")

    parser = ScreenParser(PipelineConfig(mode="tree"), ocr=NoOcrAllowed())
    screen = Screen(settings_image, hierarchy_xml=settings_dump())
    p = parser.parse(screen)  # its speed is measured by bench/bench_vision.py, never asserted here
    assert any(e.kind is ElementKind.SWITCH and e.label == "Wi-Fi" for e in p.elements)
    assert "switch" in p.description


def test_fusion_mode_uses_tree_and_reports_disagreements(shared_parser):
    img = draw_settings_screen(wifi_on=True)
    parser = ScreenParser(PipelineConfig(mode="fusion", detector="cv"), ocr=shared_parser.ocr_backend())
    p = parser.parse(Screen(img, hierarchy_xml=settings_dump()))
    assert any(e.text == "Wi-Fi" and e.source.value == "hierarchy" for e in p.elements)
    kinds = {d.kind for d in p.disagreements}
    assert "missing_in_tree" in kinds  # the tree has no "Airplane mode" row, the pixels do


def test_auto_mode_without_dump_parses_pixels(shared_parser, settings_image):
    parser = ScreenParser(PipelineConfig(detector="cv"), ocr=shared_parser.ocr_backend())
    p = parser.parse(Screen(settings_image))
    assert not any(w for w in p.warnings if "dump" in w)
    assert p.text_spans


def test_incremental_parse_rereads_only_the_change(shared_parser):
    a, b = draw_settings_screen(title="Settings"), draw_settings_screen(title="Network")
    pa = shared_parser.parse(Screen(a))
    pb = shared_parser.parse(Screen(b), previous=(Screen(a), pa))
    assert "ocr_incremental" in [t.stage for t in pb.timings]
    assert "Network" in {s.text for s in pb.text_spans}


def test_tiny_image_gives_valid_empty_parse_with_warning(shared_parser):
    p = shared_parser.parse(Screen(np.zeros((5, 5, 3), np.uint8)))
    assert p.elements == () and p.warnings


def test_blank_image_gives_empty_parse(shared_parser):
    p = shared_parser.parse(Screen(np.full((400, 200, 3), 255, np.uint8)))
    assert p.elements == ()
    assert "nothing recognised" in p.description


def test_huge_image_is_refused_with_a_clear_warning():
    parser = ScreenParser(PipelineConfig(max_image_pixels=1000))
    p = parser.parse(Screen(np.zeros((100, 100, 3), np.uint8)))
    assert p.elements == () and "too large" in p.warnings[0]


def test_malformed_dump_in_tree_mode_gives_empty_parse_with_warning(settings_image):
    p = ScreenParser(PipelineConfig(mode="tree")).parse(Screen(settings_image, hierarchy_xml="<hierarchy><node"))
    assert p.elements == () and any("XML" in w for w in p.warnings)


def test_config_is_frozen_and_validated():
    c = PipelineConfig()
    with pytest.raises(FrozenInstanceError):
        c.mode = "tree"  # type: ignore[misc]
    with pytest.raises(ValueError):
        PipelineConfig(ocr_min_confidence=1.5)


def test_missing_yolo_model_falls_back_to_cv_detector(tmp_path, monkeypatch):
    monkeypatch.setenv("TAPWISE_RESOURCES", str(tmp_path))
    parser = ScreenParser(PipelineConfig(detector="auto"))
    parser.detector()
    assert parser.detector_name == "cv"


def test_corrupt_empty_and_missing_image_files_raise_image_error(tmp_path):
    bad = tmp_path / "bad.png"
    bad.write_bytes(b"\x89PNG garbage")
    empty = tmp_path / "empty.png"
    empty.write_bytes(b"")
    for path in (bad, empty, tmp_path / "missing.png"):
        with pytest.raises(ImageError):
            load_rgb(path)


def test_huge_image_file_is_refused_before_decoding(tmp_path):
    from PIL import Image

    path = tmp_path / "big.png"
    Image.new("RGB", (3000, 3000)).save(path)
    with pytest.raises(ImageError, match="too large"):
        load_rgb(path, max_pixels=1_000_000)


def test_as_rgb_accepts_grey_rgba_and_float():
    assert as_rgb(np.zeros((4, 4), np.uint8)).shape == (4, 4, 3)
    assert as_rgb(np.zeros((4, 4, 4), np.uint8)).shape == (4, 4, 3)
    assert as_rgb(np.ones((4, 4, 3), np.float32)).max() == 255


def test_parser_diffs_against_its_own_last_frame_when_no_previous_is_given(shared_parser, settings_image):
    calls = []

    class CountingOcr:
        def read(self, image):
            calls.append(image.shape)
            return shared_parser.ocr_backend().read(image)

    parser = ScreenParser(PipelineConfig(detector="cv"), ocr=CountingOcr())
    first = parser.parse(Screen(settings_image))
    again = parser.parse(Screen(settings_image.copy()))
    assert len(calls) == 1
    assert "ocr_incremental" in [t.stage for t in again.timings]
    assert {s.text for s in again.text_spans} == {s.text for s in first.text_spans}


def test_a_crashing_ocr_engine_becomes_a_warning_not_a_crash(settings_image):
    class Broken:
        def read(self, image):
            raise RuntimeError("engine exploded")

    p = ScreenParser(PipelineConfig(detector="cv"), ocr=Broken()).parse(Screen(settings_image))
    assert any("OCR failed" in w for w in p.warnings)
    assert any(e.kind is ElementKind.SWITCH for e in p.elements)


def test_previous_tree_only_parse_is_not_used_for_incremental_ocr(shared_parser, settings_image):
    tree_parse = ScreenParser(PipelineConfig(mode="tree")).parse(Screen(settings_image, hierarchy_xml=settings_dump()))
    p = shared_parser.parse(Screen(settings_image), previous=(Screen(settings_image), tree_parse))
    assert "ocr" in [t.stage for t in p.timings] and p.text_spans


def test_total_ms_is_the_parse_time_not_the_stages_counted_twice():
    from vision.types import ScreenParse, StageTiming

    p = ScreenParse(Size(10, 10), timings=(StageTiming("ocr", 40.0), StageTiming("detect", 10.0), StageTiming("total", 52.0)))
    assert p.total_ms == 52.0
    assert ScreenParse(Size(10, 10), timings=(StageTiming("tree", 2.0), StageTiming("describe", 1.0))).total_ms == 3.0
    parse = ScreenParser(PipelineConfig(mode="tree")).parse(Screen(np.full((1200, 540, 3), 250, np.uint8), hierarchy_xml=settings_dump()))
    stages = sum(t.ms for t in parse.timings if t.stage != "total")
    assert parse.total_ms == next(t.ms for t in parse.timings if t.stage == "total") >= stages
