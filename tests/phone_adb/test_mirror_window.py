"""The window on a phone reached over Debian's real adb (the served virtual phone, not the
in-process one): frames come from the scrcpy v3 mirror, taps on the mirror travel over
the control socket, killing the phone shows "phone gone" within 10 s, and serving it
again on the same address resumes mirroring without restarting the window."""

from __future__ import annotations

import time

import pytest

import tests.phone_adb.window_over_adb as over_adb
from app.gui.devices import DeviceChoice
from app.gui.window import MainWindow
from phone.adb import scrcpy_server_jar as jars
from phone.adb.mirror import MirroredDevice
from phone.adb.scrcpy_protocol import ControlType
from tests.gui.fakes import FixedParser
from tests.phone_adb.conftest import make_phone
from tests.phone_adb.test_served_phone_over_adb import centre, find_switch

pytestmark = over_adb.MARKS


@pytest.fixture
def window(qtbot, adb_env, served):
    parser = FixedParser()
    w = MainWindow(None, discover=False, parser_factory=lambda: parser, live_parse=False)
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    w.connect_device(DeviceChoice(served.serial, "Served phone", is_virtual=False))
    qtbot.waitUntil(lambda: w.view.frame is not None, timeout=20000)
    yield w
    w.close()
    # closing the window ends the mirror, the scrcpy client's threads and the phone's server
    qtbot.waitUntil(lambda: not _mirror_threads() and not served.server.adbd.scrcpy_servers, timeout=10000)


def _mirror_threads() -> list[str]:
    import threading

    return [t.name for t in threading.enumerate() if t.is_alive() and t.name.startswith(("mirror-", "scrcpy-"))]


def test_the_window_mirrors_an_adb_phone_through_scrcpy_and_taps_over_the_control_socket(window, served, qtbot):
    assert isinstance(window.session.device, MirroredDevice)
    qtbot.waitUntil(lambda: "scrcpy v3" in window.session.mirror.source_note, timeout=10000)
    assert window.view.frame.shape[:2] == (2400, 1080)  # device pixels
    mirror = window.session.device.mirror
    assert mirror is not None and mirror.source.value == "scrcpy"
    adb_dev = window.session.device.inner
    adb_dev.open_app("com.android.settings")
    switch = find_switch(adb_dev)
    before_checked = switch.get("checked")
    [server] = served.server.adbd.scrcpy_servers
    window.agent_device().tap(*centre(switch))  # what the agent, macros and manual control use
    # down and up arrive over the control socket (not as `input tap` shell commands)
    qtbot.waitUntil(lambda: server.received[ControlType.INJECT_TOUCH_EVENT] == 2, timeout=5000)
    qtbot.waitUntil(lambda: find_switch(adb_dev).get("checked") != before_checked, timeout=5000)
    qtbot.waitUntil(lambda: "fps · scrcpy v3" in window.fps_status.text(), timeout=5000)


def test_killing_the_phone_shows_phone_gone_and_serving_it_again_resumes_mirroring(window, adb_env, served, qtbot):
    from phone.virtual.wire import serve_phone

    port = served.server.port
    frames = window.session.mirror.frames
    qtbot.waitUntil(lambda: window.session.mirror.frames > frames, timeout=5000)
    t0 = time.monotonic()
    served.server.stop()  # the phone is gone mid-stream
    qtbot.waitUntil(lambda: "phone gone" in window.device_status.text(), timeout=10000)
    gone_after = time.monotonic() - t0
    assert gone_after < 10
    again = serve_phone(make_phone(), port=port)  # the same phone comes back on the same address
    try:
        qtbot.waitUntil(lambda: "phone gone" not in window.device_status.text(), timeout=20000)
        frames = window.session.mirror.frames
        qtbot.waitUntil(lambda: window.session.mirror.frames > frames + 2, timeout=15000)
        assert "scrcpy v3" in window.session.mirror.source_note
    finally:
        window.close()
        again.stop()


def test_without_a_verified_jar_the_window_polls_screenshots_and_says_why(qtbot, adb_env, served, monkeypatch):
    from phone.adb import scrcpy_client

    def missing():
        raise jars.ScrcpyJarError("the official scrcpy v3 server jar is not installed", jars.INSTALL_HINT)

    monkeypatch.setattr(scrcpy_client, "find_server_jar", missing)
    w = MainWindow(None, discover=False, parser_factory=FixedParser, live_parse=False)
    qtbot.addWidget(w)
    w.show()
    try:
        w.connect_device(DeviceChoice(served.serial, "Served phone", is_virtual=False))
        qtbot.waitUntil(lambda: w.view.frame is not None, timeout=20000)
        qtbot.waitUntil(lambda: "screenshots" in w.fps_status.text(), timeout=5000)
        assert "not installed" in w.fps_status.text() and "uiautodev" in w.session.mirror.source_note
        assert w.session.device.mirror.source.value == "screenshots"
    finally:
        w.close()
