"""scrcpy v1.24 wire format, client side: control messages and video packet headers.

Builds the exact byte layouts the v1.24 server reads (including the scroll and
clipboard messages with their ``buttons``, ``copy_key`` and ``sequence`` fields) and
parses the 12-byte video packet header.  Pure functions; no sockets, no decoding.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

SERVER_VERSION = "1.24"
SERVER_JAR_NAME = "scrcpy-server-v1.24.jar"
DEVICE_JAR_PATH = f"/data/local/tmp/{SERVER_JAR_NAME}"
DEVICE_NAME_FIELD_LENGTH = 64
HEADER_SIZE = 12
PACKET_FLAG_CONFIG = 1 << 63
PACKET_FLAG_KEY_FRAME = 1 << 62
PTS_MASK = PACKET_FLAG_KEY_FRAME - 1

TYPE_INJECT_KEYCODE = 0
TYPE_INJECT_TEXT = 1
TYPE_INJECT_TOUCH_EVENT = 2
TYPE_INJECT_SCROLL_EVENT = 3
TYPE_BACK_OR_SCREEN_ON = 4
TYPE_EXPAND_NOTIFICATION_PANEL = 5
TYPE_EXPAND_SETTINGS_PANEL = 6
TYPE_COLLAPSE_PANELS = 7
TYPE_GET_CLIPBOARD = 8
TYPE_SET_CLIPBOARD = 9
TYPE_SET_SCREEN_POWER_MODE = 10
TYPE_ROTATE_DEVICE = 11

ACTION_DOWN = 0
ACTION_UP = 1
ACTION_MOVE = 2

POINTER_ID_MOUSE = -1
POINTER_ID_VIRTUAL_FINGER = -2
BUTTON_PRIMARY = 1
TEXT_MAX_BYTES = 300


@dataclass(frozen=True, slots=True)
class PacketHeader:
    pts: int
    is_config: bool
    is_key_frame: bool
    size: int


def parse_header(data: bytes) -> PacketHeader:
    raw_pts, size = struct.unpack(">QI", data)
    return PacketHeader(
        pts=raw_pts & PTS_MASK,
        is_config=bool(raw_pts & PACKET_FLAG_CONFIG),
        is_key_frame=bool(raw_pts & PACKET_FLAG_KEY_FRAME),
        size=size,
    )


def server_command(max_size: int = 0, max_fps: int = 0, bit_rate: int = 8_000_000, control: bool = True) -> str:
    """The shell command that starts the v1.24 server (forward tunnel, frame meta on)."""
    opts = {
        "log_level": "info",
        "bit_rate": str(bit_rate),
        "max_size": str(max_size),
        "max_fps": str(max_fps),
        "lock_video_orientation": "-1",
        "tunnel_forward": "true",
        "control": "true" if control else "false",
        "display_id": "0",
        "show_touches": "false",
        "stay_awake": "false",
        "clipboard_autosync": "false",
        "send_frame_meta": "true",
        "power_off_on_close": "false",
        "downsize_on_error": "true",
        "cleanup": "true",
    }
    args = " ".join(f"{k}={v}" for k, v in opts.items())
    return f"CLASSPATH={DEVICE_JAR_PATH} app_process / com.genymobile.scrcpy.Server {SERVER_VERSION} {args}"


def keycode(action: int, code: int, repeat: int = 0, metastate: int = 0) -> bytes:
    return struct.pack(">BBiii", TYPE_INJECT_KEYCODE, action, code, repeat, metastate)


def text(value: str) -> bytes:
    data = value.encode("utf-8")
    if len(data) > TEXT_MAX_BYTES:
        raise ValueError(f"scrcpy text messages carry at most {TEXT_MAX_BYTES} bytes; split the text")
    return struct.pack(">BI", TYPE_INJECT_TEXT, len(data)) + data


def touch(action: int, x: int, y: int, width: int, height: int, *, pointer_id: int = POINTER_ID_VIRTUAL_FINGER,
          pressure: float = 1.0, buttons: int = BUTTON_PRIMARY) -> bytes:
    """A touch at frame pixel (x, y); ``width``/``height`` must equal the video frame size."""
    p = 0xFFFF if pressure >= 1.0 else max(0, int(pressure * 0x10000))
    return struct.pack(">BBqiiHHHi", TYPE_INJECT_TOUCH_EVENT, action, pointer_id, x, y, width, height, p, buttons)


def scroll(x: int, y: int, width: int, height: int, hscroll: int, vscroll: int, buttons: int = 0) -> bytes:
    return struct.pack(">BiiHHiii", TYPE_INJECT_SCROLL_EVENT, x, y, width, height, hscroll, vscroll, buttons)


def back_or_screen_on(action: int) -> bytes:
    return struct.pack(">BB", TYPE_BACK_OR_SCREEN_ON, action)


def get_clipboard(copy_key: int = 0) -> bytes:
    return struct.pack(">BB", TYPE_GET_CLIPBOARD, copy_key)


def set_clipboard(value: str, paste: bool = False, sequence: int = 0) -> bytes:
    data = value.encode("utf-8")
    return struct.pack(">BQBI", TYPE_SET_CLIPBOARD, sequence, int(paste), len(data)) + data


def set_screen_power_mode(mode: int) -> bytes:
    return struct.pack(">BB", TYPE_SET_SCREEN_POWER_MODE, mode)


def simple(message_type: int) -> bytes:
    """Messages with no payload: expand/collapse panels, rotate."""
    return bytes([message_type])
