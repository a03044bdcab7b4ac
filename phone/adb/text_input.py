"""Turning text into safe ``input text`` shell commands (and the ADB keyboard fallback).

``input text`` goes through the phone's ``sh`` and then Android's own ``%s``-means-space
rule, so each chunk is single-quoted (a quote becomes ``'\\''``), spaces become ``%s``,
a literal ``%s`` is split across two commands so it survives, and newlines and tabs
become key events.  Characters ``input text`` cannot type (anything outside printable
ASCII) need an IME that accepts broadcasts (ADB Keyboard).  Pure functions; no I/O.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass

ADB_KEYBOARD_IME = "com.android.adbkeyboard/.AdbIME"
ADB_KEYBOARD_HINT = (
    "typing characters outside ASCII needs the ADB Keyboard IME: install it "
    "(https://github.com/senzhk/ADBKeyBoard, `adb install ADBKeyboard.apk`), then "
    "`adb shell ime enable com.android.adbkeyboard/.AdbIME`"
)
MAX_CHUNK = 200

KEY_ENTER = 66
KEY_TAB = 61


@dataclass(frozen=True, slots=True)
class TypeText:
    """Type this (already shell-quoted) argument with ``input text``."""

    quoted: str


@dataclass(frozen=True, slots=True)
class PressKey:
    keycode: int


def is_typable(text: str) -> bool:
    """True when ``input text`` can type every character (printable ASCII, newline, tab)."""
    return all(32 <= ord(c) < 127 or c in "\n\t" for c in text)


def sh_quote(s: str) -> str:
    return "'" + s.replace("'", "'\\''") + "'"


def _encode_chunk(chunk: str) -> list[str]:
    """Encode one line for ``input text``; returns one or more raw arguments."""
    parts: list[str] = []
    cur: list[str] = []
    prev_literal_percent = False
    for c in chunk:
        if c == "s" and prev_literal_percent:
            parts.append("".join(cur))  # "%" then "s" in two commands: Android can't join them
            cur = []
        if c == " ":
            cur.append("%s")
            prev_literal_percent = False
        else:
            cur.append(c)
            prev_literal_percent = c == "%"
        if sum(len(p) for p in cur) >= MAX_CHUNK:
            parts.append("".join(cur))
            cur = []
            prev_literal_percent = False
    if cur:
        parts.append("".join(cur))
    return [p for p in parts if p]


def plan_input(text: str) -> list[TypeText | PressKey]:
    """The commands that type ``text`` (printable ASCII plus newline and tab)."""
    if not is_typable(text):
        raise ValueError("text has characters `input text` cannot type")
    steps: list[TypeText | PressKey] = []
    buf: list[str] = []

    def flush() -> None:
        if buf:
            steps.extend(TypeText(sh_quote(a)) for a in _encode_chunk("".join(buf)))
            buf.clear()

    for c in text:
        if c == "\n":
            flush()
            steps.append(PressKey(KEY_ENTER))
        elif c == "\t":
            flush()
            steps.append(PressKey(KEY_TAB))
        else:
            buf.append(c)
    flush()
    return steps


def ime_broadcast(text: str) -> str:
    """The shell command that makes ADB Keyboard type ``text`` (any Unicode)."""
    msg = base64.b64encode(text.encode("utf-8")).decode("ascii")
    return f"am broadcast -a ADB_INPUT_B64 --es msg {msg}"
