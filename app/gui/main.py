"""Entry point of the workbench window: ``launch()`` is what ``tapwise`` (no subcommand) calls."""

from __future__ import annotations

import logging
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from app.gui.window import MainWindow
    from app.settings import Settings

log = logging.getLogger(__name__)


#: How often (seconds) Python hands the GIL between threads.  The default 5 ms lets busy
#: worker threads (phone rendering, parsing, the agent loop) hold the GUI thread off for
#: a few hundred milliseconds; 1 ms keeps the window responsive at a small cost.
GIL_SWITCH_INTERVAL_S = 0.001


def configure_process() -> None:
    """Process-wide settings the window needs; called once before the window is built."""
    sys.setswitchinterval(GIL_SWITCH_INTERVAL_S)


def build_window(settings: Settings, device_hint: str | None = None, **window_options: Any) -> MainWindow:
    """The workbench window, with the virtual phone's process started first when it will be
    the phone shown, so that it starts while the window is being built."""
    from app.gui.devices import DeviceOpener, start_early

    early = start_early(settings.device, device_hint)
    from app.gui.window import MainWindow  # the heavy import runs while the phone starts

    opener = DeviceOpener(early)
    win = MainWindow(settings, device_hint, device_factory=opener, **window_options)
    win.destroyed.connect(lambda *_: opener.discard())
    return win


def launch(settings: Settings | None = None, device_hint: str | None = None) -> int:
    """Open the workbench and run the Qt event loop; returns the exit status."""
    from PySide6.QtWidgets import QApplication

    from widgets.notifications import Level

    configure_process()
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("Tapwise")
    app.setOrganizationName("Tapwise")
    problem = None
    if settings is None:
        from app.settings import load_settings

        settings, problem = load_settings()
    win = build_window(settings, device_hint)
    if problem:
        win.notify(Level.WARNING, "Settings file problem: defaults in use.", problem)
    win.show()
    return int(app.exec())
