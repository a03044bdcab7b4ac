"""Locate files under ``resources/`` from a source checkout or an installed wheel.

In a checkout the folder is ``<repo>/resources``; the wheel maps it to
``vision/_resources`` (see ``pyproject.toml``).  This module only resolves paths: it
never downloads, creates or opens files.
"""

from __future__ import annotations

import os
from pathlib import Path

_ENV_OVERRIDE = "TAPWISE_RESOURCES"


def resources_dir() -> Path | None:
    """The ``resources`` folder, or ``None`` when neither layout is present.

    ``$TAPWISE_RESOURCES`` wins when it names an existing folder (tests, bundles).
    """
    override = os.environ.get(_ENV_OVERRIDE)
    if override and Path(override).is_dir():
        return Path(override)
    here = Path(__file__).resolve().parent
    for candidate in (here / "_resources", here.parent / "resources"):
        if candidate.is_dir():
            return candidate
    return None


def resource_path(*parts: str) -> Path | None:
    """``resources/<parts...>`` if that file or folder exists, else ``None``."""
    root = resources_dir()
    if root is None:
        return None
    path = root.joinpath(*parts)
    return path if path.exists() else None


def model_path(name: str) -> Path | None:
    """A shipped model file (``resources/models/<name>``), or ``None`` if absent."""
    return resource_path("models", name)
