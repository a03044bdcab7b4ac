"""The record of a run in the window: the "Record a video" box, the REC line, and what
flashed on the screen arriving in the Steps tab.

``prepare`` (on the worker that builds the run) gives the run its ``RecordingSink``
(``app.compose.recording``: flashes as the settings say, the video as the box says) when
the phone streams over scrcpy; nothing is recorded otherwise.  While the video is written
the task panel shows "● REC time · size" (polled twice a second; the record's own threads
never touch Qt).  When the run ends the record is stopped on a worker (the MP4 is then
complete), the run's section on the timeline is marked as having a video and the video
player is told which stored run it plays (``StepTimeline.set_video``).  Never imports the
window.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QTimer

from app.gui.session import Session, Workbench

if TYPE_CHECKING:
    from app.run_record import RecordingSink

log = logging.getLogger(__name__)


class RecordController:
    def __init__(self, ui: Workbench) -> None:
        self.ui = ui
        self.session: Session = ui.session
        self.sink: RecordingSink | None = None
        self._read: Any = None  # the flashes' OCR, loaded at the first recorded run and kept
        self._read_lock = threading.Lock()  # warm_up runs on the GUI thread and on the run's worker
        self._timer = QTimer()
        self._timer.setInterval(500)
        self._timer.timeout.connect(self._tick)
        panel = ui.task_panel
        panel.set_record(self.session.settings.record.video)
        panel.recordToggled.connect(self._toggled)

    def _toggled(self, on: bool) -> None:
        s = self.session.settings
        self.session.settings = s.model_copy(update={"record": s.record.model_copy(update={"video": on})})
        self.ui.persist_settings()

    def warm_up(self) -> Any:
        """Start loading the OCR flashes are read with (seconds, on a thread of its own) if the
        phone streams and flashes are caught; returns it (None otherwise).  Kept across runs."""
        from app.run_record import streams

        with self._read_lock:
            if self._read is None and streams(self.session.device) and self.session.settings.record.flashes:
                from phone.record.capture import reader_beside

                self._read = reader_beside(self.session.parser())  # the parser's OCR models, not a second copy
            return self._read

    def prepare(self, store: Any) -> RecordingSink | None:
        """The run's record around ``store`` (worker thread), or None."""
        from app.compose import recording

        try:
            self.sink = recording(self.session.settings, self.session.device, store, read=self.warm_up())
        except Exception:  # a run never fails for its record
            log.exception("the record of the run could not be prepared")
            self.sink = None
        return self.sink

    def started(self) -> None:
        """The run began (GUI thread): show the REC line while the video is written."""
        if self.sink is not None and self.sink.video:
            self._timer.start()
            self._tick()

    def _tick(self) -> None:
        sink = self.sink
        stats = sink.capture.video_stats() if sink is not None else None
        if stats is None or sink is None or not sink.capture.recording:
            self.ui.task_panel.set_recording("")
            return
        self.ui.task_panel.set_recording(f"{stats.seconds // 60:.0f}:{stats.seconds % 60:04.1f} · "
                                         f"{stats.bytes / 1e6:.1f} MB")

    def shutdown(self) -> None:
        """The window closes: finish a record still running (its MP4 complete) and wait."""
        self._timer.stop()
        sink, self.sink = self.sink, None
        if sink is not None:
            sink.stop()

    def finished(self, section: str, episode_id: str | None) -> None:
        """The run ended (GUI thread): finish the record on a worker, then offer its video."""
        self._timer.stop()
        self.ui.task_panel.set_recording("")
        sink, self.sink = self.sink, None
        if sink is None:
            return

        def done(summary: Any) -> None:
            video = getattr(summary, "video", None)
            if video is not None and video.packets and episode_id:
                self.ui.timeline.set_video(section, episode_id)
            if video is not None and video.stopped:
                self.ui.notify("warning", "The recording stopped early", video.stopped, key="recording")

        self.session.misc.submit(sink.stop, on_done=done,
                                 on_error=lambda f: self.ui.notify_failure("Could not finish the recording", f))
