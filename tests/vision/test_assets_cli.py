import json

import pytest
from PIL import Image
from typer.testing import CliRunner

from tests.vision.conftest import draw_settings_screen, settings_dump
from vision.assets import model_path, resources_dir


def test_resources_resolve_from_the_source_checkout():
    root = resources_dir()
    assert root is not None and root.name == "resources"
    assert model_path("definitely-not-a-model.onnx") is None


def test_resources_resolve_from_a_wheel_layout(tmp_path, monkeypatch):
    import vision.assets as assets

    pkg = tmp_path / "vision"
    (pkg / "_resources" / "models").mkdir(parents=True)
    (pkg / "_resources" / "models" / "m.onnx").write_bytes(b"x")
    monkeypatch.setattr(assets, "__file__", str(pkg / "assets.py"))
    assert assets.resources_dir() == pkg / "_resources"
    assert assets.model_path("m.onnx") == pkg / "_resources" / "models" / "m.onnx"


@pytest.fixture()
def runner():
    return CliRunner()


def test_parse_command_prints_timings_description_and_writes_outputs(runner, tmp_path):
    from app.cli.parse import app

    img = tmp_path / "s.png"
    Image.fromarray(draw_settings_screen()).save(img)
    xml = tmp_path / "s.xml"
    xml.write_text(settings_dump())
    out_json, overlay = tmp_path / "p.json", tmp_path / "o.png"
    res = runner.invoke(app, [str(img), "--xml", str(xml), "--json", str(out_json), "--overlay", str(overlay),
                              "--describe", "--mode", "tree"])
    assert res.exit_code == 0, res.output
    assert "tree" in res.output and "ms" in res.output and "switch" in res.output
    assert json.loads(out_json.read_text())
    assert Image.open(overlay).size == (540, 1200)


def test_parse_command_reports_a_corrupt_image_clearly(runner, tmp_path):
    from app.cli.parse import app

    bad = tmp_path / "bad.png"
    bad.write_bytes(b"nope")
    res = runner.invoke(app, [str(bad)])
    assert res.exit_code == 2
    assert "cannot decode" in res.output


def test_parse_command_rejects_unknown_mode_values(runner, tmp_path):
    from app.cli.parse import app

    img = tmp_path / "s.png"
    Image.fromarray(draw_settings_screen()).save(img)
    res = runner.invoke(app, [str(img), "--ocr-min-confidence", "2"])
    assert res.exit_code == 2
