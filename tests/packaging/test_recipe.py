"""The packaging recipe: spec, desktop entry, entry point, icon rendering and the bundle's
resource layout are valid and agree with each other (no PyInstaller build here: that is
packaging/build.sh)."""

from __future__ import annotations

import ast
import configparser
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGING = ROOT / "packaging"


def spec_text() -> str:
    return (PACKAGING / "tapwise.spec").read_text()


def test_spec_is_valid_python_and_builds_onedir_from_the_entry_point():
    tree = ast.parse(spec_text())
    called = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    assert {"Analysis", "PYZ", "EXE", "COLLECT"} <= called  # COLLECT = onedir
    assert '"packaging" / "entry.py"' in spec_text()


@pytest.mark.parametrize("needed", ['"rapidocr"', '"qtawesome"', '"font_roboto"', '"share/tapwise"', 'home_file(KNOWN_JARS[0])',
                                    '"adbutils"', '"vision/_resources"', '"**/*.txt"', '"**/*.yaml"'])
def test_spec_collects_every_run_time_data_file(needed):
    assert needed in spec_text()


@pytest.mark.parametrize("left_out", ['"torch"', '"ultralytics"', '"open_clip"', '"paddle"', '"llama_cpp"',
                                      '"tests"', '"pytest"', '"PySide6.QtQml"', '"PySide6.QtWebEngineCore"'])
def test_spec_leaves_out_heavy_extras_tests_and_unused_qt(left_out):
    excludes = spec_text().split("excludes = [", 1)[1].split("]", 1)[0]
    assert left_out in excludes


def test_bundle_layout_puts_resources_where_vision_assets_looks(tmp_path, monkeypatch):
    # In the bundle, vision/assets.py sits in _internal/vision/ and the spec maps
    # resources/ to _internal/vision/_resources: a copy in that layout must find its models.
    monkeypatch.delenv("TAPWISE_RESOURCES", raising=False)
    (tmp_path / "vision" / "_resources" / "models").mkdir(parents=True)
    (tmp_path / "vision" / "_resources" / "models" / "ui_detector.onnx").write_bytes(b"x")
    shutil.copy(ROOT / "vision" / "assets.py", tmp_path / "vision" / "assets.py")
    spec = importlib.util.spec_from_file_location("bundled_assets", tmp_path / "vision" / "assets.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.model_path("ui_detector.onnx") == tmp_path / "vision" / "_resources" / "models" / "ui_detector.onnx"
    assert module.model_path("absent.onnx") is None


def test_desktop_entry_has_the_keys_a_menu_needs():
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str
    parser.read(PACKAGING / "tapwise.desktop")
    entry = parser["Desktop Entry"]
    assert entry["Type"] == "Application" and entry["Name"] == "Tapwise"
    assert entry["Exec"].split()[0].endswith("tapwise") and entry["Icon"] == "tapwise"
    assert entry["Categories"].endswith(";")
    if shutil.which("desktop-file-validate"):
        result = subprocess.run(["desktop-file-validate", str(PACKAGING / "tapwise.desktop")],
                                capture_output=True, text=True)
        assert result.returncode == 0, result.stdout + result.stderr


def _load_entry():
    spec = importlib.util.spec_from_file_location("bundle_entry", PACKAGING / "entry.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_entry_point_runs_the_self_test_and_exits_with_its_status(monkeypatch):
    import app.selftest

    monkeypatch.setattr(app.selftest, "run_self_test", lambda: 3)
    monkeypatch.setattr(sys, "argv", ["tapwise", "--self-test"])
    with pytest.raises(SystemExit) as stop:
        _load_entry()._main()
    assert stop.value.code == 3


def test_entry_point_hands_everything_else_to_the_cli(monkeypatch):
    import app.cli

    seen = []
    monkeypatch.setattr(app.cli, "main", lambda: seen.append(sys.argv[1:]))
    monkeypatch.setattr(sys, "argv", ["tapwise", "doctor"])
    _load_entry()._main()
    assert seen == [["doctor"]]


@pytest.fixture
def qt_app(monkeypatch):
    """A QApplication (not a bare QGuiApplication) so later widget tests in this process still work."""
    pytest.importorskip("PySide6.QtSvg", reason="icon rendering needs PySide6's QtSvg")
    monkeypatch.setenv("QT_QPA_PLATFORM", os.environ.get("QT_QPA_PLATFORM") or "offscreen")
    from PySide6.QtWidgets import QApplication

    return QApplication.instance() or QApplication([])


def test_build_script_is_valid_bash():
    result = subprocess.run(["bash", "-n", str(PACKAGING / "build.sh")], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


@pytest.mark.gui
def test_icons_render_at_each_size_from_the_svg(tmp_path, qt_app):
    spec = importlib.util.spec_from_file_location("render_icons", PACKAGING / "render_icons.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    from PIL import Image

    written = module.render(PACKAGING / "tapwise.svg", tmp_path, (48, 128))
    assert [Image.open(p).size for p in written] == [(48, 48), (128, 128)]
    assert Image.open(written[1]).getpixel((64, 64))[3] == 255  # painted, not blank
    assert (tmp_path / "hicolor" / "scalable" / "apps" / "tapwise.svg").exists()


@pytest.mark.gui
def test_icon_rendering_refuses_an_invalid_svg(tmp_path, qt_app):
    bad = tmp_path / "bad.svg"
    bad.write_text("not an svg")
    spec = importlib.util.spec_from_file_location("render_icons", PACKAGING / "render_icons.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with pytest.raises(ValueError, match="not a valid SVG"):
        module.render(bad, tmp_path / "out")


def _spec_filter():
    """The spec's ``_keep`` filter, with the constants it reads (no PyInstaller needed)."""
    tree = ast.parse(spec_text())
    wanted = [n for n in tree.body
              if (isinstance(n, ast.Assign) and {t.id for t in n.targets if isinstance(t, ast.Name)} & {"UNUSED_QT",
                                                                                                      "GTK_ONLY"})
              or (isinstance(n, ast.FunctionDef) and n.name == "_keep")]
    namespace: dict = {}
    exec(compile(ast.Module(body=wanted, type_ignores=[]), "tapwise.spec", "exec"), namespace)
    return namespace["_keep"]


@pytest.mark.parametrize(("path", "kept"), [
    ("PySide6/Qt/lib/libQt6Widgets.so.6", True),
    ("PySide6/Qt/lib/libQt6Gui.so.6", True),
    ("PySide6/Qt/plugins/platforms/libqxcb.so", True),
    ("PySide6/Qt/plugins/platforms/libqoffscreen.so", True),
    ("PySide6/Qt/lib/libQt6Qml.so.6", False),
    ("PySide6/Qt/lib/libQt6Quick.so.6", False),
    ("PySide6/Qt/lib/libQt6WebEngineCore.so.6", False),
    ("PySide6/QtQml.abi3.so", False),
    ("PySide6/Qt/qml/QtQuick/Controls/qmldir", False),
    ("PySide6/Qt/plugins/platformthemes/libqgtk3.so", False),
    ("libpango-1.0.so.0", False),
    ("libharfbuzz.so.0", False),
    ("pillow.libs/libharfbuzz-fb49c9fc.so.0.61450.0", True),  # Pillow's own copy stays
    ("rapidocr/models/PP-OCRv6_det_small.onnx", True),
])
def test_spec_filter_drops_unused_qt_and_gtk_theme_libraries_only(path, kept):
    assert _spec_filter()((path, "/src/" + path, "BINARY")) is kept
