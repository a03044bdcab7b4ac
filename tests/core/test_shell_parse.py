"""The virtual phone's shell reads command lines the way ``sh`` does: quoted or escaped
operator characters are words, ``$?`` is not expanded inside single quotes, and
``2>`` is a redirection only when written together."""

from __future__ import annotations

import pytest

from phone.virtual.wire.shell_parse import ShellSyntaxError, expand_status, parse


def argv(line: str) -> list[list[str]]:
    return [[expand_status(w, 7) for w in step.command.argv] for step in parse(line)]


def test_quoted_and_escaped_operator_characters_are_words():
    assert argv("input text '|' \"&&\" \\; a\\>b") == [["input", "text", "|", "&&", ";", "a>b"]]
    assert argv("echo 'a; b' \"c | d\"") == [["echo", "a; b", "c | d"]]


def test_operators_split_commands_and_say_how_the_next_one_runs():
    steps = parse("a && b || c; d | e & f")
    assert [s.command.argv[0] for s in steps] == ["a", "b", "c", "d", "e", "f"]
    assert [s.then for s in steps] == ["&&", "||", ";", "&&", ";", ";"]
    assert steps[3].command.pipe_to_next


def test_last_status_expands_outside_single_quotes_only():
    assert argv("echo $? \"$?\" '$?' it\"'\"s$?") == [["echo", "7", "7", "$?", "it's7"]]


def test_redirections_and_assignments():
    cmd = parse("A=1 B='x y' run > out 2>&1")[0].command
    assert cmd.env == {"A": "1", "B": "x y"} and cmd.argv == ["run"]
    assert cmd.stdout_path == "out" and cmd.stderr_to_stdout and not cmd.append
    assert parse("run >> log 2>/dev/null")[0].command.stderr_path == "/dev/null"
    spaced = parse("echo 2 > f")[0].command
    assert spaced.argv == ["echo", "2"] and spaced.stdout_path == "f" and spaced.stderr_path is None


@pytest.mark.parametrize("line", ["echo 'open", 'echo "open', "echo >", "a ;; b", "echo done\\"])
def test_bad_lines_are_syntax_errors(line):
    with pytest.raises(ShellSyntaxError):
        parse(line)
