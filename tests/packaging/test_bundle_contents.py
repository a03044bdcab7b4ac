"""What the bundle must hold and must leave out, checked without a PyInstaller build: the
spec collects every kind of data file the product packages ship (a missing kind broke the
bundle's self-test once: the safety word lists), and the frozen-module check tells test
packages from modules that are merely called ``tests`` (it refused ``jinja2.tests`` once)."""

from __future__ import annotations

import importlib.util
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = ("app", "agent", "vision", "widgets", "phone", "evaluation")


def _frozen_check():
    spec = importlib.util.spec_from_file_location("frozen_check", ROOT / "packaging" / "frozen_check.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_kind_of_data_file_in_the_product_is_collected_by_the_spec():
    files = subprocess.run(["git", "ls-files", *PRODUCT], capture_output=True, text=True, cwd=ROOT, check=True)
    kinds = {Path(f).suffix for f in files.stdout.split() if Path(f).suffix not in (".py", ".md")}
    spec = (ROOT / "packaging" / "tapwise.spec").read_text()
    missing = sorted(k for k in kinds if f'"**/*{k}"' not in spec)
    assert not missing, f"packaging/tapwise.spec does not collect {missing} files the product reads"


def test_a_module_called_tests_stays_but_test_packages_and_heavy_extras_go():
    check = _frozen_check()
    entries = [
        ("jinja2.tests", "/venv/jinja2/tests.py"),  # Jinja's template tests: real code
        ("jinja2.runtime", "/venv/jinja2/runtime.py"),
        ("foo.tests", "/venv/foo/tests/__init__.py"),  # a test package
        ("foo.tests.test_bar", "/venv/foo/tests/test_bar.py"),
        ("pytest", "/venv/pytest/__init__.py"),
        ("torch.nn", "/venv/torch/nn/__init__.py"),
        ("agent.safety.assess", "/repo/agent/safety/assess.py"),
    ]
    assert check.unwanted(entries) == ["foo.tests", "foo.tests.test_bar", "pytest", "torch.nn"]
