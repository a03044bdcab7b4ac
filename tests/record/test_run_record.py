"""The record of a run through the real runner and the real store: a toast that followed a
step's action is stored in that step (once) and told to the model, which ends the task
from it; the video lasts the run (ffprobe); the HTML export plays it in a real headless
Chromium with a marker per step; ``tapwise episodes show`` lists the flashes; recording
off leaves no file; and the record of an MCP client's session is read back with its
flashes and its video."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from agent.events import AwaitingDecision, RunSettings
from agent.planners.base import PlanContext
from agent.runner import drive, run_episode
from agent.transient import FLASHED, SHOWING
from agent.types import Action, ActionType, Autonomy, Decision, DecisionKind, EpisodeStatus, Proposal
from app.run_record import recording_for, video_of
from app.storage import Store
from phone.virtual.phone import VirtualPhone
from phone.virtual.tasks import load_tasks, replay
from tests.record.local_mirror import LocalMirroredPhone
from tests.share.headless_chromium import Chromium, chromium_binary

pytestmark = pytest.mark.slow
TASKS = {t.id: t for t in load_tasks()}
FFPROBE = shutil.which("ffprobe")
CHROMIUM = chromium_binary()


class Replay:
    """Taps the task's reference steps, then says "done" once a screen names what flashed."""

    name = "replay"
    uses_latent = False

    def __init__(self, actions: list[Action]) -> None:
        self.actions = list(actions)
        self.screens: list[str] = []

    def propose(self, ctx: PlanContext) -> Proposal:
        self.screens.append(ctx.screen)
        if self.actions:
            return Proposal(self.actions.pop(0), rationale="the reference step", planner=self.name)
        if FLASHED in ctx.screen or SHOWING in ctx.screen:
            return Proposal(Action.simple(ActionType.COMPLETE), rationale="the phone confirmed it", planner=self.name)
        return Proposal(Action(ActionType.WAIT, duration_ms=2000), rationale="no confirmation yet", planner=self.name)


@pytest.fixture(scope="module")
def read():
    """The record's OCR, loaded once (in the window it is kept across runs too)."""
    import numpy as np

    from phone.record.capture import default_reader

    r = default_reader()
    r(np.zeros((16, 16, 3), np.uint8))  # waits for the models
    return r


def run_task(task_id: str, device: LocalMirroredPhone, store: Store, read, *, video: bool = True,
             flashes: bool = True):
    from vision.config import PipelineConfig
    from vision.pipeline import ScreenParser

    twin = VirtualPhone(profile="small")
    task = TASKS[task_id]
    planner = Replay([a for a in replay(task, twin) if a is not None and not a.is_terminal])
    with device.lock:
        task.setup(device.phone)
    sink = recording_for(device, store, flashes=flashes, video=video, read=read)
    gen = run_episode(task.goals[0], device, ScreenParser(PipelineConfig(mode="tree")), planner,
                      sink if sink is not None else store,
                      settings=RunSettings(mode=Autonomy.APPROVE, max_steps=8, allow_sensitive=True),
                      record=sink.capture if sink is not None else None)

    def approve(_: AwaitingDecision) -> Decision:
        time.sleep(0.3)  # the user reads the card
        return Decision(DecisionKind.APPROVE)

    final = None
    for ev in drive(gen, approve):
        final = getattr(ev, "episode", final)
    assert final is not None
    return store.load_episode(final.id), planner, sink


@pytest.fixture
def device():
    d = LocalMirroredPhone().start()
    yield d
    d.close()


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "runs.sqlite")
    yield s
    s.close()


@pytest.fixture
def recorded(device, store, read):
    return run_task("toasts.call_carla", device, store, read)


def test_a_toast_is_stored_once_in_the_step_it_followed_and_ends_the_task(recorded):
    episode, planner, _sink = recorded
    assert episode.status is EpisodeStatus.SUCCEEDED, episode.note
    call = next(s for s in episode.steps if s.executed is not None and s.executed.type is ActionType.TAP
                and s.index == 2)
    texts = [t.text for s in episode.steps for t in s.transients]
    assert len(texts) == 1 and "Calling Carla Mendes" in texts[0]
    assert [t.step for t in call.transients] == [2]
    told = [s for s in planner.screens if FLASHED in s or SHOWING in s]
    assert told and "Calling Carla Mendes" in told[0]  # the next prompt got it, inside the screen's fence
    assert told[0].index("Calling") < told[0].index("</screen>")
    assert all(s.timing("record") is not None and s.timing("record") < 50 for s in episode.steps
               if s.executed is not None)


@pytest.mark.skipif(FFPROBE is None, reason="needs Debian's ffprobe: apt-get install -y ffmpeg")
def test_the_video_lasts_as_long_as_the_run(recorded, store):
    episode, _planner, sink = recorded
    video = video_of(store, episode)
    assert video is not None and video.path.is_file()
    out = subprocess.run([FFPROBE, "-v", "error", "-show_entries", "format=duration", "-of", "json",
                          str(video.path)], capture_output=True, text=True, timeout=60)
    duration = float(json.loads(out.stdout)["format"]["duration"])
    wall = episode.finished_at - episode.started_at
    assert abs(duration - wall) <= 1.0, (duration, wall)
    assert sorted(video.actions) == [0, 1, 2]  # the side file marks when each action went out
    assert sink.summary.video.stopped == ""


def test_episodes_show_lists_each_steps_flashes(recorded, store, monkeypatch):
    from typer.testing import CliRunner

    from app.cli.episodes import episodes_app

    episode, _p, _s = recorded
    monkeypatch.setattr("app.cli.episode_show.open_user_store", lambda console: (None, Store(store.path)))
    out = CliRunner().invoke(episodes_app, ["show", episode.id], env={"COLUMNS": "220"})
    assert out.exit_code == 0, out.output
    assert "Calling Carla Mendes" in out.output
    assert "run.mp4" in out.output


@pytest.mark.skipif(CHROMIUM is None, reason="needs a real browser: install Debian's chromium")
def test_the_html_export_plays_the_video_with_a_marker_per_step(recorded, store, tmp_path):
    from app.episode_html import export_html

    episode, _p, _s = recorded
    page = export_html(store, episode.id, tmp_path / "run.html")
    browser = Chromium(CHROMIUM, 1600, 1000)
    try:
        browser.open(page)
        duration = browser.video_duration("run-video")
        assert duration is not None and abs(duration - (episode.finished_at - episode.started_at)) <= 1.0
        markers = browser.evaluate("Array.from(document.querySelectorAll('.marker')).map(m => m.dataset.t)")
        assert len(markers) == len(episode.steps)
        browser.evaluate("document.querySelectorAll('.marker')[2].click()")
        assert browser.evaluate("document.getElementById('run-video').currentTime") == pytest.approx(
            float(markers[2]), abs=0.2)
        assert "Calling Carla Mendes" in browser.evaluate("document.querySelector('.flashes').textContent")
        assert browser.evaluate("document.getElementById('run-video').textTracks.length") == 1
        assert all(u.startswith(("file:", "data:")) for u in browser.requested_urls())
    finally:
        browser.close()


def test_recording_off_means_no_file(device, store, read):
    assert recording_for(device, store, flashes=False, video=False) is None
    episode, _planner, sink = run_task("settings.wifi_off", device, store, read, video=False, flashes=True)
    assert sink is not None and sink.summary is not None and sink.summary.video is None
    assert video_of(store, episode) is None
    assert not list(Path(store.media_dir).rglob("*.mp4")) and not list(Path(store.media_dir).rglob("*.json"))


def test_an_mcp_clients_session_is_recorded_and_read_back(device, store, read):
    from app.mcp.episodes import EpisodeBook
    from app.mcp.recording import SessionRecords
    from app.mcp.service import PhoneService
    from app.mcp.supervisor import Policy, PolicySupervisor
    from vision.config import PipelineConfig
    from vision.pipeline import ScreenParser

    with device.lock:
        TASKS["toasts.call_carla"].setup(device.phone)
    records = SessionRecords(store, lambda: recording_for(device, store, read=read))
    book = EpisodeBook(store, device="local", on_begin=records.begin)
    class Person:  # approves what the policy asks about (a call is "sending")
        def review(self, review):
            return Decision(DecisionKind.APPROVE)

    service = PhoneService(device, ScreenParser(PipelineConfig(mode="tree")).parse,
                           PolicySupervisor(Policy.AUTO, Person()), book, store=store, records=records)
    try:
        service.open_app("client", "Contacts")
        obs = service.observe("client")
        carla = next(e for e in obs.parse.elements if e.text == "Carla Mendes")
        service.tap("client", obs.public_id(carla.id))
        obs = service.observe("client")
        call = next(e for e in obs.parse.elements if e.label == "Call")
        service.tap("client", obs.public_id(call.id))
        time.sleep(3.5)  # the toast comes and goes
        read = service.read_episode("client")
    finally:
        service.close()
    flashed = [f["text"] for s in read["steps"] for f in s.get("flashed", [])]
    assert len(flashed) == 1 and "Calling Carla Mendes" in flashed[0]
    assert read["video"]["path"].endswith("run.mp4") and Path(read["video"]["path"]).is_file()
