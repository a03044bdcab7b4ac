"""Screenshots of the record of a run, taken the way a person would see them: the real
window on the virtual phone served in its own process (adb, scrcpy v3), a task stepped
through with a scripted model (approved on the decision bar), "Record a video" on.  The
Steps tab then shows the toast that flashed after "Call", the Video tab plays the run from
that step, and the run's HTML export shows the video with a marker per step in a real
headless Chromium.  Run under Xvfb (the window is grabbed from the X screen with
ImageMagick's ``import``), at 1024x700 and 1600x1000:

    Xvfb :93 -screen 0 1920x1200x24 -nolisten tcp &
    DISPLAY=:93 PYTHONPATH=. .venv/bin/python docs/screenshots/make_record_shots.py

The scripted model answers from the screen in its prompt: open Contacts, open Carla's
card, call — and "done" only once the screen's description says what flashed.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
OUT = Path(__file__).resolve().parent
GOAL = "Give Carla Mendes a call"  # not a task's wording: the agent itself must say when it is done


def pump(seconds: float, until: Any = None) -> None:
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    end = time.time() + seconds
    while time.time() < end:
        app.processEvents()  # type: ignore[union-attr]
        if until is not None and until():
            return
        time.sleep(0.01)
    if until is not None:
        raise TimeoutError("the window did not reach the expected state")


def shot(win: Any, name: str) -> Path:
    """The window as the X screen shows it (ImageMagick), cropped to the window."""
    pump(0.8)
    g = win.frameGeometry()
    path = OUT / name
    subprocess.run(["import", "-window", "root", "-crop", f"{g.width()}x{g.height()}+{g.x()}+{g.y()}", str(path)],
                   check=True, timeout=60)
    print(path)  # noqa: T201 - a script's output
    return path


def run_once(width: int, height: int, tmp: Path) -> tuple[str, Path]:
    from PySide6.QtWidgets import QApplication

    from app.gui.devices import VIRTUAL_CHOICE
    from app.gui.window import MainWindow
    from app.settings import DeviceSettings, LLMSettings, RecordSettings, Settings, VisionSettings
    from evaluation.scripted_model import ScriptedLLMServer
    from tests.record.local_mirror import answer  # the scripted model the window test uses too

    server = ScriptedLLMServer(models=("scripted:latest",), responder=answer).start()
    settings = Settings(data_dir=tmp, llm=LLMSettings(ollama_host=server.url, model="scripted:latest", timeout_s=30),
                        vision=VisionSettings(use_hierarchy="only"), device=DeviceSettings(virtual_phone="process"),
                        record=RecordSettings(video=True, flashes=True))
    win = MainWindow(settings, "sim", discover=False)
    win.resize(width, height)
    win.move(0, 0)
    win.show()
    win.connect_device(VIRTUAL_CHOICE)
    pump(60, lambda: win.view.frame is not None)
    pump(3)
    tp = win.task_panel
    tp.set_models(["scripted:latest"], current="scripted:latest")
    tp.goal.setPlainText(GOAL)
    tp.planner.setCurrentIndex(tp.planner.findData("zeroshot-"))
    assert tp.record.isChecked(), "the Record box follows the settings"
    tp.start.click()
    rec_seen = False
    for _ in range(12):  # approve each step as a person would, on the decision bar
        pump(120, lambda: win.decision_bar.enabled or not win.run.active)
        if not win.run.active:
            break
        rec_seen = rec_seen or tp.rec.isVisible()
        if rec_seen and width == 1024 and not (OUT / "1024x700-recording.png").exists():
            shot(win, "1024x700-recording.png")
        pump(1.0)
        win.approve()
        pump(30, lambda: not win.decision_bar.enabled)
    pump(60, lambda: not win.run.active)
    assert rec_seen, "the REC line showed while the run was recorded"
    section = win.run.section
    pump(30, lambda: win.timeline.video_episode(section) is not None)
    steps = [win.timeline.step(i, section) for i in range(win.timeline.count(section))]
    flashed = next(s for s in steps if s is not None and s.transients)
    win.timeline_dock.raise_()
    win.timeline.select_step(flashed.index, section)
    win.timeline.tabs.setCurrentIndex(0)
    shot(win, f"{width}x{height}-steps-flash.png")
    win.timeline.details.anchorClicked.emit(__import__("PySide6.QtCore", fromlist=["QUrl"]).QUrl("play:step"))
    pump(20, lambda: win.timeline.video.position.value() > 0)
    pump(1.5)
    shot(win, f"{width}x{height}-steps-video.png")
    episode_id = win.timeline.video_episode(section) or ""
    store_path = win.session.store().path
    win.close()
    pump(2)
    server.stop()
    QApplication.processEvents()
    return episode_id, store_path


def ffprobe_seconds(path: Path) -> float | None:
    """Debian's ffprobe's reading of the MP4's duration (None without ffprobe)."""
    import shutil

    exe = shutil.which("ffprobe")
    if exe is None:
        return None
    out = subprocess.run([exe, "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", str(path)],
                         capture_output=True, text=True, timeout=60)
    return float(out.stdout.strip()) if out.stdout.strip() else None


def export_shots(episode_id: str, store_path: Path, tmp: Path) -> None:
    from app.episode_html import export_html
    from app.run_record import video_of
    from app.storage import Store
    from tests.share.headless_chromium import Chromium, chromium_binary

    store = Store(store_path)
    try:
        page = export_html(store, episode_id, tmp / "run.html")
        episode = store.load_episode(episode_id)
        video = video_of(store, episode)
    finally:
        store.close()
    wall = (episode.finished_at or 0.0) - episode.started_at
    probed = ffprobe_seconds(video.path) if video is not None else None
    print(f"the run recorded in the window: wall time {wall:.3f} s, ffprobe {probed} s"  # noqa: T201
          f" ({video.path if video is not None else 'no video'})")
    binary = chromium_binary()
    if binary is None:
        print("no chromium: the export's screenshots were not taken")  # noqa: T201
        return
    for w, h in ((1024, 700), (1600, 1000)):
        browser = Chromium(binary, w, h)
        try:
            browser.open(page)
            end = time.time() + 20
            while browser.evaluate("document.getElementById('run-video').readyState") < 2 and time.time() < end:
                time.sleep(0.1)
            markers = browser.evaluate("document.querySelectorAll('.marker').length")
            duration = browser.evaluate("document.getElementById('run-video').duration")
            print(f"Chromium {w}x{h}: video {duration} s, {markers} step markers for {len(episode.steps)} steps")  # noqa: T201
            browser.evaluate("document.querySelectorAll('.marker.flash')[0].click()")
            time.sleep(1.5)
            browser.evaluate("document.getElementById('run-video').pause()")
            browser.screenshot(OUT / f"{w}x{h}-exported-video.png", w, h)
            print(OUT / f"{w}x{h}-exported-video.png")  # noqa: T201
        finally:
            browser.close()


def main() -> int:
    from PySide6.QtWidgets import QApplication

    from app.gui.main import configure_process

    tmp = Path(tempfile.mkdtemp(prefix="tapwise-record-shots-"))
    os.environ["TAPWISE_CONFIG_DIR"] = str(tmp / "config")
    os.environ["TAPWISE_DATA_DIR"] = str(tmp / "data")
    configure_process()
    _app = QApplication.instance() or QApplication(sys.argv[:1])
    last = ("", Path())
    for w, h in ((1024, 700), (1600, 1000)):
        last = run_once(w, h, tmp / f"{w}")
    export_shots(*last, tmp)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
