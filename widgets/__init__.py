"""Reusable Qt views for Tapwise.

Every widget here takes plain data (``vision.types`` / ``agent.types``) and emits
intent signals.  Widgets never touch a device, a file, a database or the network;
the window in ``app.gui`` wires them to the workers that do.

Importing this package applies ``_pyside_guard`` (a work-around for a PySide6 6.12
reference-count bug on Python 3.11) before any widget is built.
"""

from widgets._pyside_guard import ensure_none_is_immortal

ensure_none_is_immortal()
