"""The benchmark tests' task folder: two good task files and one with an error."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.evaluation.scripted_llm import BAD_TASK, GOOD_TASK, SECOND_TASK


@pytest.fixture
def task_dir(tmp_path: Path) -> Path:
    """``t.network_page`` and ``t.network_page_again`` (good) and ``c_bad.yaml`` (``t.broken``)."""
    d = tmp_path / "tasks"
    d.mkdir()
    (d / "a_good.yaml").write_text(GOOD_TASK)
    (d / "b_second.yaml").write_text(SECOND_TASK)
    (d / "c_bad.yaml").write_text(BAD_TASK)
    return d
