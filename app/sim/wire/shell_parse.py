"""A small POSIX-sh tokenizer for the commands adb clients send to a phone.

It splits a command line into pipelines joined by ``;``, ``&&`` and ``||``, honours single
quotes, double quotes and backslashes exactly like ``sh`` (so quoted metacharacters stay
literal), expands ``$?`` and recognises simple redirections (``>``, ``>>``, ``2>``,
``2>&1``) and leading ``NAME=value`` assignments.  It runs nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

OPERATORS = (";", "&&", "||", "|", "&")


class ShellSyntaxError(ValueError):
    pass


@dataclass
class SimpleCommand:
    argv: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    stdout_path: str | None = None
    append: bool = False
    stderr_to_stdout: bool = False
    stderr_path: str | None = None
    pipe_to_next: bool = False


@dataclass
class Step:
    """A command plus the operator that decides whether the next one runs."""

    command: SimpleCommand
    then: str = ";"  # ';', '&&', '||' (how the *next* step is joined to this one)


_LAST_STATUS = "\x00?"  # placeholder for an unquoted or double-quoted $?


def _words(line: str) -> list[tuple[str, bool]]:
    """Split into (token, is_operator) pairs."""
    out: list[tuple[str, bool]] = []
    buf: list[str] = []
    has_word = False
    i, n = 0, len(line)

    def flush() -> None:
        nonlocal has_word
        if has_word:
            out.append(("".join(buf), False))
        buf.clear()
        has_word = False

    while i < n:
        c = line[i]
        if c == "'":
            j = line.find("'", i + 1)
            if j < 0:
                raise ShellSyntaxError("unterminated single quote")
            buf.append(line[i + 1 : j])
            has_word = True
            i = j + 1
        elif c == '"':
            i += 1
            has_word = True
            while True:
                if i >= n:
                    raise ShellSyntaxError("unterminated double quote")
                d = line[i]
                if d == '"':
                    i += 1
                    break
                if d == "\\" and i + 1 < n and line[i + 1] in '$`"\\\n':
                    buf.append(line[i + 1])
                    i += 2
                elif d == "$" and line.startswith("$?", i):
                    buf.append(_LAST_STATUS)
                    i += 2
                else:
                    buf.append(d)
                    i += 1
        elif c == "\\":
            if i + 1 < n:
                if line[i + 1] != "\n":
                    buf.append(line[i + 1])
                    has_word = True
                i += 2
            else:
                i += 1
        elif c in " \t\n":
            flush()
            i += 1
        elif c == "$" and line.startswith("$?", i):
            buf.append(_LAST_STATUS)
            has_word = True
            i += 2
        elif c in ";&|":
            flush()
            two = line[i : i + 2]
            if two in ("&&", "||"):
                out.append((two, True))
                i += 2
            else:
                out.append((c, True))
                i += 1
        elif c in "<>":
            # "2>" when the buffer is exactly "2" and unquoted is a stderr redirection
            if buf == ["2"] and c == ">":
                buf.clear()
                has_word = False
                op = "2>"
            else:
                flush()
                op = c
            i += 1
            if line.startswith(">", i) and op in (">",):
                op = ">>"
                i += 1
            if op == "2>" and line.startswith("&1", i):
                op = "2>&1"
                i += 2
            out.append((op, True))
        else:
            buf.append(c)
            has_word = True
            i += 1
    flush()
    return out


def parse(line: str) -> list[Step]:
    """Parse a command line into steps; raises ``ShellSyntaxError`` on bad quoting."""
    steps: list[Step] = []
    cmd = SimpleCommand()
    tokens = _words(line)
    k = 0
    while k < len(tokens):
        tok, is_op = tokens[k]
        if is_op and tok in (";", "&&", "||", "&", "|"):
            if cmd.argv or cmd.env:
                if tok == "|":
                    cmd.pipe_to_next = True
                steps.append(Step(cmd, "&&" if tok == "|" else (";" if tok == "&" else tok)))
            cmd = SimpleCommand()
        elif is_op and tok in (">", ">>", "2>", "<"):
            if k + 1 >= len(tokens) or tokens[k + 1][1]:
                raise ShellSyntaxError(f"syntax error: nothing after '{tok}'")
            target = tokens[k + 1][0]
            if tok in (">", ">>"):
                cmd.stdout_path, cmd.append = target, tok == ">>"
            elif tok == "2>":
                cmd.stderr_path = target
            k += 1
        elif is_op and tok == "2>&1":
            cmd.stderr_to_stdout = True
        elif not cmd.argv and "=" in tok and tok.split("=", 1)[0].isidentifier():
            name, value = tok.split("=", 1)
            cmd.env[name] = value
        else:
            cmd.argv.append(tok)
        k += 1
    if cmd.argv or cmd.env:
        steps.append(Step(cmd, ";"))
    return steps


def expand_status(word: str, status: int) -> str:
    return word.replace(_LAST_STATUS, str(status))
