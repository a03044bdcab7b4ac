"""What every test of the window on a phone over adb starts with: Qt offscreen, the module
skipped without PySide6 or pytest-qt, and its marks (``adb``, ``gui``, and a skip when the
official scrcpy server jar is not installed).

Import it first (``import tests.phone_adb.window_over_adb as over_adb``), before anything
that imports Qt, and set ``pytestmark = over_adb.MARKS`` (plus any marks of the module's own).
"""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
pytest.importorskip("PySide6", reason="the window needs PySide6")
pytest.importorskip("pytestqt", reason="the window tests need pytest-qt")

from phone.adb import scrcpy_server_jar as jars


def has_jar() -> bool:
    """Whether the official scrcpy server jar is installed (the mirror needs it)."""
    try:
        jars.find_server_jar()
    except jars.ScrcpyJarError:
        return False
    return True


MARKS = [
    pytest.mark.adb,
    pytest.mark.gui,
    pytest.mark.skipif(not has_jar(), reason=f"no official scrcpy server jar: {jars.INSTALL_HINT}"),
]
