"""scrcpy v3.3.x wire format, as the client speaks it: pure functions, no sockets.

Facts from Genymobile/scrcpy at tag v3.3.3 (``doc/develop.md``, the server's ``Options``,
``DesktopConnection``, ``Streamer``, ``ControlMessageReader``, ``DeviceMessageWriter``; the
client's serialisation tests are the byte vectors in ``tests/phone_adb/test_scrcpy_wire.py``):

* start: ``app_process / com.genymobile.scrcpy.Server <version> scid=<8 hex> key=value…``;
  the server listens on the abstract socket ``scrcpy_<scid as 8 hex digits>``;
* sockets in order video, (audio), control; on the first one the server sends a dummy
  byte (forward tunnel) and the device name in a 64-byte NUL-padded field;
* video: codec id u32, width u32, height u32, then packets behind a 12-byte header
  (u64 PTS whose bit 63 marks a config packet and bit 62 a key frame, u32 size);
* control messages (client to device) and device messages (device to client), all
  big-endian, first byte the type.

The served virtual phone imports these constants and builds its own reader and writer
from them, so tests can check that both ends agree byte for byte.
"""

from __future__ import annotations

import secrets
import struct
from dataclasses import dataclass
from enum import IntEnum

SERVER_CLASS = "com.genymobile.scrcpy.Server"
SOCKET_NAME_PREFIX = "scrcpy"
DEVICE_NAME_FIELD_LENGTH = 64
FRAME_HEADER_SIZE = 12
CODEC_META_SIZE = 12
CODEC_ID_H264 = 0x68323634  # "h264"
PACKET_FLAG_CONFIG = 1 << 63
PACKET_FLAG_KEY_FRAME = 1 << 62
PTS_MASK = PACKET_FLAG_KEY_FRAME - 1

MESSAGE_MAX_SIZE = 1 << 18
INJECT_TEXT_MAX_BYTES = 300
CLIPBOARD_TEXT_MAX_BYTES = MESSAGE_MAX_SIZE - 14  # type, sequence, paste flag, length
DEVICE_CLIPBOARD_TEXT_MAX_BYTES = MESSAGE_MAX_SIZE - 5  # type, length


class ControlType(IntEnum):
    INJECT_KEYCODE = 0
    INJECT_TEXT = 1
    INJECT_TOUCH_EVENT = 2
    INJECT_SCROLL_EVENT = 3
    BACK_OR_SCREEN_ON = 4
    EXPAND_NOTIFICATION_PANEL = 5
    EXPAND_SETTINGS_PANEL = 6
    COLLAPSE_PANELS = 7
    GET_CLIPBOARD = 8
    SET_CLIPBOARD = 9
    SET_DISPLAY_POWER = 10
    ROTATE_DEVICE = 11
    UHID_CREATE = 12
    UHID_INPUT = 13
    UHID_DESTROY = 14
    OPEN_HARD_KEYBOARD_SETTINGS = 15
    START_APP = 16
    RESET_VIDEO = 17


#: Control messages that carry no payload.
EMPTY_CONTROL_TYPES = frozenset({
    ControlType.EXPAND_NOTIFICATION_PANEL, ControlType.EXPAND_SETTINGS_PANEL, ControlType.COLLAPSE_PANELS,
    ControlType.ROTATE_DEVICE, ControlType.OPEN_HARD_KEYBOARD_SETTINGS, ControlType.RESET_VIDEO,
})


class DeviceMessageType(IntEnum):
    CLIPBOARD = 0
    ACK_CLIPBOARD = 1
    UHID_OUTPUT = 2


class KeyAction(IntEnum):
    DOWN = 0
    UP = 1


class MotionAction(IntEnum):
    DOWN = 0
    UP = 1
    MOVE = 2


class CopyKey(IntEnum):
    NONE = 0
    COPY = 1
    CUT = 2


POINTER_ID_MOUSE = -1
POINTER_ID_GENERIC_FINGER = -2
BUTTON_PRIMARY = 1
KEYCODE_PASTE = 279  # what the server injects for SET_CLIPBOARD with paste


# -- starting the server ---------------------------------------------------------------
def new_scid() -> int:
    """A random 31-bit session id, so two clients on one phone never share a socket."""
    return secrets.randbits(31)


def socket_name(scid: int | None) -> str:
    return SOCKET_NAME_PREFIX if scid is None else f"{SOCKET_NAME_PREFIX}_{scid:08x}"


@dataclass(frozen=True, slots=True)
class ServerParams:
    """What the client asks of the server (video on, audio off, forward tunnel)."""

    version: str
    scid: int
    max_size: int = 0
    max_fps: int = 0
    video_bit_rate: int = 8_000_000
    control: bool = True
    log_level: str = "info"

    def args(self) -> list[str]:
        return [
            f"scid={self.scid:08x}",
            f"log_level={self.log_level}",
            "audio=false",
            "video_codec=h264",
            f"max_size={self.max_size}",
            f"max_fps={self.max_fps}",
            f"video_bit_rate={self.video_bit_rate}",
            "tunnel_forward=true",
            f"control={'true' if self.control else 'false'}",
            "clipboard_autosync=false",
            "cleanup=true",
            "power_on=true",
        ]


def server_command(jar_path: str, params: ServerParams) -> str:
    """The shell command line that starts the server from the pushed jar."""
    return " ".join([f"CLASSPATH={jar_path}", "app_process", "/", SERVER_CLASS, params.version, *params.args()])


# -- video stream ----------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class PacketHeader:
    pts: int
    is_config: bool
    is_key_frame: bool
    size: int


def parse_frame_header(data: bytes) -> PacketHeader:
    raw_pts, size = struct.unpack(">QI", data)
    return PacketHeader(
        pts=raw_pts & PTS_MASK,
        is_config=bool(raw_pts & PACKET_FLAG_CONFIG),
        is_key_frame=bool(raw_pts & PACKET_FLAG_KEY_FRAME),
        size=size,
    )


@dataclass(frozen=True, slots=True)
class CodecMeta:
    codec_id: int
    width: int
    height: int


def parse_codec_meta(data: bytes) -> CodecMeta:
    codec_id, width, height = struct.unpack(">III", data)
    return CodecMeta(codec_id, width, height)


def parse_device_name(data: bytes) -> str:
    return data[:DEVICE_NAME_FIELD_LENGTH].split(b"\x00", 1)[0].decode("utf-8", "replace")


# -- fixed-point numbers (pressure, scroll) --------------------------------------------
def float_to_u16fp(value: float) -> int:
    """[0, 1] to u16 fixed point; 1.0 is 0xffff."""
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"pressure {value} outside [0, 1]")
    return min(0xFFFF, int(value * 0x10000))


def float_to_i16fp(value: float) -> int:
    """[-1, 1] to i16 fixed point; 1.0 is 0x7fff, -1.0 is -0x8000."""
    if not -1.0 <= value <= 1.0:
        raise ValueError(f"value {value} outside [-1, 1]")
    return max(-0x8000, min(0x7FFF, int(value * 0x8000)))


# -- control messages (client -> device) -----------------------------------------------
def _utf8_within(value: str, limit: int) -> bytes:
    data = value.encode("utf-8")
    if len(data) > limit:
        raise ValueError(f"{len(data)} bytes of text; one scrcpy message carries at most {limit}")
    return data


def keycode(action: KeyAction, code: int, repeat: int = 0, metastate: int = 0) -> bytes:
    return struct.pack(">BBiii", ControlType.INJECT_KEYCODE, action, code, repeat, metastate)


def text(value: str) -> bytes:
    data = _utf8_within(value, INJECT_TEXT_MAX_BYTES)
    return struct.pack(">BI", ControlType.INJECT_TEXT, len(data)) + data


def touch(action: MotionAction, x: int, y: int, width: int, height: int, *,
          pointer_id: int = POINTER_ID_GENERIC_FINGER, pressure: float = 1.0,
          action_button: int = 0, buttons: int = 0) -> bytes:
    """A touch at frame pixel (x, y); ``width``/``height`` must equal the video frame size
    (the server ignores touches for any other size)."""
    return struct.pack(
        ">BBqiiHHHii", ControlType.INJECT_TOUCH_EVENT, action, pointer_id, x, y, width, height,
        float_to_u16fp(pressure), action_button, buttons,
    )


def scroll(x: int, y: int, width: int, height: int, hscroll: float, vscroll: float, buttons: int = 0) -> bytes:
    """Scroll by ``hscroll``/``vscroll`` notches, each in [-16, 16]."""
    h = float_to_i16fp(max(-1.0, min(1.0, hscroll / 16)))
    v = float_to_i16fp(max(-1.0, min(1.0, vscroll / 16)))
    return struct.pack(">BiiHHhhi", ControlType.INJECT_SCROLL_EVENT, x, y, width, height, h, v, buttons)


def back_or_screen_on(action: KeyAction) -> bytes:
    return struct.pack(">BB", ControlType.BACK_OR_SCREEN_ON, action)


def get_clipboard(copy_key: CopyKey = CopyKey.NONE) -> bytes:
    return struct.pack(">BB", ControlType.GET_CLIPBOARD, copy_key)


def set_clipboard(value: str, *, paste: bool, sequence: int = 0) -> bytes:
    data = _utf8_within(value, CLIPBOARD_TEXT_MAX_BYTES)
    return struct.pack(">BQBI", ControlType.SET_CLIPBOARD, sequence, int(paste), len(data)) + data


def set_display_power(on: bool) -> bytes:
    return struct.pack(">BB", ControlType.SET_DISPLAY_POWER, int(on))


def empty(message_type: ControlType) -> bytes:
    """Messages without payload: expand/collapse panels, rotate, keyboard settings, reset video."""
    if message_type not in EMPTY_CONTROL_TYPES:
        raise ValueError(f"{message_type!r} carries a payload")
    return bytes([message_type])


# -- device messages (device -> client) ------------------------------------------------
@dataclass(frozen=True, slots=True)
class ClipboardMessage:
    text: str


@dataclass(frozen=True, slots=True)
class AckClipboardMessage:
    sequence: int


@dataclass(frozen=True, slots=True)
class UhidOutputMessage:
    id: int
    data: bytes


DeviceMessage = ClipboardMessage | AckClipboardMessage | UhidOutputMessage


class DeviceMessageReader:
    """Splits the control socket's incoming bytes into device messages (any chunking)."""

    def __init__(self) -> None:
        self._buf = bytearray()

    @property
    def pending(self) -> int:
        return len(self._buf)

    def feed(self, data: bytes) -> list[DeviceMessage]:
        self._buf += data
        out: list[DeviceMessage] = []
        while True:
            message, used = self._parse_one()
            if message is None:
                return out
            del self._buf[:used]
            out.append(message)

    def _parse_one(self) -> tuple[DeviceMessage | None, int]:
        buf = self._buf
        if not buf:
            return None, 0
        kind = buf[0]
        if kind == DeviceMessageType.CLIPBOARD:
            if len(buf) < 5:
                return None, 0
            (n,) = struct.unpack_from(">I", buf, 1)
            if n > DEVICE_CLIPBOARD_TEXT_MAX_BYTES:
                raise ValueError(f"clipboard message of {n} bytes exceeds the protocol limit")
            if len(buf) < 5 + n:
                return None, 0
            return ClipboardMessage(bytes(buf[5 : 5 + n]).decode("utf-8", "replace")), 5 + n
        if kind == DeviceMessageType.ACK_CLIPBOARD:
            if len(buf) < 9:
                return None, 0
            (seq,) = struct.unpack_from(">Q", buf, 1)
            return AckClipboardMessage(seq), 9
        if kind == DeviceMessageType.UHID_OUTPUT:
            if len(buf) < 5:
                return None, 0
            uid, n = struct.unpack_from(">HH", buf, 1)
            if len(buf) < 5 + n:
                return None, 0
            return UhidOutputMessage(uid, bytes(buf[5 : 5 + n])), 5 + n
        raise ValueError(f"unknown device message type {kind}: the control stream is out of step")
