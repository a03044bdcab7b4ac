"""The record of a run on the path a phone takes: the virtual phone served over the ADB
protocol (its toasts last their seconds), Debian's real adb, the official scrcpy v3 server
jar and our client.  A toast-only task run through the runner ends "done" from the toast
the record caught, the toast is stored once in the step whose action showed it — the
phone's own log says it showed exactly that — and Debian's ffprobe reads the run's MP4,
as long as the run."""

from __future__ import annotations

import json
import shutil
import subprocess
import time

import numpy as np
import pytest

from agent.events import RunSettings
from agent.runner import drive, run_episode
from agent.types import Autonomy, EpisodeStatus
from app.run_record import recording_for, video_of
from app.storage import Store
from phone.adb import scrcpy_server_jar as jars
from phone.adb.adb_device import AdbDevice
from phone.adb.mirror import MirroredDevice
from phone.virtual.phone import VirtualPhone
from phone.virtual.tasks import load_tasks, replay
from tests.phone_adb.test_mirror_over_scrcpy import JAR
from tests.record.test_run_record import Replay

pytestmark = [
    pytest.mark.adb,
    pytest.mark.slow,
    pytest.mark.skipif(JAR is None, reason=f"no official scrcpy server jar: {jars.INSTALL_HINT}"),
]
FFPROBE = shutil.which("ffprobe")


@pytest.fixture
def timed_phone(adb_env):
    from phone.virtual.wire import serve_phone

    phone = VirtualPhone(profile="small", timed_flashes=True)
    server = serve_phone(phone, port=0)
    out = adb_env.adb("connect", server.serial)
    assert "connected to" in out.stdout, out.stdout + out.stderr
    device = MirroredDevice(AdbDevice(server.serial))
    mirror = device.start_mirror()
    deadline = time.monotonic() + 30
    while mirror.latest() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        yield phone, server, device
    finally:
        device.stop_mirror()
        server.stop()
        adb_env.adb("disconnect", server.serial)


def test_a_toast_only_task_over_adb_and_scrcpy_is_recorded(timed_phone, tmp_path):
    from phone.record.capture import default_reader
    from vision.config import PipelineConfig
    from vision.pipeline import ScreenParser

    phone, server, device = timed_phone
    task = {t.id: t for t in load_tasks()}["toasts.call_carla"]
    with server.adbd.phone.lock:
        task.setup(phone)
    read = default_reader()
    read(np.zeros((16, 16, 3), np.uint8))  # the OCR loaded before the run, as the window keeps it
    planner = Replay([a for a in replay(task, VirtualPhone(profile="small")) if a is not None and not a.is_terminal])
    store = Store(tmp_path / "runs.sqlite")
    try:
        sink = recording_for(device, store, read=read)
        assert sink is not None, "a MirroredDevice whose scrcpy mirror runs can be recorded"
        gen = run_episode(task.goals[0], device, ScreenParser(PipelineConfig(mode="tree")), planner, sink,
                          settings=RunSettings(mode=Autonomy.AUTO, max_steps=8, allow_sensitive=True),
                          record=sink.capture)
        final = None
        for ev in drive(gen, lambda _q: None):
            final = getattr(ev, "episode", final)
        assert final is not None
        episode = store.load_episode(final.id)
        video = video_of(store, episode)
    finally:
        store.close()
    assert episode.status is EpisodeStatus.SUCCEEDED, episode.note
    with server.adbd.phone.lock:
        shown = list(phone.flashes.shown)
    assert [(m["kind"], m["text"]) for m in shown] == [("toast", "Calling Carla Mendes…")]
    stored = [(s.index, t.text) for s in episode.steps for t in s.transients]
    assert len(stored) == 1 and "Calling Carla Mendes" in stored[0][1]
    call = next(s for s in episode.steps if s.index == stored[0][0])
    assert call.executed is not None and call.executed.describe().startswith("tap")
    assert call.started_at <= shown[0]["shown_at"] <= episode.steps[call.index + 1].started_at
    assert video is not None
    if FFPROBE is None:
        pytest.skip("Debian's ffprobe is not installed (apt-get install -y ffmpeg): the MP4 was not read")
    out = subprocess.run([FFPROBE, "-v", "error", "-show_entries", "format=duration:stream=codec_name,width,height",
                          "-of", "json", str(video.path)], capture_output=True, text=True, timeout=60)
    doc = json.loads(out.stdout)
    assert doc["streams"][0]["codec_name"] == "h264"
    assert (doc["streams"][0]["width"], doc["streams"][0]["height"]) == (720, 1600)
    assert abs(float(doc["format"]["duration"]) - (episode.finished_at - episode.started_at)) <= 1.0
