"""The served uiautomator2 server and the animated screen, in process (no adb): JSON-RPC
replies for good and bad calls, the ``tcp:PORT`` table, the jar check, and a running
stopwatch that keeps the screen from ever going idle for ``uiautomator dump``."""

from __future__ import annotations

import pytest

from agent.device import Key
from phone.adb import u2_link
from phone.virtual.apps.clock import FRAME_CENTIS, fmt_centis
from phone.virtual.phone import VirtualPhone
from phone.virtual.wire.served_phone import ServedPhone
from phone.virtual.wire.shell_commands import DeviceState, Output, Shell
from phone.virtual.wire.tcp_ports import TcpPorts, parse_tcp_destination
from phone.virtual.wire.u2_server import ERR_METHOD, ERR_PARAMS, U2Server, is_u2_launch


def make_server() -> tuple[U2Server, VirtualPhone, DeviceState]:
    phone = VirtualPhone()
    state = DeviceState(props={"ro.product.name": "tapwise_sim", "ro.build.version.sdk": "34"})
    return U2Server(ServedPhone(phone), state, TcpPorts(), lambda data: None), phone, state


def rpc(server: U2Server, method: str, *params: object) -> dict:
    return server.call({"jsonrpc": "2.0", "id": 7, "method": method, "params": list(params)})


def start_stopwatch(phone: VirtualPhone) -> None:
    phone.open_app("com.google.android.deskclock")
    s = phone.state["clock"]
    s["tab"] = "stopwatch"
    s["stopwatch"].update(running=True, started=True)
    phone.key(Key.TAB)  # any input makes the phone rebuild its screen


def test_the_server_dump_is_the_phone_hierarchy_and_keeps_the_request_id():
    server, phone, _ = make_server()
    reply = rpc(server, "dumpWindowHierarchy", False, 50)
    assert reply == {"jsonrpc": "2.0", "id": 7, "result": phone.dump_hierarchy()}


def test_unknown_methods_and_wrong_params_get_json_rpc_errors():
    server, _, _ = make_server()
    assert rpc(server, "objInfo", {"text": "x"})["error"]["code"] == ERR_METHOD
    bad = rpc(server, "click", 1)  # y is missing
    assert bad["error"]["code"] == ERR_PARAMS and "click" in bad["error"]["message"]
    assert "error" in server.call(["not", "an", "object"])


def test_clipboard_paste_types_any_unicode_into_the_focused_field():
    server, phone, state = make_server()
    phone.open_app("com.android.settings")
    rpc(server, "setClipboard", None, "Grüße 東京")
    assert rpc(server, "getClipboard")["result"] == "Grüße 東京" == state.clipboard
    field = next(e for e in phone.ground_truth().elements if e.class_name == "android.widget.EditText")
    rpc(server, "click", field.rect.center.x, field.rect.center.y)
    rpc(server, "pasteClipboard")
    assert "Grüße 東京" in phone.dump_hierarchy()


def test_device_info_reports_the_screen_in_pixels_and_dp():
    server, phone, _ = make_server()
    info = rpc(server, "deviceInfo")["result"]
    size = phone.screen_size()
    assert (info["displayWidth"], info["displayHeight"]) == (size.width, size.height)
    assert info["displaySizeDpX"] == round(size.width * 160 / phone.info.density_dpi)
    assert info["sdkInt"] == 34 and info["currentPackageName"] == phone.foreground()[0]


def test_the_server_refuses_to_start_without_its_jar_and_binds_its_port_while_running():
    server, _, state = make_server()
    written: list[bytes] = []
    server.write = written.append
    argv = ["app_process", "/", "com.wetest.uia2.Main", "-p", "9008"]
    assert is_u2_launch(argv) and not is_u2_launch(["app_process", "/", "com.genymobile.scrcpy.Server"])
    assert server.run(argv, {"CLASSPATH": "/data/local/tmp/u2.jar"}, lambda t: True) == 1
    assert b"ClassNotFoundException" in b"".join(written)
    state.fs.write("/data/local/tmp/u2.jar", b"jar")
    seen: list[object] = []
    assert server.run(argv, {"CLASSPATH": "/data/local/tmp/u2.jar"}, lambda t: seen.append(server.ports.lookup(9008)) or True) == 0
    assert seen == [server.serve] and server.ports.lookup(9008) is None


@pytest.mark.parametrize(
    ("destination", "port"),
    [("tcp:9008", 9008), ("tcp:localhost:9008", 9008), ("tcp:example.com:80", None), ("tcp:x", None),
     ("tcp:70000", None), ("localabstract:scrcpy", None)],
)
def test_tcp_destinations_name_loopback_ports_only(destination, port):
    assert parse_tcp_destination(destination) == port


def test_a_second_program_cannot_bind_a_taken_port():
    ports = TcpPorts()
    ports.listen(9008, lambda s: None)
    with pytest.raises(OSError, match="already in use"):
        ports.listen(9008, lambda s: None)


def test_a_running_stopwatch_ticks_every_frame_and_never_lets_uiautomator_dump_idle():
    phone = VirtualPhone()
    start_stopwatch(phone)
    assert phone.is_animating()
    readings = []
    for _ in range(3):
        phone.screenshot()
        readings.append(phone.state["clock"]["stopwatch"]["centis"])
    assert readings[1] - readings[0] == readings[2] - readings[1] == FRAME_CENTIS
    assert fmt_centis(readings[2]) in phone.dump_hierarchy()  # the in-process tree is fine
    shell = Shell(ServedPhone(phone), DeviceState(props={}))
    out = Output()
    assert shell.run("uiautomator dump /sdcard/d.xml", out) == 1
    assert out.stdout.decode() == "ERROR: could not get idle state.\n"
    phone.state["clock"]["stopwatch"]["running"] = False
    phone.key(Key.TAB)
    assert not phone.is_animating()
    assert shell.run("uiautomator dump /sdcard/d.xml", Output()) == 0


def test_stopwatch_readings_read_like_android():
    assert fmt_centis(0) == "0:00.00"
    assert fmt_centis(742) == "0:07.42"
    assert fmt_centis(61 * 100 + 5) == "1:01.05"
    assert fmt_centis(3600 * 100) == "1:00:00.00"


def test_the_jar_shipped_in_the_library_is_the_pinned_one():
    path, digest = u2_link.verified_jar()
    assert path.name == "u2.jar" and digest == u2_link.sha256_of(path.read_bytes())


def test_a_library_version_without_a_pin_is_refused_with_the_fix(monkeypatch):
    monkeypatch.setattr(u2_link, "PINNED_JAR_SHA256", {})
    with pytest.raises(u2_link.U2Unavailable, match="unchecked u2.jar.*pip install"):
        u2_link.verified_jar()


def test_the_phone_shell_has_the_digests_the_library_and_tapwise_check():
    phone = VirtualPhone()
    state = DeviceState(props={})
    state.fs.write("/data/local/tmp/u2.jar", b"abc")
    shell = Shell(ServedPhone(phone), state)
    out = Output()
    assert shell.run("toybox md5sum /data/local/tmp/u2.jar; sha256sum /data/local/tmp/u2.jar", out) == 0
    assert out.stdout.decode().splitlines() == [
        "900150983cd24fb0d6963f7d28e17f72  /data/local/tmp/u2.jar",
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad  /data/local/tmp/u2.jar",
    ]
    missing = Output()
    assert shell.run("sha256sum /nope", missing) == 1 and b"No such file" in missing.stderr
