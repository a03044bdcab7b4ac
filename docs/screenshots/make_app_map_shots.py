"""Screenshots of the app maps (issue 29) at two window sizes (1024x700, 1600x1000): the
window explores the virtual phone's Settings with "Explore this app", then the Knowledge
dock's "App maps" tab shows the map with a screen selected (its screenshot and elements)
and with an arrow selected (the element that leads there, outlined); last, a macro of one
tap (the Settings icon) is completed from that map in the Macros tab's "Complete from map"
dialog (the map's steps towards "Turn on dark theme", marked, not yet saved).

Needs a real X display; the window is grabbed from the X server.  From the repository root:

    xvfb-run -s "-screen 0 1700x1100x24" .venv/bin/python docs/screenshots/make_app_map_shots.py 1024x700
    xvfb-run -s "-screen 0 1700x1100x24" .venv/bin/python docs/screenshots/make_app_map_shots.py 1600x1000

Uses the virtual phone and a throwaway database, so the pictures are reproducible.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
OUT = Path(__file__).resolve().parent

from make_screenshots import grab, pump, start_app  # noqa: E402  (the sibling script; run from anywhere)

import widgets  # noqa: E402,F401  (PySide6 guard)


def main() -> int:
    app, tmp, size, width, height = start_app("tapwise-map-shots-")
    from PySide6.QtCore import Qt

    from app.gui.devices import VIRTUAL_CHOICE
    from app.gui.window import MainWindow
    from app.settings import Settings, VisionSettings

    win = MainWindow(Settings(data_dir=tmp, vision=VisionSettings(use_hierarchy="only")), "sim", discover=False)
    win.move(0, 0)
    win.resize(width, height)
    win.show()
    win.connect_device(VIRTUAL_CHOICE)
    pump(30, until=lambda: win.view.frame is not None)
    win.session.executor.call(lambda: win.session.device.open_app("Settings"))
    win.knowledge_dock.show()
    win.knowledge_dock.raise_()
    win.resizeDocks([win.knowledge_dock], [int(width * 0.52)], Qt.Orientation.Horizontal)
    maps = win.knowledge_panel.maps
    win.knowledge_panel.tabs.setCurrentWidget(maps)
    maps.explore_button.click()
    pump(240, until=lambda: maps.explore_button.isEnabled() and maps.app_box.count() >= 1)
    pic = maps._current
    assert pic is not None, "the exploration left no map"
    network = next(s.key for s in pic.screens if s.title.startswith("Network"))
    maps.screen_items[network].setSelected(True)
    grab(win, f"{size}-app-map-screen.png")
    maps.scene.clearSelection()
    edge = next(e for e in pic.edges if e.src == network and e.dst in maps.screen_items and e.dst != e.src
                and e.name.startswith("Internet"))
    maps.show_edge(edge.src, edge.element)
    grab(win, f"{size}-app-map-edge.png")
    complete_from_map(win, size)
    win.knowledge.shutdown()
    win.close()
    return 0


def complete_from_map(win, size: str) -> None:  # type: ignore[no-untyped-def]
    """A macro recorded on the mirror (one tap: the Settings icon), completed from the map
    just made towards "Turn on dark theme": the dialog with the map's steps, unsaved."""
    from agent.macros.recorder import Observation, Recorder
    from agent.types import Action
    from phone.virtual.phone import VirtualPhone
    from vision.config import PipelineConfig
    from vision.pipeline import ScreenParser

    parser = ScreenParser(PipelineConfig(mode="tree", ocr="none", detector="none", icons="none"))
    phone = VirtualPhone()
    shot = phone.screenshot(with_hierarchy=True)
    before = Observation(parser.parse(shot), shot.image, shot.foreground_package)
    c = next(e for e in before.parse.elements if "Settings" in (e.text, e.label)).rect.center
    phone.tap(c.x, c.y)
    after = phone.screenshot(with_hierarchy=True)
    rec = Recorder()
    rec.record(Action.tap(c.x, c.y), before, Observation(parser.parse(after), after.image, after.foreground_package))
    win.store().save_macro(rec.build("Turn on dark theme"))
    win.macros.refresh()
    win.macro_dock.show()
    win.macro_dock.raise_()
    panel = win.macro_panel
    pump(20, until=lambda: panel.list.count() >= 1)
    panel.list.setCurrentRow(0)
    panel.complete.click()
    dialog = win.macros.dialog
    pump(60, until=lambda: dialog is not None and dialog.save.isEnabled())
    dialog.move(win.frameGeometry().x() + 60, win.frameGeometry().y() + 80)
    pump(0.5)
    grab(dialog, f"{size}-macro-complete-from-map.png")
    dialog.reject()


if __name__ == "__main__":
    raise SystemExit(main())
