"""Writing the mirror's H.264 stream to an MP4 as it arrives, without re-encoding.

``VideoWriter.packet`` is called on the mirror's thread for every packet; it only queues
it (when more than ``max_queue_bytes`` wait, packets are dropped up to the next key frame,
so the mirror is never slowed and memory stays bounded).  A thread of its own muxes the
packets with PyAV into a *fragmented* MP4 (a fragment at least every second, flushed to
disk), so a run that is killed leaves a file every player and ``ffprobe`` read up to its
last second.  The first packets written are the stream's head (its configuration and the
packets since the last key frame), so a recording that starts mid-stream opens on the
current screen at once.  Times are the host's: a packet is shown from the moment its bytes
arrived, and the last one lasts until ``stop``, so the video is as long as the run.  The
recording stops by itself when the file would pass ``max_bytes`` or the stream changes
size (the phone rotated): ``stopped`` says why.

No Qt; PyAV only.  Nothing here decodes or encodes video.
"""

from __future__ import annotations

import collections
import io
import logging
import threading
import time
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, Protocol

log = logging.getLogger(__name__)

#: The MP4's time unit (milliseconds).
TIME_BASE = Fraction(1, 1000)
#: Fragmented MP4: playable when the writer is killed; a fragment at least every second.
MP4_OPTIONS = {"movflags": "frag_keyframe+empty_moov+default_base_moof", "frag_duration": "1000000",
               "flush_packets": "1"}


class Packet(Protocol):
    """One packet of the stream (``phone.adb.scrcpy_client.VideoPacket`` is one)."""

    @property
    def data(self) -> bytes: ...

    @property
    def is_config(self) -> bool: ...

    @property
    def is_key_frame(self) -> bool: ...

    @property
    def received_at(self) -> float: ...  # time.monotonic() when its bytes had arrived


@dataclass(frozen=True, slots=True)
class VideoStats:
    path: Path
    packets: int  # written to the file
    bytes: int  # of video data written
    dropped: int  # packets dropped because the writer fell behind
    started_mono: float
    ended_mono: float | None
    width: int
    height: int
    stopped: str  # why it stopped early ("" when it ran to the end)

    @property
    def seconds(self) -> float:
        end = self.ended_mono if self.ended_mono is not None else time.monotonic()
        return max(0.0, end - self.started_mono)


class VideoWriter:
    """See the module docstring.  ``start`` opens the writer; ``stop`` finishes the file."""

    def __init__(self, path: Path, *, max_bytes: int | None = None, max_queue_bytes: int = 16 * 1024 * 1024) -> None:
        self.path = Path(path)
        self.max_bytes = max_bytes
        self.max_queue_bytes = max_queue_bytes
        self._cond = threading.Condition()
        self._queue: collections.deque[Packet] = collections.deque()
        self._queued_bytes = 0
        self._waiting_key = False
        self._dropped = 0
        self._stop_at: float | None = None
        self._thread: threading.Thread | None = None
        self._started = 0.0
        self._written = self._bytes = 0
        self._size = (0, 0)
        self._stopped = ""
        self._ended: float | None = None

    # -- any thread -----------------------------------------------------------------------
    def start(self, head: list[Packet] | tuple[Packet, ...] = (), *, at_mono: float | None = None) -> VideoWriter:
        """Begin at ``at_mono`` (now), first writing ``head`` (config and packets since the
        last key frame) so the file opens on the current screen."""
        self._started = time.monotonic() if at_mono is None else at_mono
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._cond:
            for p in head:
                self._queue.append(p)
                self._queued_bytes += len(p.data)
        self._thread = threading.Thread(target=self._run, name=f"video-{self.path.name}", daemon=True)
        self._thread.start()
        return self

    def packet(self, packet: Packet) -> None:
        """Queue one packet (constant time; drops up to the next key frame when far behind)."""
        with self._cond:
            if self._stop_at is not None or self._stopped:
                return
            if self._waiting_key and not (packet.is_key_frame or packet.is_config):
                self._dropped += 1
                return
            if self._queued_bytes + len(packet.data) > self.max_queue_bytes and not packet.is_config:
                self._dropped += 1 + len(self._queue)
                self._queue.clear()
                self._queued_bytes = 0
                self._waiting_key = not packet.is_key_frame
                if self._waiting_key:
                    return
            self._waiting_key = False
            self._queue.append(packet)
            self._queued_bytes += len(packet.data)
            self._cond.notify()

    def stop(self, at_mono: float | None = None, timeout: float = 10.0) -> VideoStats:
        """Write what is queued, let the last frame last until ``at_mono`` (now) and close
        the file."""
        with self._cond:
            self._stop_at = time.monotonic() if at_mono is None else at_mono
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout)
        return self.stats()

    def stats(self) -> VideoStats:
        with self._cond:
            return VideoStats(self.path, self._written, self._bytes, self._dropped, self._started, self._ended,
                              self._size[0], self._size[1], self._stopped)

    # -- the writer's thread --------------------------------------------------------------------
    def _next(self) -> Packet | None:
        """The next packet to write, or None once stopping and nothing is left."""
        with self._cond:
            while not self._queue:
                if self._stop_at is not None:
                    return None
                self._cond.wait(0.5)
            p = self._queue.popleft()
            self._queued_bytes -= len(p.data)
            return p

    def _run(self) -> None:
        mux = _Muxer(self)
        try:
            while True:
                p = self._next()
                if p is None:
                    break
                if not mux.add(p):
                    break
        except Exception as exc:  # a broken writer stops the video, never the run
            log.exception("writing %s failed", self.path)
            with self._cond:
                self._stopped = self._stopped or f"the video could not be written: {exc}"
        finally:
            with self._cond:
                end = self._stop_at if self._stop_at is not None else time.monotonic()
                self._stop_at = end
                self._queue.clear()
            mux.close(end)
            with self._cond:
                self._ended = end

    def _note(self, written: int, nbytes: int, size: tuple[int, int]) -> None:
        with self._cond:
            self._written, self._bytes, self._size = written, nbytes, size

    def _give_up(self, why: str) -> None:
        log.info("recording %s stopped: %s", self.path, why)
        with self._cond:
            self._stopped = why


class _Muxer:
    """The PyAV side of the writer: one output file, packets delayed by one so each gets
    its real duration."""

    def __init__(self, writer: VideoWriter) -> None:
        self.w = writer
        self.out: Any = None
        self.stream: Any = None
        self.config = b""
        self.opened_with = b""  # the configuration the file was checked against last
        self.pending: tuple[bytes, bool, int] | None = None  # data, key frame, time (ms)
        self.last_ms = -1
        self.written = self.bytes = 0
        self.size = (0, 0)

    def add(self, p: Packet) -> bool:
        """Take one packet; False when the recording must stop."""
        if p.is_config:
            self.config = p.data
            return True
        data = p.data
        if p.is_key_frame and self.config and self.config != self.opened_with:
            size = _size_of(self.config, data)  # a new configuration: where the stream (re)starts
            if size is None:
                return True
            if self.out is None:
                self._open(size, data)
            elif size != self.size:
                self.w._give_up("the stream changed size (the phone rotated); the recording ends here")
                return False
            self.opened_with = self.config
        if self.out is None:
            return True  # wait for a key frame that can open the file
        if p.is_key_frame and self.config and not data.startswith(self.config):
            data = self.config + data  # in-band parameters at every key frame
        at_ms = max(self.last_ms + 1, round((p.received_at - self.w._started) * 1000))
        self.last_ms = at_ms
        self._flush_pending(at_ms)
        self.pending = (data, p.is_key_frame, at_ms)
        limit = self.w.max_bytes
        if limit is not None and self.bytes + len(data) > limit:
            self.pending = None
            self.w._give_up(f"the video reached its size limit ({limit / 1e6:.0f} MB)")
            return False
        return True

    def _open(self, size: tuple[int, int], first: bytes) -> None:
        import av

        probe = av.open(io.BytesIO(self.config + first), format="h264")
        try:
            template = probe.streams.video[0]
            self.out = av.open(str(self.w.path), mode="w", format="mp4", options=dict(MP4_OPTIONS))
            self.stream = self.out.add_stream_from_template(template)
            self.stream.time_base = TIME_BASE
        finally:
            probe.close()
        self.size = size

    def _flush_pending(self, next_ms: int) -> None:
        if self.pending is None:
            return
        import av

        data, key, at_ms = self.pending
        self.pending = None
        pkt = av.Packet(data)
        pkt.stream = self.stream
        pkt.time_base = TIME_BASE
        pkt.pts = pkt.dts = at_ms
        pkt.duration = max(1, next_ms - at_ms)
        pkt.is_keyframe = key
        self.out.mux(pkt)
        self.written += 1
        self.bytes += len(data)
        self.w._note(self.written, self.bytes, self.size)

    def close(self, end_mono: float) -> None:
        if self.out is None:
            return
        try:
            end_ms = max(self.last_ms + 1, round((end_mono - self.w._started) * 1000))
            self._flush_pending(end_ms)
        finally:
            self.out.close()
            self.out = None


def _size_of(config: bytes, first: bytes) -> tuple[int, int] | None:
    """Width and height the stream's parameter sets declare (PyAV's parser), or None."""
    import av

    try:
        probe = av.open(io.BytesIO(config + first), format="h264")
    except (av.error.FFmpegError, ValueError):
        return None
    try:
        ctx = probe.streams.video[0].codec_context
        return (int(ctx.width), int(ctx.height)) if ctx.width and ctx.height else None
    except (av.error.FFmpegError, IndexError):
        return None
    finally:
        probe.close()
