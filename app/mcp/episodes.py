"""Where MCP calls are recorded: one episode per client, one step per call.

Each client gets an episode named after it (``"MCP client: <name>"``, planner
``mcp:<name>``) in the project's ``Store``, the same way runs are stored, so the Episodes
view, export and turning an episode into a macro work on them unchanged.  Steps are
written, in call order, on one background writer thread (encoding a full-size screenshot
takes longer than the call itself); a frame identical to the one stored before it is
referenced, not written again; at most ``MAX_PENDING`` steps wait to be written (a call
waits rather than let memory grow); ``flush`` waits for the writes, ``close`` finishes the
episodes.  ``macro_from_episode`` turns what a client did into a macro.  A failing write is logged and never fails the client's call.  No Qt, no MCP.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any

from agent.macros.types import Macro
from agent.types import Autonomy, Episode, EpisodeStatus, ImageRef, Step, StepOutcome
from vision.types import Screen, ScreenParse

log = logging.getLogger(__name__)

GOAL_PREFIX = "MCP client: "
#: Steps queued for writing before the next call waits for the writer.
MAX_PENDING = 4
PLANNER_PREFIX = "mcp:"


def frame_signature(screen: Screen) -> str:
    """A hash of the frame's pixels on a 4-pixel grid: any visible change (a typed letter, a
    moved list) changes it."""
    return hashlib.blake2b(screen.image[::4, ::4].tobytes(), digest_size=16).hexdigest()


def episode_goal(client: str) -> str:
    return f"{GOAL_PREFIX}{client}"


@dataclass
class _Open:
    episode_id: str
    next_index: int = 0
    calls: int = 0


class EpisodeBook:
    """The open episodes of one server, keyed by client name.  ``store`` is an
    ``app.storage.Store`` (or anything with its episode methods), or None to record nothing."""

    def __init__(self, store: object | None, *, device: str = "", autonomy: Autonomy = Autonomy.APPROVE,
                 on_recorded: Callable[[str, Step], None] | None = None,
                 on_begin: Callable[[str, Episode], None] | None = None) -> None:
        self.store = store
        self.on_recorded = on_recorded  # told (on the writer thread) after each step is stored
        self.on_begin = on_begin  # told (on the caller's thread) when a client's episode begins
        self.device = device
        self.autonomy = autonomy
        self._open: dict[str, _Open] = {}
        self._lock = threading.Lock()
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mcp-episodes")
        self._room = threading.BoundedSemaphore(MAX_PENDING)
        self._last_frame: dict[str, tuple[str, ImageRef]] = {}  # episode id -> (frame signature, stored ref)

    def episode_id(self, client: str) -> str | None:
        with self._lock:
            found = self._open.get(client)
            return found.episode_id if found else None

    def next_index(self, client: str) -> int:
        """The index the client's next step will get (its episode is begun on first use)."""
        with self._lock:
            return self._ensure(client).next_index

    def record(self, client: str, step: Step, screen: Screen | None = None) -> Step:
        """Queue ``step`` (its index is assigned here) for the client's episode; returns it."""
        if self.store is not None:
            self._room.acquire()  # released by the writer
        with self._lock:
            opened = self._ensure(client)
            step = replace(step, index=opened.next_index)
            opened.next_index += 1
            opened.calls += 1
            if self.store is not None:
                self._writer.submit(self._write, opened.episode_id, step, screen)
        return step

    def _ensure(self, client: str) -> _Open:
        found = self._open.get(client)
        if found is None:
            episode = Episode(goal=episode_goal(client), planner=f"{PLANNER_PREFIX}{client}", model=client,
                              device=self.device, autonomy=self.autonomy)
            found = self._open[client] = _Open(episode.id)
            if self.on_begin is not None:
                self.on_begin(client, episode)
            if self.store is not None:
                self._writer.submit(self._begin, episode)
        return found

    def _begin(self, episode: Episode) -> None:
        try:
            self.store.begin_episode(episode)  # type: ignore[union-attr]
        except Exception:
            log.exception("could not store the MCP episode for %s", episode.goal)

    def _write(self, episode_id: str, step: Step, screen: Screen | None) -> None:
        try:
            sig = frame_signature(screen) if screen is not None else ""
            last = self._last_frame.get(episode_id)
            if screen is not None and last is not None and last[0] == sig:
                step, screen = replace(step, screenshot=last[1]), None  # the same frame: stored once
            stored = self.store.append_step(episode_id, step, screen)  # type: ignore[union-attr]
            if sig and stored.screenshot is not None:
                self._last_frame[episode_id] = (sig, stored.screenshot)
        except Exception:
            log.exception("could not store step %d of MCP episode %s", step.index, episode_id)
            return
        finally:
            self._room.release()
        if self.on_recorded is not None:
            try:
                self.on_recorded(episode_id, step)
            except Exception:
                log.exception("after storing an MCP step")

    def flush(self, timeout: float | None = 30.0) -> None:
        """Wait until every queued step is written."""
        self._writer.submit(lambda: None).result(timeout)

    def close(self) -> None:
        """Finish every open episode (steps written first) and stop the writer."""
        with self._lock:
            opened, self._open = dict(self._open), {}
        if self.store is not None:
            for client, o in opened.items():
                self._writer.submit(self._finish, o.episode_id, f"{o.calls} call(s) from {client}; session ended")
        self._writer.shutdown(wait=True)

    def _finish(self, episode_id: str, note: str) -> None:
        try:
            self.store.finish_episode(episode_id, EpisodeStatus.SUCCEEDED, note)  # type: ignore[union-attr]
        except Exception:
            log.exception("could not finish MCP episode %s", episode_id)


def episode_dict(episode: Episode, store: object | None = None) -> dict[str, Any]:
    """A stored episode as plain data for an MCP client: each step's call, decision and
    result, what flashed on the screen after it, and (with ``store``) the run's video."""
    steps = []
    for s in episode.steps:
        row: dict[str, Any] = {"index": s.index, "outcome": s.outcome.value}
        if s.proposal is not None:
            row["proposed"] = s.proposal.action.describe()
        if s.decision is not None:
            row["decision"] = s.decision.kind.value
            if s.decision.feedback:
                row["feedback"] = s.decision.feedback
        if s.executed is not None:
            row["executed"] = s.executed.describe()
        if s.error:
            row["error"] = s.error
        if s.foreground_package:
            row["app"] = s.foreground_package
        if s.transients:
            row["flashed"] = [{"text": t.text, "seconds": round(t.seconds, 2)} for t in s.transients]
        if s.proposal is None and s.executed is None and s.decision is None and not s.error:
            row["call"] = "observe"
        steps.append(row)
    out: dict[str, Any] = {"id": episode.id, "goal": episode.goal, "status": episode.status.value,
                           "note": episode.note, "planner": episode.planner, "steps": steps}
    if store is not None:
        from app.run_record import video_of

        video = video_of(store, episode)
        if video is not None:
            out["video"] = {"path": str(video.path), "seconds": video.duration_s,
                            "steps_at_s": {str(k + 1): round(v, 2) for k, v in sorted(video.steps.items())}}
    return out


def macro_from_episode(episode: Episode, name: str, description: str = "", *,
                       now: tuple[ScreenParse, str] | None = None) -> Macro:
    """The episode's executed steps as a macro (each step described and fingerprinted on the
    screen it was taken on, the next step's screen as what followed; ``now``, the screen
    and app shown at present, follows the last one).  ``ValueError`` when nothing was done."""
    from agent.macros.recorder import Observation, Recorder

    steps = list(episode.steps)
    recorder = Recorder()
    for i, step in enumerate(steps):
        if step.outcome is not StepOutcome.EXECUTED or step.executed is None or step.parse is None:
            continue
        if step.executed.is_terminal:
            continue
        later = next((s for s in steps[i + 1:] if s.parse is not None), None)
        after = (Observation.of(later.parse, package=later.foreground_package)  # type: ignore[arg-type]
                 if later is not None else Observation.of(now[0], package=now[1]) if now is not None else None)
        recorder.record(step.executed, Observation.of(step.parse, package=step.foreground_package), after)
    try:
        return recorder.build(name, description=description or f"recorded from {episode.goal}")
    except ValueError:
        raise ValueError(f"the episode {episode.id} has no executed step to turn into a macro") from None
