"""A scrcpy-like H.264 stream for the record's tests: frames of a phone-sized picture
encoded with libx264 exactly as the served virtual phone's scrcpy server encodes them, cut
into the packets a ``MirroredDevice``'s stream tap hands its listeners, and a device whose
mirror "streams" them (what ``app.run_record.streams`` looks for)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from phone.adb.mirror import MirrorSource
from phone.adb.scrcpy_client import VideoPacket
from phone.adb.stream_tap import StreamTap
from phone.virtual.wire.scrcpy_video import H264Encoder, split_config
from vision.geometry import Size


def picture(i: int, w: int = 360, h: int = 800) -> np.ndarray:
    """Frame ``i``: a white screen with a bar that moves down a little each frame."""
    img = np.full((h, w, 3), 250, np.uint8)
    top = 40 + (i * 7) % (h - 120)
    img[top:top + 60, 30:w - 30] = (30, 90, 200)
    return img


class Stream:
    """Encodes pictures to packets; ``packets(n, start, fps)`` gives them with arrival times."""

    def __init__(self, w: int = 360, h: int = 800, gop: int = 10) -> None:
        self.encoder = H264Encoder(w, h, 1_000_000, gop=gop, fps=30)
        self.sent_config = False
        self.i = 0

    def next(self, received_at: float) -> list[VideoPacket]:
        out: list[VideoPacket] = []
        for data, key in self.encoder.encode(picture(self.i), self.i * 33_333):
            if not self.sent_config:
                config, data = split_config(data)
                out.append(VideoPacket(0, config, True, False, received_at))
                self.sent_config = True
            out.append(VideoPacket(self.i * 33_333, data, False, key, received_at))
        self.i += 1
        return out

    def packets(self, n: int, start: float | None = None, fps: float = 10.0) -> list[VideoPacket]:
        t0 = time.monotonic() if start is None else start
        return [p for k in range(n) for p in self.next(t0 + k / fps)]


@dataclass
class FakeMirror:
    running: bool = True
    source: MirrorSource = MirrorSource.SCRCPY
    device_size: Size = field(default_factory=lambda: Size(360, 800))


@dataclass
class StreamedDevice:
    """Just what the record of a run reads of a ``MirroredDevice``."""

    stream: StreamTap = field(default_factory=StreamTap)
    mirror: FakeMirror = field(default_factory=FakeMirror)

    def screen_size(self) -> Size:
        return self.mirror.device_size
