"""The online and the offline report share their HTML rendering through public names: no
module of the evaluation package reaches into another's private (``_``) helpers."""

from __future__ import annotations

import ast
from pathlib import Path

import evaluation
from evaluation.metrics import EpisodeResult
from evaluation.offline import report as offline_report
from evaluation.report import REPORT_CSS, html_page, markdown_to_html

PACKAGE = Path(evaluation.__file__).parent


def test_no_evaluation_module_imports_another_modules_private_names():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("evaluation"):
                found += [f"{path.relative_to(PACKAGE)}: {node.module}.{a.name}"
                          for a in node.names if a.name.startswith("_")]
    assert found == []


def test_a_page_is_the_markdown_rendered_in_the_reports_style():
    page = html_page("A <title>", markdown_to_html("# Figures\n\n| a | b |\n|---|---|\n| 1 | 2 |"))
    assert page.startswith("<!doctype html>") and "<title>A &lt;title&gt;</title>" in page
    assert REPORT_CSS in page and "<h1>Figures</h1>" in page and "<td>1</td>" in page


def test_the_offline_report_looks_like_the_online_one(tmp_path):
    result = EpisodeResult(task_id="settings.wifi_off", planner="zeroshot", success=True)
    _md, html_path = offline_report.write(tmp_path, [result], {"model": "fake"})
    assert REPORT_CSS in html_path.read_text(encoding="utf-8")
