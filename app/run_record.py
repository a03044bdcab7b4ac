"""The record of a run, assembled for the window, ``tapwise run`` and the MCP server.

``recording_for(device, store, ...)`` gives a ``RecordingSink`` when the device streams (a
``MirroredDevice`` whose scrcpy mirror runs: a real phone or the served virtual phone) and
recording or flash-catching is on; None otherwise, so nothing is recorded when recording
is off.  The sink wraps the run's ``StepSink`` (the ``Store``): when the run's episode
begins it starts its ``phone.record.RunCapture``, with the video at
``video_path(store, id)`` (beside the screenshots); when it finishes it stops it and the
MP4 is complete.  The runner reaches the same capture (``sink.capture``) as its
``agent.transient.RunRecord``.

``video_path``/``video_of`` find an episode's video (and its side file's step times) for
the episode view, the HTML export, ``tapwise episodes`` and MCP's ``read_episode``.
Qt-free, no networking.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent.transient import Transient, by_step
from agent.types import Episode, EpisodeStatus, Step
from vision.types import Screen

if TYPE_CHECKING:
    from phone.record.capture import CaptureSummary, RunCapture

log = logging.getLogger(__name__)

VIDEO_NAME = "run.mp4"


def video_path(store: Any, episode_id: str) -> Path | None:
    """Where ``episode_id``'s video is (or would be) kept: beside its screenshots."""
    media = getattr(store, "media_dir", None)
    return Path(media) / episode_id / VIDEO_NAME if media is not None else None


@dataclass(frozen=True, slots=True)
class EpisodeVideo:
    """An episode's video and where its steps are in it (seconds from its start)."""

    path: Path
    started_at: float  # wall clock of the video's first moment
    duration_s: float | None
    steps: dict[int, float]  # step index -> seconds into the video when the step began
    actions: dict[int, float]  # step index -> seconds into the video when its action went out
    stopped: str = ""

    def at(self, step: Step) -> float:
        """Where ``step`` begins in the video (0 when it began before the video)."""
        return self.steps.get(step.index, max(0.0, step.started_at - self.started_at))


def video_of(store: Any, episode: Episode) -> EpisodeVideo | None:
    """``episode``'s recorded video, or None when none was recorded (or it is gone)."""
    from phone.record.capture import read_side_file

    path = video_path(store, episode.id)
    if path is None or not path.is_file() or path.stat().st_size == 0:
        return None
    side = read_side_file(path) or {}
    started = float(side.get("started_at") or episode.started_at)
    actions = {int(s["index"]): float(s["at_s"]) for s in side.get("steps", []) if "index" in s and "at_s" in s}
    steps = {s.index: max(0.0, s.started_at - started) for s in episode.steps}
    duration = side.get("duration_s")
    return EpisodeVideo(path, started, float(duration) if duration is not None else None, steps, actions,
                        str(side.get("stopped") or ""))


def streams(device: Any) -> bool:
    """True when ``device`` is a phone mirrored over scrcpy right now (its stream can be recorded)."""
    mirror = getattr(device, "mirror", None)
    stream = getattr(device, "stream", None)
    return stream is not None and mirror is not None and getattr(mirror, "running", False) \
        and getattr(getattr(mirror, "source", None), "value", "") == "scrcpy"


def recording_for(device: Any, store: Any, *, flashes: bool = True, video: bool = True,
                  max_video_mb: float | None = None, read: Any = None,
                  on_stopped: Callable[[str, CaptureSummary], None] | None = None) -> RecordingSink | None:
    """The run's sink with its record (``RecordingSink`` around ``store``), or None when
    ``device`` does not stream or nothing is to be recorded (then nothing is).  A video
    needs a ``store`` with a media folder.  ``read`` is the OCR the flashes are read with
    (``phone.record.capture.default_reader``, kept by the caller across runs so its models
    load once); by default each record loads its own."""
    video = video and video_path(store, "x") is not None
    if not (flashes or video) or not streams(device):
        return None
    from phone.record.capture import CaptureOptions, RunCapture

    options = CaptureOptions(flashes=flashes, max_video_bytes=int(max_video_mb * 1e6) if max_video_mb else None)
    size = None
    try:
        size = device.mirror.device_size or device.screen_size()
    except Exception:  # the size only scales where flashes were seen
        log.debug("no screen size for the capture", exc_info=True)
    return RecordingSink(store, RunCapture(device.stream, options, device_size=size, read=read), video=video,
                         on_stopped=on_stopped)


class RecordingSink:
    """A ``StepSink`` that also starts and stops the run's capture; see the module docstring.
    ``on_stopped`` hears the capture's summary (on the runner's thread)."""

    def __init__(self, inner: Any, capture: RunCapture, *, video: bool = True,
                 on_stopped: Callable[[str, CaptureSummary], None] | None = None) -> None:
        self.inner = inner
        self.capture = capture
        self.video = video
        self.on_stopped = on_stopped
        self.episode_id = ""
        self.summary: CaptureSummary | None = None
        self._lock = threading.Lock()

    def begin_episode(self, episode: Episode) -> None:
        if self.inner is not None:
            self.inner.begin_episode(episode)
        self.episode_id = episode.id
        path = video_path(self.inner, episode.id) if self.video else None
        try:
            self.capture.start(video=path)
        except Exception:  # the record is an extra: the run goes on without it
            log.exception("the record of run %s could not start", episode.id)

    def append_step(self, episode_id: str, step: Step, screen: Screen | None = None) -> object:
        return self.inner.append_step(episode_id, step, screen) if self.inner is not None else step

    def amend_step(self, episode_id: str, step: Step) -> object:
        amend = getattr(self.inner, "amend_step", None)
        return amend(episode_id, step) if amend is not None else step

    def finish_episode(self, episode_id: str, status: EpisodeStatus | str, note: str = "") -> None:
        try:
            if self.inner is not None:  # first: the run ends when it ends, not when its record is written
                self.inner.finish_episode(episode_id, status, note)
        finally:
            self.stop()

    def stop(self) -> CaptureSummary | None:
        """Stop the capture (once); the video is complete afterwards."""
        with self._lock:
            if self.summary is not None:
                return self.summary
            try:
                self.summary = self.capture.stop()
            except Exception:
                log.exception("the record of run %s could not be finished", self.episode_id)
                return None
            self._store_late(self.summary.transients)
        if self.on_stopped is not None:
            try:
                self.on_stopped(self.episode_id, self.summary)
            except Exception:
                log.exception("after the record of run %s", self.episode_id)
        return self.summary

    def _store_late(self, found: tuple[Transient, ...]) -> None:
        """Flashes the capture found after the run's last look at it (the run's end waits a
        few seconds for them; a slow OCR read can take longer) go into their stored steps
        too, so the store holds every flash the summary counts."""
        load, amend = getattr(self.inner, "load_episode", None), getattr(self.inner, "amend_step", None)
        if not found or not self.episode_id or load is None or amend is None:
            return
        try:
            episode = load(self.episode_id)
            grouped = by_step(found)
            for step in episode.steps:
                got = grouped.get(step.index, ())
                if got and {t.text.casefold() for t in got} - {t.text.casefold() for t in step.transients}:
                    amend(self.episode_id, replace(step, transients=got))
        except Exception:  # the record is an extra: the run's own end is already stored
            log.exception("the late flashes of run %s could not be stored", self.episode_id)

    def __getattr__(self, name: str) -> Any:  # the store's other methods (media_dir, load_episode, ...)
        return getattr(self.inner, name)
