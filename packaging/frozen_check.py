"""Which frozen modules of a PyInstaller build should not be in the desktop bundle.

    python packaging/frozen_check.py build/pyinstaller/tapwise/PYZ-00.toc

Prints one module name per line (nothing when the bundle is clean): test *packages*
(``foo.tests`` as a package, and everything inside one), pytest and hypothesis, and the
heavy optional extras.  A module that is merely called ``tests`` is real code and stays
(``jinja2.tests`` holds Jinja's template tests).  Used by ``packaging/build.sh``.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable

HEAVY = frozenset({"tests", "pytest", "_pytest", "hypothesis", "torch", "torchvision", "ultralytics", "open_clip",
                   "paddle", "llama_cpp", "sentence_transformers", "transformers", "matplotlib", "PyQt5", "PyQt6",
                   "PySide2"})


def unwanted(entries: Iterable[tuple[str, str]]) -> list[str]:
    """The names among ``(module name, source path)`` entries that should be left out."""
    out = []
    for name, path in entries:
        parts = name.split(".")
        package = str(path).endswith(("__init__.py", "__init__.pyc"))
        if parts[0] in HEAVY or "tests" in parts[1:-1] or (parts[-1] == "tests" and package):
            out.append(name)
    return out


def main(toc_path: str) -> int:
    with open(toc_path, encoding="utf-8") as fh:
        toc = ast.literal_eval(fh.read())
    for name in unwanted((entry[0], entry[1]) for entry in toc[1]):
        sys.stdout.write(name + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
