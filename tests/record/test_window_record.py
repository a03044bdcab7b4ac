"""The record of a run in the window: a task approved step by step on the decision bar (a
scripted model over real HTTP answers from the screen in its prompt) with "Record a video"
on shows the REC line while it runs, the toast that flashed after "Call" on the Steps tab,
and plays the run's video from that step on the Video tab; ffprobe reads its MP4 (as long
as the run) and its HTML export plays in headless Chromium; with the box off no video is
written (what flashed is still caught)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
pytest.importorskip("PySide6", reason="the window needs PySide6")
pytest.importorskip("pytestqt", reason="the window tests need pytest-qt")

from PySide6.QtCore import QUrl

from app.gui.devices import DeviceChoice
from app.gui.window import MainWindow
from app.settings import LLMSettings, RecordSettings, Settings, VisionSettings
from evaluation.scripted_model import ScriptedLLMServer
from tests.record.local_mirror import LocalMirroredPhone, answer

pytestmark = [pytest.mark.gui, pytest.mark.slow]
GOAL = "Give Carla Mendes a call"


@pytest.fixture
def window(qtbot, tmp_path, request):
    video = getattr(request, "param", True)
    server = ScriptedLLMServer(models=("scripted:latest",), responder=answer).start()
    phone = LocalMirroredPhone().start()
    settings = Settings(data_dir=tmp_path, llm=LLMSettings(ollama_host=server.url, model="scripted:latest"),
                        vision=VisionSettings(use_hierarchy="only"), record=RecordSettings(video=video))
    w = MainWindow(settings, discover=False, device_factory=lambda c, t: phone, live_parse=False)
    qtbot.addWidget(w)
    w.show()
    w.connect_device(DeviceChoice("local-1", "Streamed phone"))
    qtbot.waitUntil(lambda: w.view.frame is not None, timeout=10000)
    tp = w.task_panel
    tp.set_models(["scripted:latest"], current="scripted:latest")
    tp.goal.setPlainText(GOAL)
    tp.planner.setCurrentIndex(tp.planner.findData("zeroshot-"))
    read = w.run.recording.warm_up()  # as Start does; here the scripted model answers at once,
    read(np.zeros((16, 16, 3), np.uint8))  # so the OCR is loaded before the first step
    yield w
    w.close()
    phone.close()
    server.stop()


def step_through(w, qtbot) -> bool:
    """Start, approve every step on the decision bar; True when the REC line showed."""
    w.task_panel.start.click()
    rec = False
    for _ in range(12):
        qtbot.waitUntil(lambda: w.decision_bar.enabled or not w.run.active, timeout=60000)
        if not w.run.active:
            break
        rec = rec or w.task_panel.rec.isVisible()
        qtbot.wait(600)  # the person reads the card
        w.approve()
        qtbot.waitUntil(lambda: not w.decision_bar.enabled or not w.run.active, timeout=30000)
    qtbot.waitUntil(lambda: not w.run.active, timeout=60000)
    return rec


def test_a_recorded_run_shows_its_flash_and_plays_from_that_step(window, qtbot, tmp_path):
    w = window
    assert w.task_panel.record.isChecked()
    assert step_through(w, qtbot), "the REC line shows while the run is recorded"
    assert not w.task_panel.rec.isVisible()
    assert w.run.end is not None and w.run.end.status.value == "succeeded", w.run.end
    section = w.run.section
    qtbot.waitUntil(lambda: w.timeline.video_episode(section) is not None, timeout=20000)
    steps = [w.timeline.step(i, section) for i in range(w.timeline.count(section))]
    flashed = [s for s in steps if s is not None and s.transients]
    assert len(flashed) == 1 and flashed[0].executed is not None and flashed[0].executed.describe() == "tap Call"
    row = w.timeline._item(flashed[0].index, section)
    assert "flashed “Calling Carla Mendes" in row.text()
    w.timeline.select_step(flashed[0].index, section)
    assert "Flashed" in w.timeline.details.toHtml() and "play:step" in w.timeline.details.toHtml()
    w.timeline.details.anchorClicked.emit(QUrl("play:step"))
    player = w.timeline.video
    qtbot.waitUntil(lambda: player.picture.pixmap() is not None and not player.picture.pixmap().isNull(),
                    timeout=20000)
    assert w.timeline.tabs.currentWidget() is player
    assert player.position.value() > 0  # from the step, not from the start
    assert any(m.flashed for m in player.position.marks)
    exported_in_a_browser(w, section, tmp_path)
    player.seekRequested.emit(0.0)  # playing from the start again ...
    decoder = w.episodes.videos._thread
    assert decoder is not None and decoder.is_alive()
    w.close()  # ... when the window closes: its decoder stops with it
    assert not decoder.is_alive()


def exported_in_a_browser(w, section: str, tmp_path: Path) -> None:
    """The run recorded in the window: Debian's ffprobe reads its MP4, which lasts the run's
    wall time (within a second), and its HTML export plays it in headless Chromium with a
    marker per step."""
    import json
    import shutil
    import subprocess

    from app.episode_html import export_html
    from app.run_record import video_of
    from tests.share.headless_chromium import Chromium, chromium_binary

    store = w.store()
    episode = store.load_episode(w.timeline.video_episode(section))
    video = video_of(store, episode)
    assert video is not None
    wall = episode.finished_at - episode.started_at
    ffprobe = shutil.which("ffprobe")
    if ffprobe is not None:
        out = subprocess.run([ffprobe, "-v", "error", "-show_entries", "format=duration", "-of", "json",
                              str(video.path)], capture_output=True, text=True, timeout=60)
        assert abs(float(json.loads(out.stdout)["format"]["duration"]) - wall) <= 1.0
    binary = chromium_binary()
    if binary is None:
        return
    page = export_html(store, episode.id, tmp_path / "run.html")
    browser = Chromium(binary, 1024, 700)
    try:
        browser.open(page)
        duration = browser.video_duration("run-video")
        assert duration is not None and abs(duration - wall) <= 1.0
        assert browser.evaluate("document.querySelectorAll('.marker').length") == len(episode.steps)
    finally:
        browser.close()


@pytest.mark.parametrize("window", [False], indirect=True)
def test_with_the_box_off_no_video_is_written(window, qtbot, tmp_path):
    w = window
    assert not w.task_panel.record.isChecked()
    assert not step_through(w, qtbot)
    section = w.run.section
    steps = [w.timeline.step(i, section) for i in range(w.timeline.count(section))]
    assert any(s is not None and s.transients for s in steps)  # what flashed is caught either way
    assert w.timeline.video_episode(section) is None
    assert not list(Path(tmp_path).rglob("*.mp4"))
