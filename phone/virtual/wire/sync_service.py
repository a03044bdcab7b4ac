"""The ``sync:`` service (adb push/pull/stat/ls) over one ADB stream.

Implements the v1 requests STAT, LIST, SEND, RECV and QUIT, plus STA2/LST2 (stat v2) for
hosts that ask for them, against ``VirtualFS``.  Each request is a 4-byte id and a
little-endian u32 length, then that many bytes.  It runs nothing and touches no phone.
"""

from __future__ import annotations

import logging
import struct

from phone.virtual.wire.adb_server import Stream
from phone.virtual.wire.vfs import VirtualFS

log = logging.getLogger(__name__)

SYNC_DATA_MAX = 64 * 1024


def _fail(stream: Stream, message: str) -> None:
    data = message.encode()
    stream.write(b"FAIL" + struct.pack("<I", len(data)) + data)


def serve_sync(stream: Stream, fs: VirtualFS) -> None:
    while True:
        try:
            header = stream.read_exact(8)
        except ConnectionError:
            return
        cmd, length = header[:4], struct.unpack("<I", header[4:])[0]
        if cmd == b"QUIT":
            return
        if length > 1024 and cmd != b"DATA":
            _fail(stream, "path too long")
            return
        arg = stream.read_exact(length) if length else b""
        path = arg.decode("utf-8", "replace")
        if cmd == b"STAT":
            entry = fs.stat(path)
            if entry is None:
                stream.write(b"STAT" + struct.pack("<III", 0, 0, 0))
            else:
                stream.write(b"STAT" + struct.pack("<III", entry.mode, entry.size & 0xFFFFFFFF, entry.mtime))
        elif cmd in (b"STA2", b"LST2"):
            entry = fs.stat(path)
            if entry is None:
                stream.write(cmd + struct.pack("<IQQIIIIQqqq", 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
            else:
                stream.write(
                    cmd
                    + struct.pack(
                        "<IQQIIIIQqqq", 0, 1, 1, entry.mode, 1, 2000, 2000, entry.size,
                        entry.mtime, entry.mtime, entry.mtime,
                    )
                )
        elif cmd == b"LIST":
            try:
                entries = fs.listdir(path)
            except FileNotFoundError:
                entries = []
            out = bytearray()
            for e in entries:
                name = e.name.encode()
                out += b"DENT" + struct.pack("<IIII", e.mode, e.size & 0xFFFFFFFF, e.mtime, len(name)) + name
            out += b"DONE" + struct.pack("<IIII", 0, 0, 0, 0)
            stream.write(bytes(out))
        elif cmd == b"SEND":
            target, _, mode_s = path.rpartition(",")
            if not target:
                target, mode_s = path, "420"
            try:
                mode = int(mode_s)
            except ValueError:
                mode = 0o644
            data = bytearray()
            while True:
                chunk_header = stream.read_exact(8)
                kind, n = chunk_header[:4], struct.unpack("<I", chunk_header[4:])[0]
                if kind == b"DATA":
                    if n > SYNC_DATA_MAX * 4:
                        _fail(stream, "data chunk too large")
                        return
                    data += stream.read_exact(n)
                elif kind == b"DONE":
                    break
                else:
                    _fail(stream, f"unexpected {kind!r} during SEND")
                    return
            try:
                fs.write(target, bytes(data), mode)
            except OSError as exc:
                _fail(stream, f"couldn't create file: {exc}")
                continue
            log.debug("sync: received %d bytes into %s", len(data), target)
            stream.write(b"OKAY" + struct.pack("<I", 0))
        elif cmd == b"RECV":
            try:
                content = fs.read(path)
            except OSError as exc:
                _fail(stream, str(exc))
                continue
            out = bytearray()
            for start in range(0, len(content), SYNC_DATA_MAX):
                chunk = content[start : start + SYNC_DATA_MAX]
                out += b"DATA" + struct.pack("<I", len(chunk)) + chunk
            out += b"DONE" + struct.pack("<I", 0)
            stream.write(bytes(out))
        else:
            _fail(stream, f"unknown sync command {cmd!r}")
            return
