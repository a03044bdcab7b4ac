"""Test support for ``tapwise sim tasks``: a valid extra task file (airplane mode on,
optionally with German goals) written into a folder, and the command run in-process.
Shared by the task-data and wording specifications; holds no assertions of its own."""

from __future__ import annotations

from pathlib import Path

from click.testing import Result


def write_airplane_task(folder: Path, *, goals_de: str = "") -> Path:
    """Write ``ok.yaml`` (task ``extra.airplane``, with ``goals_de`` when given) into ``folder``."""
    path = folder / "ok.yaml"
    german = f"goals_de: [{goals_de}]\n" if goals_de else ""
    path.write_text(
        f"id: extra.airplane\ngoals: [Airplane mode on]\n{german}app: com.android.settings\n"
        "success: {path: settings.airplane_mode, eq: true}\nsolution:\n  - open_app: Settings\n"
        "  - tap: Network & internet\n  - tap: Airplane mode\n")
    return path


def sim_tasks(*args: str) -> Result:
    """Run ``tapwise sim tasks ARGS…`` in-process and return its result (exit code, output)."""
    from typer.testing import CliRunner

    from app.cli.sim import sim_app

    return CliRunner().invoke(sim_app, ["tasks", *args])
