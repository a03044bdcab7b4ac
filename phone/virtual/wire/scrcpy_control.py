"""The scrcpy v3 control channel as the served phone's server reads and writes it: one
control message decoded from the client's bytes (``read_control_message``, built from the
protocol's constants the way the server's ``ControlMessageReader`` does) and the device
messages sent back (clipboard, clipboard acknowledgement).  Bytes in, values out: no
sockets, no phone.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass

from phone.adb.scrcpy_protocol import EMPTY_CONTROL_TYPES, MESSAGE_MAX_SIZE, ControlType, DeviceMessageType


@dataclass(frozen=True, slots=True)
class ControlMessage:
    """One decoded control message; fields not used by its type keep their defaults."""

    type: ControlType
    action: int = 0
    keycode: int = 0
    repeat: int = 0
    metastate: int = 0
    text: str = ""
    pointer_id: int = 0
    x: int = 0
    y: int = 0
    screen_width: int = 0
    screen_height: int = 0
    pressure: float = 0.0
    action_button: int = 0
    buttons: int = 0
    hscroll: float = 0.0
    vscroll: float = 0.0
    copy_key: int = 0
    paste: bool = False
    sequence: int = 0
    on: bool = False
    id: int = 0
    data: bytes = b""


def u16fp_to_float(value: int) -> float:
    return 1.0 if value == 0xFFFF else value / 0x10000


def i16fp_to_float(value: int) -> float:
    return 1.0 if value == 0x7FFF else value / 0x8000


def read_control_message(read: Callable[[int], bytes]) -> ControlMessage:
    """Read one control message with ``read(n)`` (exactly n bytes), the way the v3 server's
    reader does; raises ``ValueError`` for an unknown type or an oversized payload."""

    def string(size_bytes: int) -> str:
        return blob(size_bytes).decode("utf-8", "replace")

    def blob(size_bytes: int) -> bytes:
        n = int.from_bytes(read(size_bytes), "big")
        if n > MESSAGE_MAX_SIZE:
            raise ValueError(f"{n}-byte payload exceeds the protocol limit")
        return read(n) if n else b""

    def position() -> tuple[int, int, int, int]:
        x, y, w, h = struct.unpack(">iiHH", read(12))
        return x, y, w, h

    raw = read(1)[0]
    try:
        kind = ControlType(raw)
    except ValueError:
        raise ValueError(f"Unknown event type: {raw}") from None
    if kind is ControlType.INJECT_KEYCODE:
        action, code, repeat, meta = struct.unpack(">Biii", read(13))
        return ControlMessage(kind, action=action, keycode=code, repeat=repeat, metastate=meta)
    if kind is ControlType.INJECT_TEXT:
        return ControlMessage(kind, text=string(4))
    if kind is ControlType.INJECT_TOUCH_EVENT:
        action, pointer = struct.unpack(">Bq", read(9))
        x, y, w, h = position()
        pressure, action_button, buttons = struct.unpack(">Hii", read(10))
        return ControlMessage(kind, action=action, pointer_id=pointer, x=x, y=y, screen_width=w, screen_height=h,
                              pressure=u16fp_to_float(pressure), action_button=action_button, buttons=buttons)
    if kind is ControlType.INJECT_SCROLL_EVENT:
        x, y, w, h = position()
        hs, vs, buttons = struct.unpack(">hhi", read(8))
        return ControlMessage(kind, x=x, y=y, screen_width=w, screen_height=h, hscroll=i16fp_to_float(hs) * 16,
                              vscroll=i16fp_to_float(vs) * 16, buttons=buttons)
    if kind is ControlType.BACK_OR_SCREEN_ON:
        return ControlMessage(kind, action=read(1)[0])
    if kind is ControlType.GET_CLIPBOARD:
        return ControlMessage(kind, copy_key=read(1)[0])
    if kind is ControlType.SET_CLIPBOARD:
        sequence, paste = struct.unpack(">QB", read(9))
        return ControlMessage(kind, sequence=sequence, paste=paste != 0, text=string(4))
    if kind is ControlType.SET_DISPLAY_POWER:
        return ControlMessage(kind, on=read(1)[0] != 0)
    if kind in EMPTY_CONTROL_TYPES:
        return ControlMessage(kind)
    if kind is ControlType.UHID_CREATE:
        uid, _vendor, _product = struct.unpack(">HHH", read(6))
        name = string(1)
        return ControlMessage(kind, id=uid, text=name, data=blob(2))
    if kind is ControlType.UHID_INPUT:
        (uid,) = struct.unpack(">H", read(2))
        return ControlMessage(kind, id=uid, data=blob(2))
    if kind is ControlType.UHID_DESTROY:
        (uid,) = struct.unpack(">H", read(2))
        return ControlMessage(kind, id=uid)
    if kind is ControlType.START_APP:
        return ControlMessage(kind, text=string(1))
    raise ValueError(f"Unknown event type: {raw}")


def clipboard_message(text: str) -> bytes:
    """Device message carrying the phone's clipboard (truncated on a character boundary)."""
    data = text.encode("utf-8")
    limit = MESSAGE_MAX_SIZE - 5
    if len(data) > limit:
        data = data[:limit].decode("utf-8", "ignore").encode("utf-8")
    return struct.pack(">BI", DeviceMessageType.CLIPBOARD, len(data)) + data


def ack_clipboard_message(sequence: int) -> bytes:
    return struct.pack(">BQ", DeviceMessageType.ACK_CLIPBOARD, sequence)
