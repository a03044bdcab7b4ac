"""The record of MCP clients' sessions: what flashed on the screen after each call, and a video.

An MCP client's calls are stored as one episode per client (``app.mcp.episodes``); when
the phone streams over scrcpy and recording is on, ``SessionRecords`` gives each such
episode a ``phone.record.RunCapture`` of its own (``app.run_record.recording_for``), started
when the episode begins: its video lies beside the episode's screenshots.  The service
tells it when an acting call's action goes out; ``amend`` puts what flashed after each
call into the stored steps (done when the episode is read back, and when the session ends);
``showing`` is what appeared after a call and is still on the screen, for the call's reply.
``close`` stops every capture, so the videos are complete.  No MCP, no Qt.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from agent.flash_steps import touched
from agent.transient import Transient, by_step
from agent.types import Action, Episode

log = logging.getLogger(__name__)


class SessionRecords:
    """See the module docstring.  ``make()`` returns a ``RecordingSink`` around ``store``
    (``app.run_record.recording_for``), or None when there is nothing to record."""

    def __init__(self, store: Any, make: Callable[[], Any]) -> None:
        self.store = store
        self._make = make
        self._lock = threading.Lock()
        self._by_client: dict[str, Any] = {}  # client -> RecordingSink
        self._by_episode: dict[str, Any] = {}

    def begin(self, client: str, episode: Episode) -> None:
        """The client's episode begins (called before it is stored): stop the record of its
        previous episode (its video ends there), start this one's."""
        with self._lock:
            previous = self._by_client.pop(client, None)
        if previous is not None:
            previous.stop()  # stores what it found late; ``amend`` still reads its summary
        try:
            sink = self._make()
        except Exception:
            log.exception("the record of %s's session could not be made", client)
            return
        if sink is None:
            return
        sink.episode_id = episode.id  # the book stores the episode itself: only the capture starts here
        from app.run_record import video_path

        try:
            sink.capture.start(video=video_path(self.store, episode.id) if sink.video else None)
        except Exception:
            log.exception("the record of %s's session could not start", client)
            return
        with self._lock:
            self._by_client[client] = sink
            self._by_episode[episode.id] = sink

    def _capture(self, client: str) -> Any:
        with self._lock:
            sink = self._by_client.get(client)
        return sink.capture if sink is not None else None

    def action_begins(self, client: str, index: int, action: Action) -> float:
        capture = self._capture(client)
        at = time.time()
        if capture is not None:
            capture.action_begins(index, at, touched(action))
        return at

    def action_sent(self, client: str, index: int, action: Action, started: float) -> None:
        capture = self._capture(client)
        if capture is not None:
            capture.action_sent(index, started, time.time(), touched(action))

    def showing(self, client: str, index: int) -> tuple[Transient, ...]:
        capture = self._capture(client)
        return tuple(capture.showing(index)) if capture is not None else ()

    def amend(self, episode: Episode) -> Episode:
        """``episode`` with what flashed after each of its steps, stored too."""
        with self._lock:
            sink = self._by_episode.get(episode.id)
        if sink is None:
            return episode
        found = by_step(sink.summary.transients if sink.summary is not None else sink.capture.transients())
        steps = []
        for step in episode.steps:
            got = found.get(step.index, ())
            if got and got != step.transients:
                step = replace(step, transients=got)
                try:
                    self.store.amend_step(episode.id, step)
                except Exception:
                    log.exception("could not store what flashed after step %d of %s", step.index, episode.id)
            steps.append(step)
        return replace(episode, steps=tuple(steps))

    def close(self) -> None:
        """Stop every record (the videos are complete afterwards) and store what flashed."""
        with self._lock:
            sinks = list(self._by_episode.values())
        for sink in sinks:
            sink.capture.settle(2.0)
            sink.stop()
            try:
                self.amend(self.store.load_episode(sink.episode_id))
            except Exception:  # the episode may not be written yet when the writer is behind
                log.info("what flashed in %s's session was not stored", sink.episode_id, exc_info=True)
