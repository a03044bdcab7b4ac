import json
import random

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from vision.assets import model_path
from vision.errors import BackendUnavailable
from vision.icon_vocab import ICON_FUNCTIONS, ICON_LABELS
from vision.icons import ICON_INPUT, OnnxIconClassifier, normalize_icon


def _mdi():
    import importlib.util
    from pathlib import Path

    spec = importlib.util.find_spec("qtawesome")
    if spec is None:
        pytest.skip("qtawesome (icon font) not installed")
    fonts = Path(list(spec.submodule_search_locations)[0]) / "fonts"
    charmap = json.loads((fonts / "materialdesignicons6-webfont-charmap-6.9.96.json").read_text())
    return fonts / "materialdesignicons6-webfont-6.9.96.ttf", charmap


def _glyph(name, fg=(60, 60, 60), bg=(250, 250, 250), px=48):
    font_path, charmap = _mdi()
    im = Image.new("RGB", (int(px * 1.5), int(px * 1.5)), bg)
    ImageDraw.Draw(im).text((im.width / 2, im.height / 2), chr(int(charmap[name], 16)),
                            font=ImageFont.truetype(str(font_path), px), fill=fg, anchor="mm")
    return np.asarray(im)


def test_vocabulary_has_about_150_unique_functions():
    assert 140 <= len(ICON_LABELS) <= 180
    assert len(set(ICON_LABELS)) == len(ICON_LABELS)
    glyphs = [g for _, gs in ICON_FUNCTIONS for g in gs]
    assert len(glyphs) == len(set(glyphs))


def test_normalize_icon_is_colour_invariant():
    a = normalize_icon(_glyph("magnify", fg=(20, 20, 20), bg=(255, 255, 255)))
    b = normalize_icon(_glyph("magnify", fg=(255, 255, 255), bg=(26, 115, 232)))
    assert a.shape == (ICON_INPUT, ICON_INPUT)
    assert np.abs(a - b).mean() < 0.08


def test_normalize_icon_of_flat_or_degenerate_crop_is_empty():
    assert normalize_icon(np.full((30, 30, 3), 128, np.uint8)).max() == 0
    assert normalize_icon(np.zeros((1, 1, 3), np.uint8)).max() == 0


def test_missing_model_is_a_clear_backend_error(tmp_path):
    with pytest.raises(BackendUnavailable):
        OnnxIconClassifier(tmp_path / "nope.onnx")


@pytest.mark.skipif(model_path("icon_classifier.onnx") is None, reason="icon model not trained yet")
def test_shipped_classifier_names_common_icons():
    clf = OnnxIconClassifier()
    names = {"search": "magnify", "settings": "cog", "back": "arrow-left", "share": "share-variant",
             "delete": "delete", "add": "plus", "send": "send", "favourite": "heart"}
    rng = random.Random(0)
    crops = [_glyph(g, fg=tuple(rng.randrange(0, 90) for _ in range(3))) for g in names.values()]
    guesses = clf.classify(crops)
    correct = sum(g.label == want for g, want in zip(guesses, names, strict=True))
    assert correct >= 6, [g.label for g in guesses]
    assert clf.classify([]) == []
