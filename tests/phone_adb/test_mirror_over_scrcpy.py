"""The live mirror against the served virtual phone over Debian's real adb: our scrcpy v3
client pushes the official server jar (verified by SHA-256), the served phone's
app_process starts its v3 server on the scid-named socket, H.264 is decoded with PyAV,
and input, text and the clipboard travel over the control socket."""

from __future__ import annotations

import shutil
import subprocess
import time

import numpy as np
import pytest

from agent.device import Key
from phone.adb import scrcpy_client
from phone.adb import scrcpy_protocol as proto
from phone.adb import scrcpy_server_jar as jars
from phone.adb.adb_device import AdbDevice
from phone.adb.mirror import Mirror, MirrorEventKind, MirrorSource
from tests.phone_adb.test_served_phone_over_adb import centre, find_switch, find_text_field, nodes


def _jar_or_none() -> jars.ServerJar | None:
    try:
        return jars.find_server_jar()
    except jars.ScrcpyJarError:
        return None


JAR = _jar_or_none()
pytestmark = [
    pytest.mark.adb,
    pytest.mark.skipif(JAR is None, reason=f"no official scrcpy server jar: {jars.INSTALL_HINT}"),
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


def wait_until(predicate, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


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
        # the mirror shows what the phone renders (H.264 is lossy: compare means)
        phone_img = np.asarray(served.phone.screenshot().image).astype(float)
        assert abs(phone_img.mean() - first.image.astype(float).mean()) < 4.0
        mirror.tap(*centre(switch))  # device pixels -> frame pixels -> 32-byte touch messages
        changed = wait_for_change(mirror, first.image.astype(int), first.index)
        assert changed is not None, "no new frame after the control-socket tap"
        stats = mirror.stats()
        assert stats.frames >= 2 and stats.decode_latency_ms > 0
    after = next(n for n in nodes(dev.dump_hierarchy()) if n.get("bounds") == switch.get("bounds"))
    assert after.get("checked") != before_checked


def test_unicode_text_and_the_clipboard_travel_over_the_control_socket(adb_env, served):
    served.server.adbd.state.adb_keyboard = False  # no IME trick: only scrcpy's clipboard paste can do this
    dev = AdbDevice(served.serial, adb_env.host)
    dev.open_app("com.android.settings")
    with Mirror(dev, max_size=480) as mirror:
        assert mirror.wait_frame(0, timeout=15) is not None and mirror.source is MirrorSource.SCRCPY
        mirror.tap(*centre(find_text_field(dev)))
        mirror.input_text("Hi ")  # the key map can type it: INJECT_TEXT
        mirror.input_text("Grüße 👋")  # it cannot: SET_CLIPBOARD with paste, acknowledged
        assert find_text_field(dev).get("text", "").endswith("Hi Grüße 👋")
        mirror.set_clipboard("東京 ✓ naïve")
        assert served.server.adbd.state.clipboard == "東京 ✓ naïve"
        served.server.adbd.state.clipboard = "copied on the phone ✂"
        assert mirror.get_clipboard() == "copied on the phone ✂"


def test_stopping_the_mirror_leaves_nothing_running_on_the_phone(adb_env, served):
    dev = AdbDevice(served.serial, adb_env.host)
    adbd = served.server.adbd
    with Mirror(dev, max_size=480) as mirror:
        assert mirror.wait_frame(0, timeout=15) is not None
        [server] = adbd.scrcpy_servers
        assert adbd.namespace.names() == [server.socket_name]
        assert server.socket_name.startswith("scrcpy_") and len(server.socket_name) == len("scrcpy_") + 8
    assert wait_until(lambda: not adbd.scrcpy_servers), "the scrcpy server is still running after stop()"
    assert adbd.namespace.names() == []
    assert not adbd.state.fs.exists(jars.DEVICE_JAR_PATH)  # cleanup=true: the server removed its jar


def test_two_clients_get_their_own_sockets_by_scid(adb_env, served):
    dev = AdbDevice(served.serial, adb_env.host)
    a = scrcpy_client.ScrcpyClient(dev.adb, max_size=320)
    b = scrcpy_client.ScrcpyClient(dev.adb, max_size=320)
    try:
        a.start()
        b.start()
        assert a.scid != b.scid
        assert sorted(served.server.adbd.namespace.names()) == sorted(
            [proto.socket_name(a.scid), proto.socket_name(b.scid)])
        assert a.read_packet().is_config and b.read_packet().is_config
    finally:
        a.stop()
        b.stop()


def test_stopping_the_served_phone_mid_stream_gives_a_device_gone_event(adb_env, served):
    dev = AdbDevice(served.serial, adb_env.host, timeout=5)
    events = []
    mirror = Mirror(dev, max_size=480, on_event=events.append).start()
    try:
        assert mirror.wait_frame(0, timeout=15) is not None
        t0 = time.monotonic()
        served.server.stop()  # pull the plug
        gone = mirror.wait_event(MirrorEventKind.DEVICE_GONE, timeout=10)
        assert gone is not None, [e.kind for e in events]
        assert time.monotonic() - t0 < 10
        assert served.serial in gone.message
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


def test_an_altered_jar_is_refused_and_the_mirror_polls_screenshots_saying_why(adb_env, served, tmp_path,
                                                                               monkeypatch):
    altered = tmp_path / "scrcpy-server.jar"
    shutil.copy(JAR.path, altered)
    with open(altered, "r+b") as f:
        f.seek(100)
        f.write(b"tampered")
    known = next(k for k in jars.KNOWN_JARS if k.version == JAR.version)
    monkeypatch.setattr(scrcpy_client, "find_server_jar", lambda: jars.verify_jar(altered, known))
    dev = AdbDevice(served.serial, adb_env.host)
    with Mirror(dev, poll_interval=0.1) as mirror:
        fallback = mirror.wait_event(MirrorEventKind.FALLBACK, timeout=15)
        assert fallback is not None and "refusing to push" in fallback.message
        frame = mirror.wait_frame(0, timeout=10)
        assert frame is not None and frame.source is MirrorSource.SCREENSHOTS
        assert np.array_equal(frame.image, np.asarray(served.phone.screenshot().image))
    assert not served.server.adbd.state.fs.exists(jars.DEVICE_JAR_PATH)  # nothing was pushed


def test_the_served_phone_runs_only_an_official_jar_of_the_clients_version(adb_env, served, tmp_path):
    fake = tmp_path / "scrcpy-server.jar"
    fake.write_bytes(b"PK\x03\x04 not the real server")

    def start(jar, version: str) -> str:
        adb_env.adb("-s", served.serial, "push", str(jar), jars.DEVICE_JAR_PATH)
        cmd = proto.server_command(jars.DEVICE_JAR_PATH, proto.ServerParams(version=version, scid=1))
        try:
            return adb_env.adb("-s", served.serial, "shell", cmd, timeout=10).stdout
        except subprocess.TimeoutExpired:
            return "(still running)"

    assert "ClassNotFoundException" in start(fake, JAR.version)
    assert "does not match the client (9.9)" in start(JAR.path, "9.9")


def test_a_mirrored_device_types_over_scrcpy_and_its_screenshots_are_the_mirrored_frames(adb_env, served):
    from phone.adb.mirror import MirroredDevice

    dev = MirroredDevice(AdbDevice(served.serial, adb_env.host))
    dev.open_app("com.android.settings")
    switch = find_switch(dev.inner)
    try:
        dev.start_mirror()
        assert dev.mirror.wait_frame(0, timeout=15) is not None and dev.mirror.source is MirrorSource.SCRCPY
        shot = dev.screenshot(with_hierarchy=True)
        assert shot.timings_ms[0][0] == "frame (scrcpy mirror)" and shot.hierarchy_xml
        phone = np.asarray(served.phone.screenshot().image).astype(float)
        assert shot.image.shape == phone.shape
        assert np.abs(shot.image.astype(float) - phone).mean() < 3.0  # H.264 at 8 Mbps: close, not equal
        [server] = served.server.adbd.scrcpy_servers
        dev.tap(*centre(switch))
        after = dev.screenshot()  # waits for the tap's frame
        assert server.received[proto.ControlType.INJECT_TOUCH_EVENT] == 2  # the tap went over scrcpy
        phone = np.asarray(served.phone.screenshot().image).astype(float)
        assert np.abs(after.image.astype(float) - phone).mean() < 3.0
        assert np.abs(after.image.astype(float) - shot.image.astype(float)).mean() > 0.05
        dev.stop_mirror()
        assert dev.screenshot().timings_ms[0][0] == "frame"  # no mirror: adb's screencap again
    finally:
        dev.close()
