"""``tapwise run`` headless against the fake server on the virtual phone."""

from __future__ import annotations

import typer
from typer.testing import CliRunner

from app.cli.run import run


def _wifi_cli(server, tmp_path, monkeypatch) -> typer.Typer:
    """``tapwise run`` with the fake server scripted to turn Wi-Fi off."""
    monkeypatch.setenv("TAPWISE_DATA_DIR", str(tmp_path))
    server.on("Next action:", "open Settings", "tap Network & internet", "tap Internet", "tap the Wi-Fi switch",
              "done")
    cli = typer.Typer()
    cli.command()(run)
    return cli


def test_run_auto_on_sim_prints_each_step_and_stores_them(server, tmp_path, monkeypatch):
    cli = _wifi_cli(server, tmp_path, monkeypatch)
    result = CliRunner().invoke(cli, [
        "Turn off Wi-Fi", "--device", "sim", "--planner", "zeroshot-", "--mode", "auto", "--model", "fake",
        "--base-url", server.url, "--backend", "ollama", "--task", "settings.wifi_off", "--parse", "tree",
        "--free", "--db", str(tmp_path / "run.db")])  # the scripted replies are free text
    assert result.exit_code == 0, result.output
    out = result.output
    assert "proposes: open Settings" in out and "done: tap Network & internet" in out
    assert "succeeded" in out and "goal reached" in out
    from app.storage import Store

    with Store(tmp_path / "run.db") as store:
        eid = store.list_episodes()[0]["id"]
        assert len(store.load_episode(eid).steps) == 5


def test_run_rejects_unknown_planner(server, tmp_path):
    cli = typer.Typer()
    cli.command()(run)
    result = CliRunner().invoke(cli, ["x", "--planner", "magic", "--no-store", "--base-url", server.url])
    assert result.exit_code == 2 and "choose one of" in result.output


def test_a_solved_task_becomes_an_example_for_a_similar_later_goal(server, tmp_path, monkeypatch):
    cli = _wifi_cli(server, tmp_path, monkeypatch)
    args = ["--device", "sim", "--planner", "zeroshot-", "--mode", "auto", "--model", "fake", "--base-url",
            server.url, "--backend", "ollama", "--task", "settings.wifi_off", "--parse", "tree", "--free",
            "--db", str(tmp_path / "run.db")]
    first = CliRunner().invoke(cli, ["Turn off Wi-Fi", *args])
    assert first.exit_code == 0, first.output
    assert "stored in the task repository" in first.output
    second = CliRunner().invoke(cli, ["Switch the Wi-Fi off", *args, "--max-steps", "1"])
    assert "similar solved task(s) given to the planner as examples" in second.output


def test_the_terminal_asks_with_readable_choices_and_shows_each_steps_time(server, tmp_path, monkeypatch):
    monkeypatch.setenv("TAPWISE_DATA_DIR", str(tmp_path))
    server.on("Next action:", "open Clock", "open Settings")
    cli = typer.Typer()
    cli.command()(run)
    result = CliRunner().invoke(cli, [
        "Turn off Wi-Fi", "--device", "sim", "--planner", "zeroshot-", "--mode", "approve", "--model", "fake",
        "--base-url", server.url, "--backend", "ollama", "--parse", "tree", "--no-store", "--free"],
        input="r\nWi-Fi is in Settings\nq\n")
    out = result.output
    assert "[a]pprove, [e]dit, [r]eject, [d]emonstrate, [q]uit" in out
    assert "rejected: Wi-Fi is in Settings" in out and "stopped at this step" in out
    assert out.count("time: frame") == 2 and "llm" in out.split("time: frame")[1]
    assert result.exit_code != 0  # stopped by the user
