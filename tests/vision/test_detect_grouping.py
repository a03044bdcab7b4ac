import numpy as np

from vision.detect import CvDetector, Detection
from vision.geometry import Rect
from vision.grouping import build_elements
from vision.icons import IconGuess
from vision.ocr import RapidOcrBackend
from vision.types import ElementKind, TextSpan


def _spans(image):
    return RapidOcrBackend().read(image)


def test_cv_detector_finds_switches_status_bar_and_field(settings_image):
    dets = CvDetector().detect(settings_image, _spans(settings_image))
    kinds = [d.kind for d in dets]
    assert kinds.count(ElementKind.SWITCH) == 4
    assert ElementKind.STATUS_BAR in kinds
    assert ElementKind.EDIT_TEXT in kinds


def test_cv_detector_on_blank_or_tiny_image_finds_nothing():
    assert CvDetector().detect(np.full((800, 400, 3), 255, np.uint8)) == []
    assert CvDetector().detect(np.zeros((8, 8, 3), np.uint8)) == []


def test_switch_is_matched_to_the_text_on_its_row_and_state_read_from_colour(settings_image):
    spans = _spans(settings_image)
    dets = CvDetector().detect(settings_image, spans)
    els, _ = build_elements(settings_image, dets, spans)
    switches = sorted((e for e in els if e.kind is ElementKind.SWITCH), key=lambda e: e.rect.top)
    assert [s.label for s in switches] == ["Wi-Fi", "Bluetooth", "Airplane mode", "Dark theme"]
    assert [s.checked for s in switches] == [True, False, False, True]


def test_text_inside_a_widget_becomes_its_text():
    img = np.full((400, 400, 3), 255, np.uint8)
    dets = [Detection(ElementKind.BUTTON, Rect(50, 50, 250, 110))]
    spans = [TextSpan("Save", Rect(120, 65, 180, 95))]
    els, _ = build_elements(img, dets, spans)
    (button,) = els
    assert button.text == "Save" and button.clickable


def _icon_button_guessed(confidence: float):  # type: ignore[no-untyped-def]
    """One detected button with no text, the icon classifier calling it "search" with ``confidence``."""
    img = np.full((400, 400, 3), 255, np.uint8)

    class Icons:
        def classify(self, crops):
            return [IconGuess("search", confidence) for _ in crops]

    return build_elements(img, [Detection(ElementKind.BUTTON, Rect(300, 20, 348, 68))], [], icons=Icons())


def test_unmatched_icon_button_gets_the_icon_classifier_label():
    els, stats = _icon_button_guessed(0.9)
    assert els[0].label == "search" and stats["icon_labels"] == 1


def test_low_confidence_icon_guess_is_not_used():
    els, _ = _icon_button_guessed(0.1)
    assert els[0].label == ""


def test_free_text_becomes_text_elements():
    img = np.full((400, 400, 3), 255, np.uint8)
    els, _ = build_elements(img, [], [TextSpan("Hello", Rect(10, 10, 80, 30), 0.99)])
    assert [(e.kind, e.text) for e in els] == [(ElementKind.TEXT, "Hello")]


def test_leading_icon_of_a_list_row_is_an_image_not_a_button():
    img = np.full((800, 400, 3), 255, np.uint8)
    dets = [Detection(ElementKind.BUTTON, Rect(20, 100, 80, 160))]
    spans = [TextSpan("Jane Doe", Rect(100, 115, 300, 145))]
    els, _ = build_elements(img, dets, spans)
    assert next(e for e in els if e.rect.left == 20).kind is ElementKind.IMAGE


def test_app_bar_arrow_before_a_title_of_its_height_stays_a_button():
    img = np.full((800, 400, 3), 255, np.uint8)
    dets = [Detection(ElementKind.BUTTON, Rect(20, 100, 44, 124))]
    spans = [TextSpan("Trash", Rect(60, 98, 160, 126))]
    els, _ = build_elements(img, dets, spans)
    button = next(e for e in els if e.kind is ElementKind.BUTTON)
    assert button.rect.width > 24  # grown to its touch target


def test_yolo_backend_without_model_is_a_clear_error(tmp_path):
    import pytest

    from vision.detect import YoloOnnxDetector
    from vision.errors import BackendUnavailable

    with pytest.raises(BackendUnavailable):
        YoloOnnxDetector(tmp_path / "missing.onnx")


def test_shipped_yolo_model_finds_the_launcher_buttons():
    import pytest

    from vision.assets import model_path
    from vision.detect import YoloOnnxDetector

    path = model_path("ui_detector.onnx")
    if path is None:
        pytest.skip("no YOLO model shipped; the CV detector is the default")
    sim = pytest.importorskip("phone.virtual.phone")
    phone = sim.VirtualPhone(profile="phone", seed=77)
    img = phone.screenshot().image
    truth = [e.rect for e in phone.ground_truth().elements if e.kind is ElementKind.BUTTON]
    buttons = [d.rect for d in YoloOnnxDetector(path).detect(img) if d.kind is ElementKind.BUTTON]
    assert sum(any(b.iou(t) >= 0.5 for t in truth) for b in buttons) >= 3


def test_hybrid_detector_takes_learned_classes_from_the_model_and_the_rest_from_cv():
    from vision.detect import HybridDetector

    class Model:
        def detect(self, image, texts=()):
            return [Detection(ElementKind.BUTTON, Rect(10, 10, 110, 60), 0.9),
                    Detection(ElementKind.SWITCH, Rect(300, 10, 360, 40), 0.4)]

    class Classic:
        def detect(self, image, texts=()):
            return [Detection(ElementKind.BUTTON, Rect(12, 12, 108, 58)),   # same button: dropped
                    Detection(ElementKind.BUTTON, Rect(10, 200, 60, 250)),  # missed by the model: kept
                    Detection(ElementKind.SWITCH, Rect(300, 12, 360, 42))]  # CV's class: kept

    dets = HybridDetector(Model(), Classic()).detect(np.zeros((400, 400, 3), np.uint8))
    got = sorted((d.kind.value, d.rect.top, d.confidence) for d in dets)
    assert got == [("button", 10, 0.9), ("button", 200, 0.5), ("switch", 12, 0.5)]
