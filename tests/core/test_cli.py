"""The command line: --version, doctor, and episode listing work on a bare machine."""

import subprocess
import sys

from typer.testing import CliRunner

from agent.types import Episode
from app.cli import app
from app.settings import load_settings
from app.storage import Store

runner = CliRunner()


def test_version_prints_the_package_version():
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.output.startswith("tapwise ")


def test_doctor_reports_instead_of_failing(monkeypatch):
    monkeypatch.setenv("TAPWISE_LLM__OLLAMA_HOST", "http://127.0.0.1:9")  # nothing listens there
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    result = runner.invoke(app, ["doctor"], env={"COLUMNS": "500"})
    assert result.exit_code == 0, result.output
    for component in ("adb", "ollama", "OCR models", "display", "widget detector"):
        assert component in result.output
    assert "not reachable" in result.output
    assert "xvfb-run" in result.output


def test_doctor_flags_a_corrupt_database():
    settings, _ = load_settings()
    settings.database_path.parent.mkdir(parents=True, exist_ok=True)
    settings.database_path.write_bytes(b"garbage" * 100)
    result = runner.invoke(app, ["doctor"], env={"COLUMNS": "500"})
    assert result.exit_code == 0
    assert "not a SQLite database" in result.output
    strict = runner.invoke(app, ["doctor", "--strict"], env={"COLUMNS": "500"})
    assert strict.exit_code == 1


def test_episodes_lists_what_was_recorded():
    settings, _ = load_settings()
    store = Store(settings.database_path)
    store.begin_episode(Episode(goal="set an alarm for 7:30"))
    store.close()
    result = runner.invoke(app, ["episodes"], env={"COLUMNS": "500"})
    assert result.exit_code == 0
    assert "set an alarm for 7:30" in result.output


def test_console_script_runs_as_a_process():
    out = subprocess.run([sys.executable, "-m", "app.cli", "--version"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "tapwise" in out.stdout


def test_every_registered_subcommand_is_mounted_and_answers_help():
    from app.cli import SUBCOMMANDS

    listed = runner.invoke(app, ["--help"], env={"COLUMNS": "200"}).output
    for _module, _attr, name, _is_group in SUBCOMMANDS:
        assert f" {name} " in listed, name
        result = runner.invoke(app, [name, "--help"], env={"COLUMNS": "200"})
        assert result.exit_code == 0, (name, result.output)


def test_the_virtual_phone_is_served_from_the_sim_command_not_the_device_layer():
    result = runner.invoke(app, ["sim", "--help"], env={"COLUMNS": "200"})
    assert "serve" in result.output and "--serve" in result.output
    assert "serve" not in runner.invoke(app, ["devices", "--help"], env={"COLUMNS": "200"}).output
