"""Render the application icon (an SVG) to PNGs in a freedesktop ``hicolor`` theme tree.

Used at build time only: ``python packaging/render_icons.py SVG OUT_DIR [SIZES...]``
writes ``OUT_DIR/hicolor/<n>x<n>/apps/tapwise.png`` for each size (48, 128, 256 by
default) and copies the SVG to ``OUT_DIR/hicolor/scalable/apps/tapwise.svg``.  It uses
PySide6's QtSvg on Qt's offscreen platform, so it needs no display.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

DEFAULT_SIZES = (48, 128, 256)


def render(svg: Path, out_dir: Path, sizes: tuple[int, ...] = DEFAULT_SIZES, name: str = "tapwise") -> list[Path]:
    """Write one PNG per size (plus the scalable SVG); returns the PNG paths."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])  # noqa: F841 - painting needs one
    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise ValueError(f"{svg} is not a valid SVG image")
    written = []
    for n in sizes:
        image = QImage(n, n, QImage.Format.Format_ARGB32_Premultiplied)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        renderer.render(painter)
        painter.end()
        target = out_dir / "hicolor" / f"{n}x{n}" / "apps" / f"{name}.png"
        target.parent.mkdir(parents=True, exist_ok=True)
        if not image.save(str(target), "PNG"):
            raise OSError(f"could not write {target}")
        written.append(target)
    scalable = out_dir / "hicolor" / "scalable" / "apps" / f"{name}.svg"
    scalable.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(svg, scalable)
    return written


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        sys.stderr.write("usage: render_icons.py SVG OUT_DIR [SIZE...]\n")
        return 2
    sizes = tuple(int(s) for s in argv[2:]) or DEFAULT_SIZES
    for path in render(Path(argv[0]), Path(argv[1]), sizes):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
