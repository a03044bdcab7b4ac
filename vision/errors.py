"""Errors raised by the vision layer, each carrying a hint the user can act on, and their
base ``HintedError``, which the layers above share."""

from __future__ import annotations


class HintedError(RuntimeError):
    """An error that says what went wrong (``message``) and, when it can, what the user can do
    about it (``hint``, shown after a dash).  The vision layer's, the devices' and the LLM
    clients' errors are all of this kind."""

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message if not hint else f"{message} — {hint}")
        self.message = message
        self.hint = hint


class VisionError(HintedError):
    """Base class: something in the vision layer could not be done."""


class ImageError(VisionError):
    """An image could not be read or is unusable (corrupt, empty, absurdly large)."""


class HierarchyError(VisionError):
    """An accessibility dump could not be parsed."""


class BackendUnavailable(VisionError):
    """An optional backend (model file, extra package) is not installed."""
