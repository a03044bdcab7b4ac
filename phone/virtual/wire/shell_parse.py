"""Parses the command lines adb clients send to a phone's shell into simple commands.

``shlex`` does the POSIX quoting (single and double quotes, backslashes) and splits
off the operators; this module joins the words into commands separated by ``;``,
``&&``, ``||``, ``|`` and ``&``, with simple redirections (``>``, ``>>``, ``2>``,
``2>&1``), leading ``NAME=value`` assignments and ``$?``.  It runs nothing.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field


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


_LAST_STATUS = "\x00?"  # placeholder for $?, expanded when the command runs
_CONTROL = (";", "&&", "||", "&", "|")
_REDIRECT = (">", ">>", "<")
_OPERATOR_CHARS = frozenset(";&|<>")
# Marks put into the line before shlex sees it, so its words still tell what was quoted:
# one after every quote character (shlex drops a quote that delimits, keeps a literal
# one), one before a backslash that escapes an operator character and one between "2"
# and ">".  They are taken out of every word again.
_SQ, _DQ, _TWO, _ESC = "\x01", "\x02", "\x03", "\x04"


def _words(line: str) -> list[tuple[str, bool]]:
    """Split into (token, is_operator) pairs: ``shlex`` does the POSIX quoting and splits
    off the operator characters; quoted operator characters stay words."""
    marked = line.replace("'", "'" + _SQ).replace('"', '"' + _DQ).replace("2>", "2" + _TWO + ">")
    marked = re.sub(r"\\(?=[;&|<>])", lambda m: _ESC + "\\", marked)
    lex = shlex.shlex(marked, posix=True, punctuation_chars=";&|<>")
    lex.whitespace_split = True
    lex.commenters = ""
    try:
        raw = list(lex)
    except ValueError as exc:  # "No closing quotation", "No escaped character"
        raise ShellSyntaxError(f"syntax error: {str(exc).lower()}") from None
    out: list[tuple[str, bool]] = []
    k = 0
    while k < len(raw):
        tok, nxt = raw[k], raw[k + 1] if k + 1 < len(raw) else ""
        if tok == "2" + _TWO and nxt == ">&" and raw[k + 2:k + 3] == ["1"]:
            out.append(("2>&1", True))
            k += 3
            continue
        if tok == "2" + _TWO and nxt == ">":
            out.append(("2>", True))
        elif tok in _CONTROL or tok in _REDIRECT:
            out.append((tok, True))
        elif set(tok) <= _OPERATOR_CHARS:
            raise ShellSyntaxError(f"syntax error near '{tok}'")
        else:
            out.append((_unmark(tok), False))
        k += 1 + (out[-1] == ("2>", True))
    return out


def _unmark(word: str) -> str:
    """Take the marks out of a word, putting the ``$?`` placeholder where it is not
    single-quoted.  A mark right after a quote character is a literal quote's."""
    out: list[str] = []
    single = False
    i = 0
    while i < len(word):
        c = word[i]
        if c in (_SQ, _DQ, _TWO, _ESC):
            if c == _SQ and not (out and out[-1] == "'"):
                single = not single
            i += 1
        elif c == "$" and word.startswith("$?", i) and not single:
            out.append(_LAST_STATUS)
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


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
