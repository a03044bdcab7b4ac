"""The video side of the served phone's scrcpy server: the frame size scrcpy computes
(``video_size``), the H.264 encoder (libx264 through PyAV, tuned like a phone's realtime
encoder), the split of a packet's leading SPS/PPS units, and the one-frame slot between
the capture and encode threads (the newest frame wins).  No sockets; it never decodes.
"""

from __future__ import annotations

import threading
from fractions import Fraction

import numpy as np


def video_size(width: int, height: int, max_size: int) -> tuple[int, int]:
    """Frame size the way scrcpy computes it: multiples of 8, longest side <= max_size."""
    w, h = width & ~7, height & ~7
    if max_size > 0 and max(w, h) > max_size:
        if w >= h:
            h = (h * max_size // w + 4) & ~7
            w = max_size & ~7
        else:
            w = (w * max_size // h + 4) & ~7
            h = max_size & ~7
    return max(w, 8), max(h, 8)


def split_config(data: bytes) -> tuple[bytes, bytes]:
    """Split leading SPS/PPS NAL units (types 7 and 8) off an Annex-B packet."""
    pos = 0
    config_end = 0
    while True:
        start = data.find(b"\x00\x00\x01", pos)
        if start < 0 or start + 3 >= len(data):
            break
        nal_type = data[start + 3] & 0x1F
        if nal_type not in (7, 8):
            break
        config_end = data.find(b"\x00\x00\x01", start + 3)
        if config_end < 0:
            return data, b""
        if data[config_end - 1] == 0:
            config_end -= 1  # 4-byte start code belongs to the next unit
        pos = config_end
    return data[:config_end], data[config_end:]


class H264Encoder:
    """libx264 through PyAV, tuned like a phone's realtime encoder."""

    def __init__(self, width: int, height: int, bit_rate: int, gop: int = 30, fps: int = 60) -> None:
        import av

        ctx = av.CodecContext.create("libx264", "w")
        ctx.width, ctx.height = width, height
        ctx.pix_fmt = "yuv420p"
        ctx.time_base = Fraction(1, 1_000_000)
        ctx.framerate = Fraction(fps)  # x264 budgets bits per frame from this, not from time_base
        ctx.bit_rate = bit_rate
        ctx.options = {"preset": "ultrafast", "tune": "zerolatency", "g": str(gop), "bf": "0"}
        self.ctx = ctx
        self.width, self.height = width, height

    def encode(self, rgb: np.ndarray, pts_us: int) -> list[tuple[bytes, bool]]:
        import av
        import cv2

        rgb = np.ascontiguousarray(rgb)
        if rgb.shape[1] != self.width or rgb.shape[0] != self.height:
            rgb = cv2.resize(rgb, (self.width, self.height), interpolation=cv2.INTER_AREA)
        # OpenCV's BT.601 conversion is 4-5x faster than PyAV's rgb24 -> yuv420p reformat
        yuv = np.asarray(cv2.cvtColor(rgb, cv2.COLOR_RGB2YUV_I420), dtype=np.uint8)
        frame = av.VideoFrame.from_ndarray(yuv, format="yuv420p")
        frame.pts = pts_us
        return [(bytes(p), bool(p.is_keyframe)) for p in self.ctx.encode(frame)]


class NewestSlot:
    """Holds one item; ``put`` replaces an untaken one (the newest frame wins)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._item: tuple[np.ndarray, int] | None = None

    def put(self, item: tuple[np.ndarray, int]) -> None:
        with self._cond:
            self._item = item
            self._cond.notify()

    def take(self, timeout: float) -> tuple[np.ndarray, int] | None:
        with self._cond:
            if self._item is None:
                self._cond.wait(timeout)
            item, self._item = self._item, None
            self._cond.notify_all()
            return item

    def wait_empty(self, timeout: float) -> bool:
        """Wait until the consumer took the item (so a new frame is not rendered in vain)."""
        with self._cond:
            return self._cond.wait_for(lambda: self._item is None, timeout)
