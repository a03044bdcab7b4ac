"""The virtual phone served over the ADB wire protocol, driven by the real ``adb`` binary,
adbutils and our own device layer exactly as a USB phone would be."""

from __future__ import annotations

import time
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from agent.device import DeviceError, DeviceGone
from phone.adb import discovery
from phone.adb.adb_device import AdbDevice
from vision.geometry import Rect

pytestmark = pytest.mark.adb


def nodes(xml: str) -> list[ET.Element]:
    return list(ET.fromstring(xml.encode("utf-8")).iter("node"))


def centre(node: ET.Element) -> tuple[int, int]:
    c = Rect.from_bounds_string(node.get("bounds", "")).center
    return c.x, c.y


def find_switch(dev: AdbDevice) -> ET.Element:
    """A switch in Settings (opening 'Network & internet' when the top page has none)."""
    for _attempt in range(2):
        found = nodes(dev.dump_hierarchy())
        for n in found:
            if n.get("checkable") == "true":
                return n
        network = next((n for n in found if n.get("text", "").startswith("Network")), None)
        if network is None:
            break
        dev.tap(*centre(network))
    raise AssertionError("no switch in Settings")


def find_text_field(dev: AdbDevice) -> ET.Element:
    for n in nodes(dev.dump_hierarchy()):
        if "EditText" in n.get("class", ""):
            return n
    raise AssertionError("no text field on screen")


def test_adb_devices_lists_the_served_phone_with_model_size_and_density(adb_env, served):
    listing = adb_env.adb("devices", "-l").stdout
    assert served.serial in listing and " device " in listing
    infos = {i.serial: i for i in discovery.list_devices(adb_env.host)}
    info = infos[served.serial]
    assert info.state == "device" and not info.problem
    assert info.model == served.phone.info.model or info.model == "Tapwise Virtual Phone"
    assert info.android_version == "14"
    assert info.size == served.phone.screen_size()
    assert info.density_dpi == served.phone.info.density_dpi
    assert info.is_virtual


def test_screenshot_over_adb_equals_the_in_process_render(adb_env, served):
    dev = AdbDevice(served.serial, adb_env.host)
    over_wire = dev.screenshot_image()  # raw framebuffer fast path
    in_process = np.asarray(served.phone.screenshot().image)
    assert over_wire.shape == in_process.shape
    assert np.array_equal(over_wire, in_process)
    png = dev.exec_out("screencap -p")  # the PNG path decodes to the same pixels
    from phone.adb.adb_device import decode_png

    assert np.array_equal(decode_png(png), in_process)


def test_uiautomator_dump_over_adb_parses_and_matches_the_phone(adb_env, served):
    dev = AdbDevice(served.serial, adb_env.host)
    xml = dev.dump_hierarchy()
    root = ET.fromstring(xml.encode("utf-8"))
    assert root.tag == "hierarchy"
    got = [n.get("bounds") for n in root.iter("node")]
    want = [n.get("bounds") for n in nodes(served.phone.dump_hierarchy())]
    assert got and got == want


def test_foreground_and_screen_state_come_from_dumpsys(adb_env, served):
    dev = AdbDevice(served.serial, adb_env.host)
    assert dev.foreground() == served.phone.foreground()
    assert dev.screen_size() == served.phone.screen_size()
    assert dev.screen_state() == (True, False)
    assert dev.rotation() == 0


def test_tap_through_adbutils_toggles_a_setting(adb_env, served):
    dev = AdbDevice(served.serial, adb_env.host)
    dev.open_app("com.android.settings")
    switch = find_switch(dev)
    before = switch.get("checked")
    dev.adb.click(*centre(switch))  # plain adbutils: `input tap x y`
    after = next(n for n in nodes(dev.dump_hierarchy()) if n.get("bounds") == switch.get("bounds"))
    assert after.get("checked") != before


def test_open_app_by_label_resolves_the_package(adb_env, served):
    dev = AdbDevice(served.serial, adb_env.host)
    dev.open_app("Settings")
    assert dev.foreground()[0] == "com.android.settings"


def test_text_with_spaces_quotes_and_shell_metacharacters_arrives_intact(adb_env, served):
    dev = AdbDevice(served.serial, adb_env.host)
    dev.open_app("com.android.settings")
    dev.tap(*centre(find_text_field(dev)))
    text = """it's "quoted" ; $HOME && `id` | 50% off %s (x) \\ done"""
    dev.input_text(text)
    field = find_text_field(dev)
    assert field.get("text", "").endswith(text)


def test_non_ascii_text_goes_through_the_adb_keyboard_broadcast(adb_env, served):
    dev = AdbDevice(served.serial, adb_env.host)
    dev.open_app("com.android.settings")
    dev.tap(*centre(find_text_field(dev)))
    dev.input_text("héllo ✓ 東京")
    assert find_text_field(dev).get("text", "").endswith("héllo ✓ 東京")


def test_non_ascii_text_without_an_ime_says_how_to_install_one(adb_env, served):
    served.server.adbd.state.adb_keyboard = False
    dev = AdbDevice(served.serial, adb_env.host)
    with pytest.raises(DeviceError) as err:
        dev.input_text("naïve")
    assert "ADB Keyboard" in err.value.hint


def test_adb_push_and_pull_use_the_sync_service(adb_env, served, tmp_path):
    src = tmp_path / "notes.txt"
    src.write_bytes(b"line one\nline two\n" * 1000)
    assert adb_env.adb("-s", served.serial, "push", str(src), "/sdcard/notes.txt").returncode == 0
    dst = tmp_path / "back.txt"
    assert adb_env.adb("-s", served.serial, "pull", "/sdcard/notes.txt", str(dst)).returncode == 0
    assert dst.read_bytes() == src.read_bytes()
    listing = adb_env.adb("-s", served.serial, "shell", "ls", "/sdcard").stdout
    assert "notes.txt" in listing


def test_a_phone_that_asks_for_authorisation_is_still_reachable(adb_env):
    from phone.virtual.wire import serve_phone
    from tests.phone_adb.fake_phone import FakePhone

    with serve_phone(FakePhone(), port=0, require_auth=True) as server:
        out = adb_env.adb("connect", server.serial)
        assert "connected to" in out.stdout
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if adb_env.adb("-s", server.serial, "shell", "echo", "ok").stdout.strip() == "ok":
                break
            time.sleep(0.2)
        else:
            pytest.fail("shell never worked after AUTH")
        adb_env.adb("disconnect", server.serial)


def test_a_phone_that_vanishes_raises_device_gone_without_hanging(adb_env, served):
    dev = AdbDevice(served.serial, adb_env.host, timeout=5)
    dev.screen_size()
    served.server.stop()
    t0 = time.monotonic()
    with pytest.raises(DeviceGone) as err:
        for _ in range(5):  # adb may need a moment to notice
            dev.tap(10, 10)
            time.sleep(0.2)
    assert time.monotonic() - t0 < 10
    assert served.serial in str(err.value)


def test_uiautomator_dump_is_retried_after_its_known_transient_failure(adb_env, served):
    served.server.adbd.state.dump_failures = 2
    dev = AdbDevice(served.serial, adb_env.host, use_u2=False)  # the `uiautomator dump` fallback itself
    assert nodes(dev.dump_hierarchy())
    served.server.adbd.state.dump_failures = 10
    with pytest.raises(DeviceError) as err:
        dev.dump_hierarchy(attempts=2)
    assert "could not get idle state" in str(err.value) and err.value.hint


def test_tapwise_serve_command_serves_the_phone_until_terminated(adb_env):
    import signal
    import subprocess
    import sys

    from tests.phone_adb.conftest import free_port

    port = free_port()
    code = "import typer; from app.cli.sim import serve; typer.run(serve)"
    proc = subprocess.Popen([sys.executable, "-c", code, "--port", str(port)], env=adb_env.env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        line = proc.stdout.readline()
        assert f"127.0.0.1:{port}" in line, line
        assert "connected to" in adb_env.adb("connect", f"127.0.0.1:{port}").stdout
        assert adb_env.adb("-s", f"127.0.0.1:{port}", "shell", "getprop", "ro.product.model").stdout.strip()
    finally:
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=20)
        adb_env.adb("disconnect", f"127.0.0.1:{port}")
    assert proc.returncode == 0 and "stopped" in out


def test_adb_36_bundled_with_adbutils_also_drives_the_served_phone(tmp_path):
    import os
    import subprocess

    import adbutils

    from phone.virtual.wire import serve_phone
    from tests.phone_adb.conftest import free_port
    from tests.phone_adb.fake_phone import FakePhone

    adb36 = os.path.join(os.path.dirname(adbutils.__file__), "binaries", "adb")
    if not os.path.isfile(adb36):
        pytest.skip("this adbutils wheel bundles no adb binary")
    env = dict(os.environ, HOME=str(tmp_path), ANDROID_USER_HOME=str(tmp_path / ".android"), TMPDIR=str(tmp_path),
               ANDROID_ADB_SERVER_PORT=str(free_port()))

    def adb(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([adb36, *args], env=env, capture_output=True, text=True, timeout=30)

    with serve_phone(FakePhone(), port=0) as server:
        try:
            assert "connected to" in adb("connect", server.serial).stdout
            assert adb("-s", server.serial, "shell", "echo", "hi", "&&", "wm", "size").stdout.split() == [
                "hi", "Physical", "size:", "360x800"]
            src = tmp_path / "a.bin"
            src.write_bytes(bytes(range(256)) * 300)
            assert adb("-s", server.serial, "push", str(src), "/sdcard/a.bin").returncode == 0
            assert adb("-s", server.serial, "pull", "/sdcard/a.bin", str(tmp_path / "b.bin")).returncode == 0
            assert (tmp_path / "b.bin").read_bytes() == src.read_bytes()
        finally:
            adb("kill-server")


def test_tapwise_devices_lists_the_served_phone(adb_env, served):
    from typer.testing import CliRunner

    from app.cli.devices import devices_app

    result = CliRunner().invoke(devices_app, ["list"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert served.serial in result.output and "(virtual)" in result.output


def test_an_adb_phone_names_its_apps_by_the_names_it_was_opened_by(served, adb_env):
    from agent.device import app_label

    dev = AdbDevice(served.serial, adb_env.host)
    try:
        assert app_label(dev, "com.android.settings") == "Settings"  # a common system app
        assert app_label(dev, "com.tapwise.shop") == "com.tapwise.shop"  # adb lists packages, not names
        dev.open_app("Shop")  # opened by its launcher name: that name is kept
        assert dev.foreground()[0] == "com.tapwise.shop"
        assert app_label(dev, "com.tapwise.shop") == "Shop"
    finally:
        dev.close()
