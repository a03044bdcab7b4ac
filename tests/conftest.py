"""Shared test set-up: every test runs with its own config and data folders, so no test
reads or writes the user's real settings or database."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _isolated_user_dirs(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    base = tmp_path_factory.mktemp("user")
    monkeypatch.setenv("TAPWISE_CONFIG_DIR", str(base / "config"))
    monkeypatch.setenv("TAPWISE_DATA_DIR", str(base / "data"))
    monkeypatch.setenv("MPLCONFIGDIR", str(base / "mpl"))
    # a window explores the phone's apps by itself a few seconds after a phone connects; the
    # tests that check it turn it on (tests/knowledge/test_auto_explore_window.py)
    monkeypatch.setenv("TAPWISE_AGENT__EXPLORE_AUTOMATICALLY", "false")
