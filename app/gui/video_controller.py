"""Playing a run's video in the window, from any of its steps.

The Steps tab's "play the video from this step" link (``StepTimeline.playRequested``)
names a timeline section and a step.  The section is a stored episode (an opened run, or
a run of this session once it ended): its video and step times are read on the session's
worker (``app.run_record.video_of``), and a decoder thread of this controller's own reads
the MP4 with PyAV from the step's time on, shrinks each frame and hands it to the GUI
thread at the moment it is due (``GuiPoster``), where ``widgets.video_player`` shows it.
Pause stops the decoder; seeking starts a new one at the new time.  Never imports the
window; nothing here encodes video.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

import numpy as np

from app.gui.session import Session, Workbench
from app.run_record import EpisodeVideo
from widgets.video_player import StepMark

log = logging.getLogger(__name__)

#: Frames are shown at most this tall (the player is a dock tab, not a full screen).
SHOWN_HEIGHT = 720


def decode_from(path: Any, start_s: float, stop: threading.Event, deliver: Any) -> None:
    """Decode ``path`` from ``start_s`` on, calling ``deliver(rgb, seconds)`` for each frame
    when it is due (real time), until the end or ``stop``."""
    import av
    import cv2

    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        stream.thread_type = "AUTO"
        tb = float(stream.time_base) if stream.time_base else 1 / 1000
        container.seek(max(0, int(start_s / tb)), stream=stream, backward=True, any_frame=False)
        t0_wall: float | None = None
        for frame in container.decode(stream):
            if stop.is_set():
                return
            at = float(frame.pts * tb) if frame.pts is not None else 0.0
            if at + 0.05 < start_s:
                continue  # decoded only to reach the step's moment
            rgb: np.ndarray = np.asarray(frame.to_ndarray(format="rgb24"))
            if rgb.shape[0] > SHOWN_HEIGHT:
                f = SHOWN_HEIGHT / rgb.shape[0]
                rgb = cv2.resize(rgb, (max(1, round(rgb.shape[1] * f)), SHOWN_HEIGHT), interpolation=cv2.INTER_AREA)
            if t0_wall is None:
                t0_wall = time.monotonic() - (at - start_s)
            wait = t0_wall + (at - start_s) - time.monotonic()
            if wait > 0 and stop.wait(wait):
                return
            deliver(np.ascontiguousarray(rgb), at)


class VideoController:
    def __init__(self, ui: Workbench) -> None:
        self.ui = ui
        self.session: Session = ui.session
        self.player = ui.timeline.video
        self.video: EpisodeVideo | None = None
        self.section = ""
        self.position = 0.0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        ui.timeline.playRequested.connect(self.play_step)
        self.player.playToggled.connect(self._toggled)
        self.player.seekRequested.connect(self._seek)

    def play_step(self, section: str, index: int) -> None:
        episode_id = self.ui.timeline.video_episode(section)
        if not episode_id:
            self.player.clear("This run has no video.")
            return
        store = self.session.store()

        def load() -> tuple[Any, EpisodeVideo | None]:
            from app.run_record import video_of

            episode = store.load_episode(episode_id)
            return episode, video_of(store, episode)

        self.session.misc.submit(load, on_done=lambda got: self._loaded(section, index, *got),
                                 on_error=lambda f: self.ui.notify_failure("Could not open the run's video", f))

    def _loaded(self, section: str, index: int, episode: Any, video: EpisodeVideo | None) -> None:
        if video is None:
            self.player.clear("No video was recorded for this run.")
            return
        self.stop()
        self.video, self.section = video, section
        marks = [StepMark(video.at(s), str(s.index + 1), bool(s.transients)) for s in episode.steps]
        duration = video.duration_s or max((m.seconds for m in marks), default=0.0) + 1.0
        self.player.set_video(f"{episode.goal} — {video.path.name}", duration, marks)
        step = next((s for s in episode.steps if s.index == index), None)
        self._start(video.at(step) if step is not None else 0.0)

    def _start(self, at: float) -> None:
        self.stop()
        video = self.video
        if video is None:
            return
        self.position = at
        stop = threading.Event()
        self._stop = stop
        poster = self.session.poster

        def deliver(rgb: np.ndarray, seconds: float) -> None:  # decoder thread
            poster.post(lambda: self._show(stop, rgb, seconds))

        def run() -> None:
            try:
                decode_from(video.path, at, stop, deliver)
            except Exception as exc:  # a damaged file: say so, keep the window
                log.warning("playing %s failed: %s", video.path, exc)
            finally:
                poster.post(lambda: self._ended(stop))

        self._thread = threading.Thread(target=run, name="video-player", daemon=True)
        self._thread.start()
        self.player.set_playing(True)

    def _show(self, stop: threading.Event, rgb: np.ndarray, seconds: float) -> None:
        if stop.is_set():
            return
        self.position = seconds
        self.player.show_frame(rgb, seconds)

    def _ended(self, stop: threading.Event) -> None:
        if stop is self._stop:
            self.player.set_playing(False)

    def _toggled(self, play: bool) -> None:
        if play:
            self._start(self.position)
        else:
            self.stop()

    def _seek(self, seconds: float) -> None:
        self._start(seconds)

    def stop(self) -> None:
        self._stop.set()
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.join(2.0)
        self.player.set_playing(False)
