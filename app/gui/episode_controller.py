"""Run history from the window: lists the stored episodes, opens one onto the step
timeline (every stored step, rejected, failed and errored ones included, with its
frame, parse, prompts, replies, decision, and the finish reason in the section title),
and exports one as Tapwise JSON, as an AITW trajectory, or as one self-contained HTML
page to share (``app.episode_html``).

All database and file I/O runs on the session's worker thread.  Never imports the window.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agent.types import Episode, ImageRef
from app.episode_html import STATUS_WORDS  # one set of words for how a run ended: the page's
from app.gui.session import Session, Workbench
from app.gui.video_controller import VideoController
from app.gui.workers import Failure
from vision.types import Screen

log = logging.getLogger(__name__)

THUMB_HEIGHT = 192


def episode_title(episode: Episode) -> str:
    """The timeline's header for a stored episode: goal, how it ended and why."""
    words = STATUS_WORDS.get(episode.status, episode.status.value)
    return f"{episode.goal} — {words}" + (f": {episode.note}" if episode.note else "")


@dataclass(frozen=True, slots=True)
class OpenedEpisode:
    episode: Episode
    thumbs: dict[int, np.ndarray]  # step index -> small RGB image
    problems: tuple[str, ...] = ()  # screenshots that could not be read
    video: bool = False  # the run was recorded on video


def _thumb(image: np.ndarray) -> np.ndarray:
    step = max(1, image.shape[0] // THUMB_HEIGHT)
    return np.ascontiguousarray(image[::step, ::step])


def load_episode_for_view(store: Any, episode_id: str) -> OpenedEpisode:
    """The stored episode with a thumbnail per recorded frame (worker thread)."""
    episode = store.load_episode(episode_id)
    thumbs: dict[int, np.ndarray] = {}
    problems: list[str] = []
    for step in episode.steps:
        if step.screenshot is None:
            continue
        try:
            thumbs[step.index] = _thumb(store.load_screenshot(step.screenshot).image)
        except Exception as exc:  # one unreadable frame must not hide the rest of the run
            problems.append(f"step {step.index + 1}: {exc}")
    from app.run_record import video_of

    return OpenedEpisode(episode, thumbs, tuple(problems), video_of(store, episode) is not None)


def export_episode(store: Any, episode_id: str, fmt: str, path: Path) -> Path:
    """Write the episode as Tapwise JSON (``json``), an AITW trajectory (``aitw``) or one
    self-contained HTML page to share (``html``, ``app.episode_html``)."""
    if fmt == "html":
        from app.episode_html import export_html

        return export_html(store, episode_id, path)
    episode = store.load_episode(episode_id)
    if fmt == "json":
        from agent.codec import dumps

        text = dumps(episode)
    elif fmt == "aitw":
        from evaluation.loaders import dump_trajectories, trajectory_from_episode

        text = dump_trajectories([trajectory_from_episode(episode)])
    else:
        raise ValueError(f"unknown export format {fmt!r}: use json, aitw or html")
    tmp = path.with_name(path.name + ".part")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
    return path


class EpisodeController:
    def __init__(self, ui: Workbench) -> None:
        self.ui = ui
        self.session: Session = ui.session
        self.opened: dict[str, Episode] = {}
        panel = ui.episodes_panel
        panel.refreshRequested.connect(self.refresh)
        panel.openRequested.connect(self.open)
        panel.exportRequested.connect(self.export_dialog)
        panel.runStored.connect(self.adopt)
        self.videos = VideoController(ui)  # plays a recorded run from a step (the Steps tab's Video tab)

    def adopt(self, section: str, episode: Episode) -> None:
        """A run stored by another loop (a macro replay) is on the timeline as ``section``:
        its steps' frames are read from the store like an opened run's."""
        self.opened[section] = episode
        self.ui.episodes_panel.request_refresh()

    def refresh(self) -> None:
        self.session.misc.submit(lambda: self.session.store().list_episodes(limit=500),
                                 on_done=self.ui.episodes_panel.set_episodes,
                                 on_error=lambda f: self.ui.notify_failure("Could not list the stored runs", f))

    def open(self, episode_id: str) -> None:
        """Put the stored episode on the step timeline (loaded on a worker)."""
        self.ui.busy("Opening the run…")
        self.session.misc.submit(lambda: load_episode_for_view(self.session.store(), episode_id),
                                 on_done=self._show, on_error=self._open_failed)

    def _open_failed(self, failure: Failure) -> None:
        self.ui.busy("")
        self.ui.notify_failure("Could not open the run", failure)

    def open_latest(self) -> None:
        """Put the most recent stored run back on the timeline (a restarted window keeps
        showing what happened last)."""
        def latest() -> OpenedEpisode | None:
            rows = self.session.store().list_episodes(limit=1)
            return load_episode_for_view(self.session.store(), rows[0]["id"]) if rows else None

        def show(opened: OpenedEpisode | None) -> None:
            if opened is not None and opened.episode.id not in self.ui.timeline.sections():
                self._show(opened, select=False)

        self.session.misc.submit(latest, on_done=show,
                                 on_error=lambda f: self.ui.notify_failure("Could not read the last run", f))

    def _show(self, opened: OpenedEpisode, select: bool = True) -> None:
        ui = self.ui
        ui.busy("")
        episode = opened.episode
        self.opened[episode.id] = episode
        ui.timeline.begin_section(episode.id, episode_title(episode))
        ui.timeline.set_video(episode.id, episode.id if opened.video else None)
        for step in episode.steps:
            ui.timeline.add_step(step, opened.thumbs.get(step.index), section=episode.id)
        if select:
            ui.timeline_dock.raise_()
            if episode.steps:
                ui.timeline.select_step(episode.steps[0].index, episode.id)
        if opened.problems:
            ui.notify("warning", f"Some frames of “{episode.goal}” could not be read.",
                      "\n".join(opened.problems), key="episode-frames")

    def step_frame(self, section: str, index: int) -> ImageRef | None:
        """Where the frame of a step of an opened episode is stored (None if unknown)."""
        episode = self.opened.get(section)
        if episode is None:
            return None
        for step in episode.steps:
            if step.index == index:
                return step.screenshot
        return None

    def load_frame(self, ref: ImageRef) -> Screen:
        """Read a stored frame (worker thread)."""
        screen: Screen = self.session.store().load_screenshot(ref)
        return screen

    def export_dialog(self, episode_id: str, fmt: str) -> None:
        from PySide6.QtWidgets import QFileDialog, QWidget

        parent = self.ui if isinstance(self.ui, QWidget) else None
        suffix = "html" if fmt == "html" else "json"
        name = f"episode-{episode_id}{'-aitw' if fmt == 'aitw' else ''}.{suffix}"
        kinds = "Web page (*.html)" if fmt == "html" else "JSON (*.json)"
        path, _ = QFileDialog.getSaveFileName(parent, f"Export the run ({fmt.upper()})", name, kinds)
        if path:
            self.export(episode_id, fmt, Path(path))

    def export(self, episode_id: str, fmt: str, path: Path) -> None:
        self.session.misc.submit(lambda: export_episode(self.session.store(), episode_id, fmt, path),
                                 on_done=lambda p: self.ui.notify("info", f"Run exported to {p}"),
                                 on_error=lambda f: self.ui.notify_failure("Export failed", f))
