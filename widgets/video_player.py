"""A run's video on the Steps tab: the frame, play/pause, a position bar with a mark per
step (orange where something flashed on the screen), and the time.

It shows the frames it is handed (``show_frame``) and emits intents: ``playToggled`` and
``seekRequested`` (seconds); whoever decodes the video (``app.gui.video_controller``)
answers them.  No I/O, no decoding.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import QRect, Qt, Signal
from PySide6.QtGui import QColor, QPainter, QPaintEvent, QPixmap
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QSizePolicy, QSlider, QVBoxLayout, QWidget

from widgets.frames import rgb_to_qimage
from widgets.icons import icon

#: The position bar counts in these steps per second.
TICKS_PER_S = 10


@dataclass(frozen=True, slots=True)
class StepMark:
    """Where a step begins in the video."""

    seconds: float
    label: str  # "3"
    flashed: bool = False  # something flashed on the screen after this step's action


def clock(seconds: float) -> str:
    seconds = max(0.0, seconds)
    return f"{int(seconds // 60)}:{seconds % 60:04.1f}"


class _MarkedSlider(QSlider):
    """A horizontal slider that draws a small mark (and the step's number) per step."""

    def __init__(self) -> None:
        super().__init__(Qt.Orientation.Horizontal)
        self.marks: list[StepMark] = []
        self.setMinimumHeight(34)

    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        if not self.marks or self.maximum() <= 0:
            return
        p = QPainter(self)
        span = max(1, self.width() - 12)
        for m in self.marks:
            x = 6 + round(span * min(1.0, m.seconds * TICKS_PER_S / self.maximum()))
            p.setPen(QColor("#e65100" if m.flashed else "#1565c0"))
            p.drawLine(x, 0, x, 7)
            p.drawText(QRect(x - 12, self.height() - 13, 24, 13), Qt.AlignmentFlag.AlignCenter, m.label)
        p.end()


class VideoPlayer(QWidget):
    playToggled = Signal(bool)  # True: play
    seekRequested = Signal(float)  # seconds into the video

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = QLabel("<i>No video: record a run (the Record box by Start) or open a recorded one.</i>")
        self.title.setWordWrap(True)
        self.picture = QLabel()
        self.picture.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.picture.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Ignored)
        self.picture.setMinimumHeight(120)
        self.play = QPushButton(icon("mdi6.play"), "Play")
        self.play.setCheckable(True)
        self.position = _MarkedSlider()
        self.time = QLabel("0:00.0")
        row = QHBoxLayout()  # the bar gets the whole width, even in a narrow dock
        row.addWidget(self.play)
        row.addStretch(1)
        row.addWidget(self.time)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(self.title)
        lay.addWidget(self.picture, 1)
        lay.addWidget(self.position)
        lay.addLayout(row)
        self.duration_s = 0.0
        self._frame: np.ndarray | None = None
        self.play.toggled.connect(self._toggled)
        self.position.sliderReleased.connect(lambda: self.seekRequested.emit(self.position.value() / TICKS_PER_S))
        self.set_enabled(False)

    def set_enabled(self, on: bool) -> None:
        for w in (self.play, self.position):
            w.setEnabled(on)

    def set_video(self, title: str, duration_s: float, marks: Sequence[StepMark]) -> None:
        """A video is loaded: its title, length and step marks."""
        self.title.setText(title)
        self.duration_s = max(0.0, duration_s)
        self.position.setRange(0, max(1, round(self.duration_s * TICKS_PER_S)))
        self.position.marks = list(marks)
        self.position.update()
        self.set_enabled(True)

    def clear(self, message: str) -> None:
        self.title.setText(message)
        self.picture.clear()
        self._frame = None
        self.set_playing(False)
        self.set_enabled(False)

    def show_frame(self, rgb: np.ndarray, seconds: float) -> None:
        """The frame shown at ``seconds`` into the video."""
        self._frame = rgb
        if not self.position.isSliderDown():
            self.position.setValue(round(seconds * TICKS_PER_S))
        self.time.setText(f"{clock(seconds)} / {clock(self.duration_s)}")
        self._paint()

    def set_playing(self, on: bool) -> None:
        self.play.blockSignals(True)
        self.play.setChecked(on)
        self.play.setText("Pause" if on else "Play")
        self.play.setIcon(icon("mdi6.pause" if on else "mdi6.play"))
        self.play.blockSignals(False)

    def _toggled(self, on: bool) -> None:
        self.set_playing(on)
        self.playToggled.emit(on)

    def _paint(self) -> None:
        if self._frame is None:
            return
        pix = QPixmap.fromImage(rgb_to_qimage(self._frame))
        box = self.picture.size()
        self.picture.setPixmap(pix.scaled(box, Qt.AspectRatioMode.KeepAspectRatio,
                                          Qt.TransformationMode.SmoothTransformation))

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._paint()
