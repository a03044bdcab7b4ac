"""Screenshots of automatic exploration (issue 40, part 4) at two window sizes (1024x700,
1600x1000): a fresh window on the virtual phone (served in its own process, as `tapwise`
opens it) explores its apps by itself on a second, hidden virtual phone; the Knowledge
dock's "App maps" tab shows the first app's map while the next one is being explored
(its progress bar), and the status bar says which app is being explored.

Needs a real X display; the window is grabbed from the X server.  From the repository root:

    Xvfb :98 -screen 0 1920x1200x24 -nolisten tcp &
    DISPLAY=:98 .venv/bin/python docs/screenshots/make_auto_explore_shots.py 1024x700
    DISPLAY=:98 .venv/bin/python docs/screenshots/make_auto_explore_shots.py 1600x1000

Uses a throwaway database, so the pictures are reproducible (up to how far the exploration
got when the picture was taken).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from make_screenshots import grab, pump, start_app, virtual_window  # noqa: E402  (the sibling script)

import widgets  # noqa: E402,F401  (PySide6 guard)


def main() -> int:
    _app, tmp, size, width, height = start_app("tapwise-auto-explore-shots-")
    from PySide6.QtCore import Qt

    from app.settings import AgentSettings, Settings, VisionSettings

    settings = Settings(data_dir=tmp, vision=VisionSettings(use_hierarchy="only"),
                        agent=AgentSettings(explore_automatically=True))
    win = virtual_window(settings, width, height)
    auto = win.auto_explore
    auto.delay_ms = 0
    win.knowledge_dock.show()
    win.knowledge_dock.raise_()
    win.resizeDocks([win.knowledge_dock], [int(width * 0.52)], Qt.Orientation.Horizontal)
    maps = win.knowledge_panel.maps
    win.knowledge_panel.tabs.setCurrentWidget(maps)
    auto.check()
    # the first app mapped (Settings: the largest), the next one being explored
    pump(900, until=lambda: len(auto.explored) >= 1 and auto.running and maps.app_box.count() >= 1)
    pump(20, until=lambda: maps.progress.value() >= 15)
    grab(win, f"{size}-auto-explore.png")
    auto.shutdown()
    win.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
