"""Screenshots for issue 27's Macros and "Share a run" at two window sizes: a macro after
Redo with its versions (an older one picked, Restore offered), Run on… a German dark
tablet while a step needs the user (no Approve), back on the phone as it was left, and
an exported run opened in headless Chromium.

Needs a real X display (the window is grabbed from the X server) and, for the exported
run, Debian's chromium.  From the repository root:

    xvfb-run -s "-screen 0 1700x1100x24" .venv/bin/python docs/screenshots/make_macro_shots.py 1024x700
    xvfb-run -s "-screen 0 1700x1100x24" .venv/bin/python docs/screenshots/make_macro_shots.py 1600x1000

Everything runs on the virtual phone, so the pictures are reproducible.
"""

from __future__ import annotations

import functools
import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
OUT = Path(__file__).resolve().parent

import widgets  # noqa: E402,F401  (PySide6 guard)

sys.path.insert(0, str(OUT))
from make_screenshots import grab, start_app  # noqa: E402  (the sibling script; run from anywhere)
from make_screenshots import pump as _pump  # noqa: E402

pump = functools.partial(_pump, must=False)  # a state not reached is seen in the shot, not raised


def recorded_macro():  # type: ignore[no-untyped-def]
    """Open Settings, Network & internet, Airplane mode, recorded on the virtual phone."""
    from agent.macros.recorder import Recorder
    from agent.macros.start import fresh_launch_step
    from phone.virtual.phone import VirtualPhone
    from tests.macros.sim_support import record_taps

    phone = VirtualPhone()
    phone.open_app("Settings")
    rec = Recorder()
    rec.begin_with(fresh_launch_step("com.android.settings", "Settings"), "com.android.settings")
    record_taps(phone, ("Network & internet", "Airplane mode"), rec)
    return rec.build("airplane on", description="turn on airplane mode")


def main() -> int:
    app, tmp, size, width, height = start_app("tapwise-macro-shots-", private=True)
    from agent.device import Key
    from agent.types import DecisionKind, Fingerprint, Target
    from app.gui.devices import VIRTUAL_CHOICE
    from app.gui.window import MainWindow
    from app.settings import Settings, VisionSettings
    from app.storage import Store

    settings = Settings(data_dir=tmp, vision=VisionSettings(use_hierarchy="only"))
    store = Store(settings.database_path)
    macro = store.save_macro(recorded_macro())
    win = MainWindow(settings, "sim", discover=False, store=store)
    win.resize(width, height)
    win.move(0, 0)
    win.show()
    win.connect_device(VIRTUAL_CHOICE)
    panel = win.macro_panel
    pump(30, lambda: panel.list.count() == 1 and win.session.device is not None and win.view.parse is not None)
    win.macro_dock.raise_()
    panel.list.setCurrentRow(0)

    # ---- Redo step 3 on the home screen, then look at v1 -------------------------------
    from tests.gui.e2e_support import click_mirror, run_on

    pump(20, lambda: win.view.parse is not None and "Settings" in win.view.parse.description)
    panel.steps.setCurrentRow(2)
    panel.step_redemo.click()
    settings_icon = next(e for e in win.view.parse.elements if (e.text or e.label) == "Settings")
    click_mirror(win, settings_icon.rect.center)
    pump(20, lambda: panel.versions.count() == 2)
    panel.pick_version(1)
    grab(win, f"{size}-macro-versions.png")
    panel.restore.click()  # v1 is back, as v3
    pump(10, lambda: "v3" in panel.list.item(0).text())

    # ---- Run on… a dark German tablet; a step that needs the user -------------------------
    gizmo = replace(macro.steps[2], description="tap the gizmo",
                    target=Target(element_id="zzz", description="tap the gizmo",
                                  fingerprint=Fingerprint(text="Gizmo", kind="image", block_role="x")))
    from agent.macros.editing import replace_step

    store.save_macro(replace_step(store.load_macro(macro.id), 2, gizmo))
    win.macros.refresh()
    pump(10, lambda: "v4" in panel.list.item(0).text())
    phone = win.session.device
    win.session.executor.call(lambda: phone.open_app("Clock"))  # the phone as the user left it
    panel.list.setCurrentRow(0)
    run_on(win, profile="tablet", theme="dark", language="de")
    pump(60, lambda: win.macros.needs_you is not None)
    win.agent_dock.raise_()
    grab(win, f"{size}-run-on-needs-you.png")
    win.decision_bar.trigger(DecisionKind.ABORT)
    pump(30, lambda: win.macros.result is not None)
    box = win.device_combo
    i = next(i for i in range(box.count()) if box.itemData(i) == VIRTUAL_CHOICE)
    box.setCurrentIndex(i)
    box.activated.emit(i)
    pump(20, lambda: win.session.device is phone)
    pump(5, lambda: win.view.parse is not None and "deskclock" in win.view.parse.description)
    win.macro_dock.raise_()
    grab(win, f"{size}-run-on-back.png")

    # ---- a replay on the phone, exported and opened in Chromium ---------------------------
    win.session.executor.call(lambda: phone.key(Key.HOME))
    pump(20, lambda: win.view.parse is not None and "launcher" in win.view.parse.description)
    pump(2)  # the mirror shows the home screen before the replay's first frame is taken
    store.save_macro(store.load_macro(macro.id, 1))  # the good version back
    win.macros.refresh()
    pump(10, lambda: "v5" in panel.list.item(0).text())
    panel.list.setCurrentRow(0)
    win.macros.result = None
    panel.run.click()
    pump(60, lambda: win.macros.result is not None)
    episode = win.macros.result.episode
    win.close()
    pump(1)
    shot_html(store, episode.id, size, width, height, tmp)
    store.close()
    app.quit()
    return 0


def shot_html(store, episode_id: str, size: str, width: int, height: int, tmp: Path) -> None:  # type: ignore[no-untyped-def]
    from app.episode_html import export_html
    from tests.share.headless_chromium import Chromium, chromium_binary

    binary = chromium_binary()
    if binary is None:
        print("no chromium: the exported run is not shot")  # noqa: T201
        return
    page = export_html(store, episode_id, tmp / "run.html")
    browser = Chromium(binary, width, height)
    try:
        browser.open(page)
        browser.screenshot(OUT / f"{size}-exported-run.png", width, height)
        print("saved", OUT / f"{size}-exported-run.png")  # noqa: T201
    finally:
        browser.close()


if __name__ == "__main__":
    sys.exit(main())
