"""``tapwise explore``: explores on the virtual phone, stores the map, resumes it, shows and exports it."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from app.cli import app


def test_explore_stores_resumes_shows_and_exports_the_map(tmp_path, monkeypatch):
    monkeypatch.setenv("TAPWISE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("TAPWISE_CONFIG_DIR", str(tmp_path / "cfg"))
    runner = CliRunner()
    first = runner.invoke(app, ["explore", "Notes", "--steps", "8"], terminal_width=200)
    assert first.exit_code == 0, first.output
    assert "budget spent" in first.output
    out = tmp_path / "notes.json"
    second = runner.invoke(app, ["explore", "Notes", "--steps", "200", "--export", str(out)], terminal_width=200)
    assert second.exit_code == 0, second.output
    assert "resuming the map of Notes" in second.output and "(finished)" in second.output
    assert "deleting" in second.output
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["package"] == "com.google.android.keep" and data["schema"] == 1 and data["complete"]
    shown = runner.invoke(app, ["explore", "Notes", "--show"], terminal_width=200)
    assert shown.exit_code == 0 and f"{len(data['screens'])} screens" in shown.output
    missing = runner.invoke(app, ["explore", "Shop", "--show"])
    assert missing.exit_code == 1 and "no map" in missing.output


def test_a_bad_budget_is_refused_with_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("TAPWISE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("TAPWISE_CONFIG_DIR", str(tmp_path / "cfg"))
    result = CliRunner().invoke(app, ["explore", "Notes", "--steps", "0"])
    assert result.exit_code == 2 and "at least one step" in result.output
