"""Headless Qt for the GUI tests, failing any test that leaks a window or a thread."""

from __future__ import annotations

import os
import threading

os.environ["QT_QPA_PLATFORM"] = "offscreen"
os.environ.setdefault("QT_LOGGING_RULES", "qt.qpa.*=false")
# The window tests drive the virtual phone inside the test process (fast, and its state is
# readable); tests/phone_adb/test_window_served_phone.py covers the served, real-phone path.
os.environ.setdefault("TAPWISE_DEVICE__VIRTUAL_PHONE", "window")

import pytest

pytest.importorskip("PySide6", reason="the GUI tests need PySide6")

from tests.gui.samples import sample_latent, sample_parse, sample_proposal, sample_screen  # noqa: F401

_BENIGN_THREAD_PREFIXES = ("pytest_timeout", "QDBusConnection", "asyncio_")


def _threads() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t is not threading.main_thread()}


@pytest.fixture(autouse=True)
def no_leaked_windows_or_threads(qapp):
    """Every test must close the windows it opened and join the threads it started."""
    before_threads = _threads()
    before_windows = {id(w) for w in qapp.topLevelWidgets() if w.isVisible()}
    yield
    qapp.processEvents()
    leaked_windows = [
        w for w in qapp.topLevelWidgets() if w.isVisible() and id(w) not in before_windows and w.objectName() != "qtbot_widget"
    ]
    for w in leaked_windows:
        w.close()
    deadline = threading.Event()
    leaked = []
    for _ in range(50):  # give finishing threads up to ~2.5 s to end
        leaked = [t for t in _threads() - before_threads if t.is_alive() and not t.name.startswith(_BENIGN_THREAD_PREFIXES)]
        if not leaked:
            break
        deadline.wait(0.05)
        qapp.processEvents()
    assert not leaked_windows, f"test left windows open: {[type(w).__name__ for w in leaked_windows]}"
    assert not leaked, f"test left threads running: {[t.name for t in leaked]}"


@pytest.fixture
def screen():
    return sample_screen()


@pytest.fixture
def parse():
    return sample_parse()
