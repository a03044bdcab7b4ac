"""End-to-end checks of the pipeline on frames rendered by the virtual phone (phone.virtual)."""

import pytest

from vision.config import PipelineConfig
from vision.pipeline import ScreenParser
from vision.types import ElementKind

sim = pytest.importorskip("phone.virtual.phone", reason="the virtual phone is not available")


@pytest.fixture(scope="module")
def settings_screen():
    phone = sim.VirtualPhone(profile="phone", seed=5)
    phone.open_app("Settings")
    return phone.screenshot(with_hierarchy=True), phone.ground_truth()


def test_fusion_parse_of_settings_has_rows_status_bar_and_few_tokens(shared_parser, settings_screen):
    from vision.describe import estimate_tokens

    screen, truth = settings_screen
    parser = ScreenParser(PipelineConfig(mode="fusion", detector="cv", remember_previous=False), ocr=shared_parser.ocr_backend())
    p = parser.parse(screen)
    names = " ".join(e.display_name for e in p.elements)
    assert "Network & internet" in names
    assert any(e.kind is ElementKind.STATUS_BAR for e in p.elements)
    assert 50 < estimate_tokens(p.description) < 600
    assert not [d for d in p.disagreements if d.kind == "text_mismatch"]


def test_vision_parse_recalls_most_ground_truth_text(shared_parser, settings_screen):
    screen, truth = settings_screen
    p = shared_parser.parse(screen.__class__(screen.image))
    read = " ".join(s.text for s in p.text_spans).lower()
    wanted = [e.text for e in truth.elements if e.kind is ElementKind.TEXT and e.text]
    found = sum(w.lower() in read for w in wanted)
    assert found >= 0.8 * len(wanted)


def test_tree_parse_of_the_phone_dump_finds_its_rows(settings_screen):
    # its speed is measured by bench/bench_vision.py --only speed (timings are never asserted here)
    screen, _ = settings_screen
    parser = ScreenParser(PipelineConfig(mode="tree"))
    p = parser.parse(screen)
    assert any(e.text == "Network & internet" for e in p.elements)
