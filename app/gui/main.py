"""Entry point of the workbench window: ``launch()`` is what ``tapwise`` (no subcommand) calls."""

from __future__ import annotations

import logging
import sys
from typing import Any

log = logging.getLogger(__name__)


#: How often (seconds) Python hands the GIL between threads.  The default 5 ms lets busy
#: worker threads (phone rendering, parsing, the agent loop) hold the GUI thread off for
#: a few hundred milliseconds; 1 ms keeps the window responsive at a small cost.
GIL_SWITCH_INTERVAL_S = 0.001


def configure_process() -> None:
    """Process-wide settings the window needs; called once before the window is built."""
    sys.setswitchinterval(GIL_SWITCH_INTERVAL_S)


def launch(settings: Any = None, device_hint: str | None = None) -> int:
    """Open the workbench and run the Qt event loop; returns the exit status."""
    from PySide6.QtWidgets import QApplication

    from app.gui.window import MainWindow
    from widgets.notifications import Level

    configure_process()
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("Tapwise")
    app.setOrganizationName("Tapwise")
    problem = None
    if settings is None:
        from app.settings import load_settings

        settings, problem = load_settings()
    win = MainWindow(settings, device_hint)
    if problem:
        win.notify(Level.WARNING, "Settings file problem: defaults in use.", problem)
    win.show()
    return int(app.exec())
