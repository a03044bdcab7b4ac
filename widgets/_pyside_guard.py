"""Guard against a reference-count bug of PySide6 6.12 on Python 3.11.

PySide6 6.12 returns ``None`` from every ``void`` C++ method without taking a new
reference, which is harmless on Python 3.12+ (``None`` is immortal there) but on 3.11
lowers ``None``'s count by one per call: a live window makes thousands of such calls a
second and the interpreter aborts with "none_dealloc: deallocating None" within seconds.

``ensure_none_is_immortal()`` probes for the bug with a few harmless calls and, only if
it is present, gives ``None`` a reference count so large that it can never reach zero
(the 3.12 behaviour).  It changes nothing else and does nothing on fixed versions.
"""

from __future__ import annotations

import ctypes
import logging
import sys

log = logging.getLogger(__name__)

_BOOST = 1 << 52
_done = False


def none_leaks_per_void_call() -> bool:
    """True when calling a ``void`` Qt method drops a reference to ``None``."""
    from PySide6.QtCore import QObject

    probe = QObject()
    before = sys.getrefcount(None)
    for _ in range(64):
        probe.setObjectName("probe")
    return sys.getrefcount(None) <= before - 32


def ensure_none_is_immortal() -> bool:
    """Apply the guard once if this PySide6 needs it; returns True when it was applied."""
    global _done
    if _done or sys.version_info >= (3, 12):
        return False
    _done = True
    if not none_leaks_per_void_call():
        return False
    refcnt = ctypes.c_ssize_t.from_address(id(None))
    refcnt.value += _BOOST
    log.info("PySide6 drops a reference to None per void call; None was made effectively immortal")
    return True
