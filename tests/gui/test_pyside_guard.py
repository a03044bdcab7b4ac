"""The guard keeps None alive however many void Qt calls the window makes."""

from __future__ import annotations

import sys

from PySide6.QtCore import QObject

import widgets  # noqa: F401  (applies the guard)


def test_many_void_qt_calls_do_not_exhaust_none():
    obj = QObject()
    for _ in range(20_000):  # more than None's natural reference count on Python 3.11
        obj.setObjectName("x")
    assert sys.getrefcount(None) > 1000
