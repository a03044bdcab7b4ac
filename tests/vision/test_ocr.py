import numpy as np
import pytest

from tests.vision.conftest import draw_settings_screen
from vision.geometry import Rect
from vision.ocr import RapidOcrBackend, changed_regions, incremental_read
from vision.types import TextSpan


@pytest.fixture(scope="module")
def ocr():
    return RapidOcrBackend(min_confidence=0.95)


def test_rapidocr_reads_the_screen_text_with_boxes(ocr, settings_image):
    spans = ocr.read(settings_image)
    texts = {s.text for s in spans}
    assert {"Settings", "Wi-Fi", "Bluetooth", "Search settings"} <= texts
    wifi = next(s for s in spans if s.text == "Wi-Fi")
    assert wifi.rect.top > 240 and wifi.rect.bottom < 320 and wifi.confidence >= 0.95


def test_confidence_bar_is_configurable(settings_image):
    strict = RapidOcrBackend(min_confidence=1.0).read(settings_image)
    assert len(strict) < len(RapidOcrBackend(min_confidence=0.5).read(settings_image))


def test_blank_and_tiny_images_read_nothing(ocr):
    assert ocr.read(np.full((200, 200, 3), 255, np.uint8)) == []
    assert ocr.read(np.zeros((4, 4, 3), np.uint8)) == []


def test_change_map_finds_the_changed_region_only():
    a = draw_settings_screen(wifi_on=True)
    b = draw_settings_screen(wifi_on=False)
    cm = changed_regions(a, b)
    assert cm.comparable and 0 < cm.fraction < 0.05
    assert all(r.left > 300 for r in cm.regions)  # only the switch moved


def test_identical_frames_reuse_previous_spans_without_ocr():
    a = draw_settings_screen()

    class Boom:
        def read(self, image):
            raise AssertionError("OCR must not run")

    prev = [TextSpan("Wi-Fi", Rect(24, 250, 100, 280))]
    spans, cm = incremental_read(Boom(), a, a.copy(), prev)
    assert spans == prev and cm.fraction == 0


def test_incremental_read_rereads_only_the_changed_title(ocr):
    a = draw_settings_screen(title="Settings")
    b = draw_settings_screen(title="Network")
    prev = ocr.read(a)
    calls = []

    class Spy:
        def read(self, image):
            calls.append(image.shape)
            return ocr.read(image)

    spans, cm = incremental_read(Spy(), b, a, prev)
    texts = {s.text for s in spans}
    assert "Network" in texts and "Settings" not in texts and "Wi-Fi" in texts
    assert calls and all(h * w < 0.2 * b.shape[0] * b.shape[1] for h, w, _ in calls)


def test_frames_of_different_size_fall_back_to_a_full_read(ocr):
    a = draw_settings_screen(540, 1200)
    b = draw_settings_screen(360, 800)
    spans, cm = incremental_read(ocr, b, a, [])
    assert not cm.comparable and any(s.text == "Wi-Fi" for s in spans)
