"""The uiautomator2 path, end to end: the real ``uiautomator2`` library (3.7.x) pushes its
``u2.jar``, starts its server on the served virtual phone through Debian's ``adb`` and talks
JSON-RPC to it over adb's ``tcp:9008`` service; ``AdbDevice`` uses that server for the
hierarchy, taps and Unicode text, and falls back to ``uiautomator dump`` with a reason."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterator

import numpy as np
import pytest

from agent.device import DeviceError
from phone.adb import u2_link
from phone.adb.adb_device import AdbDevice
from vision.geometry import Rect

pytestmark = pytest.mark.adb

uiautomator2 = pytest.importorskip("uiautomator2", reason="the uiautomator2 library is not installed (pyproject dependency)")


def nodes(xml: str) -> list[ET.Element]:
    return list(ET.fromstring(xml.encode("utf-8")).iter("node"))


def centre(node: ET.Element) -> tuple[int, int]:
    c = Rect.from_bounds_string(node.get("bounds", "")).center
    return c.x, c.y


def by_label(xml: str, label: str) -> ET.Element:
    for n in nodes(xml):
        if label in (n.get("text"), n.get("content-desc")):
            return n
    raise AssertionError(f"no node labelled {label!r} on screen")


def text_field(xml: str) -> ET.Element:
    for n in nodes(xml):
        if n.get("class") == "android.widget.EditText":
            return n
    raise AssertionError("no text field on screen")


@pytest.fixture
def u2(adb_env, served, monkeypatch) -> Iterator:
    """``uiautomator2.connect`` exactly as a user calls it, pointed at the test's adb server."""
    import adbutils

    # The library looks devices up through adbutils' default client, which read
    # ANDROID_ADB_SERVER_PORT when adbutils was first imported: give it the test's server.
    host, port = adb_env.host.resolved()
    monkeypatch.setattr(adbutils, "adb", adbutils.AdbClient(host=host, port=port))
    d = uiautomator2.connect(served.serial)
    try:
        yield d
    finally:
        d.stop_uiautomator(wait=False)


def shell_dump(adb_env, serial: str) -> tuple[str, str]:
    """(output of ``uiautomator dump``, the dumped file) through Debian's adb."""
    out = adb_env.adb("-s", serial, "shell", "uiautomator", "dump", "/sdcard/d.xml").stdout
    xml = adb_env.adb("-s", serial, "shell", "cat", "/sdcard/d.xml").stdout if "dumped to" in out else ""
    return out, xml


def open_stopwatch_and_start(d) -> None:
    d.click(*centre(by_label(d.dump_hierarchy(), "Clock")))
    d.click(*centre(by_label(d.dump_hierarchy(), "Stopwatch")))
    d.click(*centre(by_label(d.dump_hierarchy(), "Start")))


def stopwatch_reading(xml: str) -> str:
    for n in nodes(xml):
        if n.get("resource-id", "").endswith("stopwatch_time_text"):
            return n.get("text", "")
    raise AssertionError("no stopwatch reading on screen")


def test_the_uiautomator2_library_dumps_taps_and_types_unicode_on_the_served_phone(served, u2):
    xml = u2.dump_hierarchy()
    assert ET.fromstring(xml.encode("utf-8")).tag == "hierarchy"
    u2.click(*centre(by_label(xml, "Settings")))  # a tap through JSON-RPC `click`
    xml = u2.dump_hierarchy()
    assert served.phone.foreground()[0] == "com.android.settings"
    u2.click(*centre(text_field(xml)))
    u2.send_keys("Grüße")  # the library sets the clipboard and pastes it
    field = text_field(u2.dump_hierarchy())
    assert field.get("text") == "Grüße"
    info = u2.info
    size = served.phone.screen_size()
    assert (info["displayWidth"], info["displayHeight"]) == (size.width, size.height)
    assert info["currentPackageName"] == "com.android.settings"


def test_the_server_dump_is_the_xml_uiautomator_dump_writes(adb_env, served, u2):
    out, from_shell = shell_dump(adb_env, served.serial)
    assert "UI hierchary dumped to" in out
    assert u2.dump_hierarchy() == from_shell


def test_the_library_pushed_the_jar_it_started_and_the_phone_holds_the_pinned_bytes(adb_env, served, u2):
    listing = adb_env.adb("-s", served.serial, "shell", "sha256sum", u2_link.DEVICE_JAR).stdout
    assert listing.split()[0] == u2_link.PINNED_JAR_SHA256["3.7.1"]


def test_a_running_stopwatch_breaks_uiautomator_dump_but_not_the_u2_server(adb_env, served, u2):
    open_stopwatch_and_start(u2)
    assert served.phone.is_animating()
    out, _ = shell_dump(adb_env, served.serial)
    assert "ERROR: could not get idle state." in out
    plain = AdbDevice(served.serial, adb_env.host, use_u2=False)
    with pytest.raises(DeviceError) as err:
        plain.dump_hierarchy(attempts=2)
    assert "could not get idle state" in str(err.value)
    dev = AdbDevice(served.serial, adb_env.host)
    first = stopwatch_reading(dev.screenshot(with_hierarchy=True).hierarchy_xml or "")
    second = stopwatch_reading(dev.screenshot(with_hierarchy=True).hierarchy_xml or "")
    assert first != second  # it really ticks between frames
    assert dev.hierarchy_path.method == "uiautomator2"
    by_label(dev.dump_hierarchy(), "Pause").get("bounds")  # the hierarchy is there while it runs
    u2.click(*centre(by_label(u2.dump_hierarchy(), "Pause")))
    assert not served.phone.is_animating()
    assert "dumped to" in shell_dump(adb_env, served.serial)[0]


def test_adb_device_takes_the_hierarchy_and_input_through_the_server(adb_env, served):
    dev = AdbDevice(served.serial, adb_env.host)
    assert dev.hierarchy_path.method == "uiautomator2" and "first" in dev.hierarchy_path.reason
    screen = dev.screenshot(with_hierarchy=True)
    assert dict(screen.timings_ms).keys() == {"frame", "hierarchy"}
    assert dev.hierarchy_path.method == "uiautomator2" and "SHA-256 verified" in dev.hierarchy_path.reason
    dev.tap(*centre(by_label(screen.hierarchy_xml or "", "Settings")))
    dev.tap(*centre(text_field(dev.dump_hierarchy())))
    dev.set_clipboard("keep me")
    served.server.adbd.state.adb_keyboard = False  # no IME: only the server can type this
    dev.input_text("Grüße 東京 ✓")
    assert text_field(dev.dump_hierarchy()).get("text") == "Grüße 東京 ✓"
    assert dev.get_clipboard() == "keep me"  # pasting left the user's clip alone
    dev.close()


def test_an_unpinned_jar_is_never_pushed_and_the_dump_path_says_why(adb_env, served, monkeypatch):
    monkeypatch.setattr(u2_link, "PINNED_JAR_SHA256", {"3.7.1": "0" * 64})
    dev = AdbDevice(served.serial, adb_env.host)
    assert nodes(dev.dump_hierarchy())  # through `uiautomator dump`
    path = dev.hierarchy_path
    assert path.method == "uiautomator dump"
    assert "pinned SHA-256" in path.reason and "pip install" in path.reason
    assert not served.server.adbd.state.fs.exists(u2_link.DEVICE_JAR)
    with pytest.raises(DeviceError) as err:
        dev.get_clipboard()
    assert "uiautomator2" in str(err.value) and "pinned" in err.value.hint


def test_a_server_that_dies_mid_session_falls_back_to_uiautomator_dump(adb_env, served):
    dev = AdbDevice(served.serial, adb_env.host)
    dev.dump_hierarchy()
    assert dev.hierarchy_path.method == "uiautomator2"
    # Another program takes over port 9008 and hangs up on every request, so the server
    # neither answers nor can be restarted there (its restart fails to bind the port).
    ports = served.server.adbd.tcp_ports
    handler = ports.lookup(9008)
    assert handler is not None
    ports.unlisten(9008, handler)
    ports.listen(9008, lambda stream: None)
    xml = dev.dump_hierarchy()
    assert nodes(xml)
    assert dev.hierarchy_path.method == "uiautomator dump"
    assert "trying uiautomator2 again" in dev.hierarchy_path.reason


def test_unknown_rpc_methods_get_a_json_rpc_error_not_a_hang(u2):
    from uiautomator2.exceptions import RPCUnknownError

    with pytest.raises(RPCUnknownError) as err:
        u2.jsonrpc.objInfoOfAllInstances({"text": "x"})
    assert "not on the virtual phone" in str(err.value)


def test_doctor_says_which_path_the_hierarchy_takes_without_starting_anything(adb_env, served):
    from app.doctor import Status, check_hierarchy_path

    client = adb_env.host.client()
    before = list(check_hierarchy_path(client, served.serial))
    assert [c.status for c in before] == [Status.OK]
    assert "uiautomator2" in before[0].detail and "starts with the first observation" in before[0].detail
    assert not served.server.adbd.state.fs.exists(u2_link.DEVICE_JAR)  # the doctor pushed nothing
    dev = AdbDevice(served.serial, adb_env.host)
    dev.dump_hierarchy()
    after = list(check_hierarchy_path(client, served.serial))
    assert "running on the phone" in after[0].detail
    dev.close()


def test_doctor_warns_and_says_how_to_fix_an_unverifiable_jar(adb_env, served, monkeypatch):
    from app.doctor import Status, check_hierarchy_path

    monkeypatch.setattr(u2_link, "PINNED_JAR_SHA256", {})
    rows = list(check_hierarchy_path(adb_env.host.client(), served.serial))
    assert rows[0].status is Status.WARN
    assert "uiautomator dump" in rows[0].detail and "pip install" in rows[0].fix


def test_an_observation_takes_the_running_mirrors_newest_frame_and_the_servers_hierarchy(adb_env, served):
    from phone.adb.mirror import Mirror

    dev = AdbDevice(served.serial, adb_env.host)
    with Mirror(dev) as mirror:
        first = mirror.wait_frame(timeout=15)
        if first is None:
            pytest.skip(f"the mirror produced no frame ({[e.message for e in mirror.events()]})")

        handed: list = []

        def newest():
            frame = mirror.latest()
            handed.append(None if frame is None else frame.image)
            return handed[-1]

        dev.use_frames_from(newest)
        screen = dev.screenshot(with_hierarchy=True)
        assert handed and handed[-1] is not None
        assert np.shares_memory(screen.image, handed[-1])  # the mirror's pixels, no screencap
        assert nodes(screen.hierarchy_xml or "") and dev.hierarchy_path.method == "uiautomator2"
        assert [name for name, _ in screen.timings_ms] == ["frame", "hierarchy"]
    dev.use_frames_from(None)
    assert dev.screenshot().image.shape[:2] == (served.phone.screen_size().height, served.phone.screen_size().width)
    dev.close()


def test_swipes_and_long_presses_go_through_the_server(adb_env, served):
    dev = AdbDevice(served.serial, adb_env.host)
    dev.tap(*centre(by_label(dev.dump_hierarchy(), "Settings")))
    before = [n.get("bounds") for n in nodes(dev.dump_hierarchy()) if n.get("text")]
    dev.swipe(540, 1900, 540, 900, 300)  # JSON-RPC `swipe`: the list scrolls
    after = [n.get("bounds") for n in nodes(dev.dump_hierarchy()) if n.get("text")]
    assert after != before
    assert dev.hierarchy_path.method == "uiautomator2"
    dev.close()


def test_an_action_cut_off_midway_is_reported_never_sent_twice(adb_env, served):
    dev = AdbDevice(served.serial, adb_env.host)
    home = dev.dump_hierarchy()
    ports = served.server.adbd.tcp_ports
    handler = ports.lookup(9008)
    assert handler is not None
    ports.unlisten(9008, handler)
    ports.listen(9008, lambda stream: None)  # the server is gone; something else hangs up
    with pytest.raises(DeviceError) as err:
        dev.tap(*centre(by_label(home, "Settings")))
    assert "may or may not have reached the phone" in err.value.hint
    assert served.phone.foreground()[0] != "com.android.settings"
    dev.tap(*centre(by_label(home, "Settings")))  # now through `input tap`
    assert served.phone.foreground()[0] == "com.android.settings"
    assert dev.hierarchy_path.method == "uiautomator dump"


def test_adb_forward_reaches_the_server_from_plain_http(adb_env, served, u2):
    import json
    import urllib.request

    from tests.phone_adb.conftest import free_port

    local = free_port()
    assert adb_env.adb("-s", served.serial, "forward", f"tcp:{local}", "tcp:9008").returncode == 0
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{local}/ping", timeout=10) as r:
            assert r.read() == b"pong"
        body = json.dumps({"jsonrpc": "2.0", "id": 3, "method": "deviceInfo", "params": {}}).encode()
        req = urllib.request.Request(f"http://127.0.0.1:{local}/jsonrpc/0", body, {"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as r:
            reply = json.loads(r.read())
        assert reply["id"] == 3 and reply["result"]["displayWidth"] == served.phone.screen_size().width
    finally:
        adb_env.adb("-s", served.serial, "forward", "--remove", f"tcp:{local}")
