"""Icons for the widgets, from qtawesome's bundled icon fonts, and the panels' icon buttons.

Only builds ``QIcon`` objects and buttons; an unknown icon name gives an empty icon and a log line
rather than an exception, so a missing glyph never takes down a panel.
"""

from __future__ import annotations

import logging

from PySide6.QtGui import QColor, QIcon
from PySide6.QtWidgets import QPushButton

log = logging.getLogger(__name__)


def icon(name: str, color: str | QColor | None = None) -> QIcon:
    """A qtawesome icon such as ``"mdi6.check"``; empty when the font lacks it."""
    import qtawesome

    try:
        if color is None:
            return qtawesome.icon(name)
        return qtawesome.icon(name, color=QColor(color))
    except Exception as exc:  # qtawesome raises a bare Exception for unknown names
        log.warning("icon %s unavailable: %s", name, exc)
        return QIcon()


def button(icon_name: str, text: str, tip: str) -> QPushButton:
    """A push button with the icon ``icon_name``, its words (may be empty: icon only) and
    the tooltip that says what it does."""
    b = QPushButton(icon(icon_name), text)
    b.setToolTip(tip)
    return b
