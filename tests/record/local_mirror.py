"""An in-process virtual phone that streams like a mirrored one, for the record's tests.

``LocalMirroredPhone`` wraps a ``VirtualPhone`` whose toasts and snackbars last their
seconds: a thread renders its screen ten times a second and, like ``phone.adb.mirror``,
hands each frame (``MirrorFrame``) and the frame's H.264 packets (libx264, as the served
phone's scrcpy server encodes) to a ``StreamTap``.  Every call into the phone holds one
lock.  The runner, the MCP service and ``app.run_record`` see a streamed phone (``stream``,
``mirror``); no adb, no sockets.  The full path (adb, scrcpy v3, a phone in its own
process) is ``tests/phone_adb/test_run_record_served.py``.
"""

from __future__ import annotations

import re
import threading
import time
from typing import Any

from phone.adb.mirror import MirrorFrame, MirrorSource
from phone.adb.scrcpy_client import VideoPacket
from phone.adb.stream_tap import StreamTap
from phone.virtual.phone import VirtualPhone
from phone.virtual.wire.scrcpy_video import H264Encoder, split_config
from tests.record.stream import FakeMirror


def answer(prompt: str) -> str:
    """A scripted model for "Give Carla Mendes a call" (zero-shot replies): the next step
    from the last screen in its prompt — open Contacts, open Carla's card, call — and "done"
    only once the screen's description says what flashed."""
    screen = (re.findall(r"<screen>(.*?)</screen>", prompt, re.S) or [prompt])[-1]
    if "Flashed on the screen after the last action" in screen or "Appeared after the last action" in screen:
        return "done"
    if "Carla Mendes" in screen and "Contact info" in screen:
        return "wait" if "tap Call" in prompt else "tap Call"
    if "Carla Mendes" in screen:
        return "tap Carla Mendes"
    return "open Contacts"


class LocalMirroredPhone:
    def __init__(self, fps: float = 10.0) -> None:
        self.phone = VirtualPhone(profile="small", timed_flashes=True)
        self.lock = threading.RLock()
        self.stream = StreamTap()
        size = self.phone.screen_size()
        self.mirror = FakeMirror(device_size=size)
        self.fps = fps
        self._encoder = H264Encoder(size.width, size.height, 2_000_000, gop=20, fps=int(fps))
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="local-mirror", daemon=True)
        self.frames = 0

    def start(self) -> LocalMirroredPhone:
        self._thread.start()
        while self.frames == 0:
            time.sleep(0.01)
        return self

    def _run(self) -> None:
        config_sent = False
        while not self._stop.is_set():
            t = time.monotonic()
            with self.lock:
                self.phone.tick_flashes()
                image = self.phone.screenshot().image
            self.frames += 1
            for data, key in self._encoder.encode(image, int(t * 1e6)):
                if not config_sent:
                    config, data = split_config(data)
                    self.stream.packet(VideoPacket(0, config, True, False, t))
                    config_sent = True
                self.stream.packet(VideoPacket(int(t * 1e6), data, False, key, t))
            self.stream.frame(MirrorFrame(image, self.frames, t, time.monotonic(), MirrorSource.SCRCPY))
            self._stop.wait(max(0.0, 1 / self.fps - (time.monotonic() - t)))

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self.phone.close()

    # -- the Device the runner drives, one call at a time --------------------------------------
    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.phone, name)
        if not callable(attr):
            return attr

        def locked(*args: Any, **kwargs: Any) -> Any:
            with self.lock:
                return attr(*args, **kwargs)

        return locked
