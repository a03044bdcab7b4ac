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


@pytest.fixture(scope="module")
def smollm2_url(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """The ``/v1`` URL of SmolLM2-135M served by llama.cpp on loopback (``tests/smollm2_server.py``);
    skips where it is not installed."""
    from tests.smollm2_server import serve

    yield from serve(tmp_path_factory.mktemp("llama") / "server.log")
