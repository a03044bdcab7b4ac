"""Where a mirror's stream can be listened to: its decoded frames and its H.264 packets.

A ``StreamTap`` belongs to a ``MirroredDevice`` and outlives each ``Mirror`` it starts, so
a listener stays subscribed across stream restarts.  The mirror's thread calls ``frame``
and ``packet``; each listener is called right there and must return at once (park the
item, wake a thread of its own).  The tap also keeps the stream's *head* — the newest
configuration packet and the packets since the last key frame, at most ``max_head_bytes``
— which ``listen_packets`` hands a new packet listener together with the subscription,
under one lock, so a recording that starts mid-stream misses nothing and gets nothing
twice.  A failing listener is logged and kept.  No Qt, no I/O.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)

Unsubscribe = Callable[[], None]


class StreamTap:
    """See the module docstring.  Frames are ``phone.adb.mirror.MirrorFrame``s, packets
    ``phone.adb.scrcpy_client.VideoPacket``s."""

    def __init__(self, max_head_bytes: int = 16 * 1024 * 1024) -> None:
        self.max_head_bytes = max_head_bytes
        self._lock = threading.Lock()
        self._frame_listeners: list[Callable[[Any], None]] = []
        self._packet_listeners: list[Callable[[Any], None]] = []
        self._config: Any = None
        self._gop: list[Any] = []
        self._gop_bytes = 0

    # -- the mirror's side --------------------------------------------------------------------
    def frame(self, frame: Any) -> None:
        for fn in self._frame_listeners:  # a copy is swapped in on (un)subscribe: no lock needed
            try:
                fn(frame)
            except Exception:
                log.exception("a frame listener failed")

    def packet(self, packet: Any) -> None:
        with self._lock:
            if packet.is_config:
                self._config, self._gop, self._gop_bytes = packet, [], 0
            elif packet.is_key_frame:
                self._gop, self._gop_bytes = [packet], len(packet.data)
            elif self._gop:
                self._gop_bytes += len(packet.data)
                if self._gop_bytes > self.max_head_bytes:  # too long since a key frame: start over at the next
                    self._gop, self._gop_bytes = [], 0
                else:
                    self._gop.append(packet)
            listeners = self._packet_listeners
        for fn in listeners:
            try:
                fn(packet)
            except Exception:
                log.exception("a packet listener failed")

    # -- listeners -------------------------------------------------------------------------------
    def listen_frames(self, fn: Callable[[Any], None]) -> Unsubscribe:
        with self._lock:
            self._frame_listeners = [*self._frame_listeners, fn]
        return lambda: self._drop("_frame_listeners", fn)

    def listen_packets(self, fn: Callable[[Any], None]) -> tuple[list[Any], Unsubscribe]:
        """Subscribe ``fn``; returns the stream's head (what ``fn`` needs first) and how to
        unsubscribe."""
        with self._lock:
            head = ([self._config] if self._config is not None and self._gop else []) + list(self._gop)
            self._packet_listeners = [*self._packet_listeners, fn]
        return head, lambda: self._drop("_packet_listeners", fn)

    def _drop(self, name: str, fn: Callable[[Any], None]) -> None:
        with self._lock:
            setattr(self, name, [f for f in getattr(self, name) if f is not fn])

    def reset(self) -> None:
        """A new stream starts (its own configuration will follow): forget the head."""
        with self._lock:
            self._config, self._gop, self._gop_bytes = None, [], 0
