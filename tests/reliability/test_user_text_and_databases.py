"""Items 4 and 5: user text is printed as text, and a database Tapwise cannot use is a
clear message (never a traceback) from every command; a read-only data folder is named a
permissions problem, not damage."""

from __future__ import annotations

import os
import shutil
import sqlite3

import pytest

from agent.macros.io import export_json
from agent.macros.types import Macro, MacroStep
from agent.types import Action
from app.settings import load_settings
from tests.reliability.support import alternating, run_args, scripted, tapwise


def test_a_goal_in_brackets_is_listed_as_written(tmp_path):
    goal = "[/bold] x [red]y"
    with scripted(alternating("done")) as llm:
        out = tapwise(*run_args(llm.url, goal, steps=1))
    assert "Traceback" not in out.stdout + out.stderr, out.stderr[-2000:]
    listed = tapwise("episodes")
    assert listed.returncode == 0, listed.stdout + listed.stderr
    assert "MarkupError" not in listed.stderr and "[/bold] x [red]y" in listed.stdout


def test_macros_named_in_brackets_or_escape_bytes_list_and_show_as_text(tmp_path):
    macro = Macro(name="evil\x1b[31m name", id="[/oops]", app="[/oops]", description="[bold]described",
                  steps=(MacroStep(Action.tap(5, 6), "tap [b]here[/b]"),))
    path = tmp_path / "m.json"
    path.write_text(export_json(macro), encoding="utf-8")
    assert tapwise("macro", "import", str(path)).returncode == 0
    for args in (("macro", "list"), ("macro", "show", "[/oops]")):
        out = tapwise(*args)
        assert out.returncode == 0, out.stdout + out.stderr
        assert "[/oops]" in out.stdout
        assert "\x1b" not in out.stdout, "raw escape bytes never reach the terminal"
        assert "\\x1b" in out.stdout, "they are shown as an escape instead"
    shown = tapwise("macro", "show", "[/oops]").stdout
    assert "tap [b]here[/b]" in shown and "[bold]described" in shown


def _damaged(path):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"not a database at all " * 50)


def _newer(path):
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
    conn.execute("INSERT INTO meta VALUES ('schema_version', '99')")
    conn.commit()
    conn.close()


COMMANDS = [("episodes",), ("macro", "list"), ("run", "look around", "--mode", "auto", "--max-steps", "1")]


@pytest.mark.parametrize("make, words", [(_damaged, "move it aside"), (_newer, "newer Tapwise")])
@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_a_damaged_or_newer_database_is_a_clear_message_from_every_command(make, words, command):
    db = load_settings()[0].database_path
    make(db)
    before = db.read_bytes()
    out = tapwise(*command)
    assert out.returncode == 2, out.stdout + out.stderr
    assert "Traceback" not in out.stdout + out.stderr
    assert words in " ".join((out.stdout + out.stderr).split())
    assert db.read_bytes() == before, "the database is left untouched"


def _without_write_permission() -> tuple[str, ...]:
    """A command prefix under which the folder's permission bits hold (root ignores them
    unless it gives up the capability to override them)."""
    if os.geteuid() != 0:
        return ()
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: cannot make a folder read-only for the test")
    drop = "-dac_override,-dac_read_search"
    return (setpriv, f"--bounding-set={drop}", f"--inh-caps={drop}", "--")


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_a_read_only_data_folder_is_reported_as_permissions_not_damage(tmp_path, command):
    db = load_settings()[0].database_path
    from app.storage import Store

    Store(db).close()
    before = db.read_bytes()
    db.parent.chmod(0o555)
    db.chmod(0o444)
    try:
        out = tapwise(*command, prefix=_without_write_permission())
    finally:
        db.parent.chmod(0o755)
        db.chmod(0o644)
    text = " ".join((out.stdout + out.stderr).split())
    assert out.returncode == 2, text
    assert "Traceback" not in text
    assert "permission" in text.lower() and "move it aside" not in text
    assert db.read_bytes() == before
