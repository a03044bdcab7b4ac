"""Errors raised by the vision layer, each carrying a hint the user can act on."""

from __future__ import annotations


class VisionError(RuntimeError):
    """Base class: something in the vision layer could not be done."""

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message if not hint else f"{message} — {hint}")
        self.message = message
        self.hint = hint


class ImageError(VisionError):
    """An image could not be read or is unusable (corrupt, empty, absurdly large)."""


class HierarchyError(VisionError):
    """An accessibility dump could not be parsed."""


class BackendUnavailable(VisionError):
    """An optional backend (model file, extra package) is not installed."""
