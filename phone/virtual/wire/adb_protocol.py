"""ADB transport messages: the 24-byte header and its six commands.

Pure data and framing (pack, unpack, read one message from a socket); it knows nothing
about services, threads or phones.  All fields are little-endian u32:
``command, arg0, arg1, data_length, data_checksum, magic`` with ``magic = command ^ 0xFFFFFFFF``.
"""

from __future__ import annotations

import socket
import struct
from dataclasses import dataclass

A_SYNC = 0x434E5953
A_CNXN = 0x4E584E43
A_AUTH = 0x48545541
A_OPEN = 0x4E45504F
A_OKAY = 0x59414B4F
A_CLSE = 0x45534C43
A_WRTE = 0x45545257
A_STLS = 0x534C5453

#: Protocol version that lets both sides skip the payload checksum.
A_VERSION = 0x01000001
MAX_PAYLOAD = 1024 * 1024

AUTH_TOKEN = 1
AUTH_SIGNATURE = 2
AUTH_RSAPUBLICKEY = 3

_HEADER = struct.Struct("<6I")
HEADER_SIZE = _HEADER.size

COMMAND_NAMES = {
    A_SYNC: "SYNC",
    A_CNXN: "CNXN",
    A_AUTH: "AUTH",
    A_OPEN: "OPEN",
    A_OKAY: "OKAY",
    A_CLSE: "CLSE",
    A_WRTE: "WRTE",
    A_STLS: "STLS",
}


class ProtocolError(ConnectionError):
    """The peer sent bytes that are not a valid ADB message."""


@dataclass(frozen=True, slots=True)
class Message:
    command: int
    arg0: int
    arg1: int
    data: bytes = b""

    @property
    def name(self) -> str:
        return COMMAND_NAMES.get(self.command, hex(self.command))

    def pack(self, *, checksum: bool = False) -> bytes:
        crc = sum(self.data) & 0xFFFFFFFF if checksum else 0
        return (
            _HEADER.pack(
                self.command,
                self.arg0 & 0xFFFFFFFF,
                self.arg1 & 0xFFFFFFFF,
                len(self.data),
                crc,
                self.command ^ 0xFFFFFFFF,
            )
            + self.data
        )


def recv_exact(sock: socket.socket, n: int) -> bytes:
    """Read exactly ``n`` bytes or raise ``ConnectionError`` at end of stream."""
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("peer closed the connection")
        buf += chunk
    return bytes(buf)


def read_message(sock: socket.socket, max_payload: int = 16 * MAX_PAYLOAD) -> Message:
    header = recv_exact(sock, HEADER_SIZE)
    command, arg0, arg1, length, _crc, magic = _HEADER.unpack(header)
    if magic != command ^ 0xFFFFFFFF:
        raise ProtocolError(f"bad ADB message magic for command {command:#x}")
    if length > max_payload:
        raise ProtocolError(f"ADB payload of {length} bytes exceeds {max_payload}")
    data = recv_exact(sock, length) if length else b""
    return Message(command, arg0, arg1, data)


def connect_banner(props: dict[str, str], features: list[str], state: str = "device") -> bytes:
    """The CNXN payload a device sends: ``device::k=v;k=v;features=a,b``."""
    parts = [f"{k}={v}" for k, v in props.items()]
    parts.append("features=" + ",".join(features))
    return f"{state}::{';'.join(parts)}".encode()
