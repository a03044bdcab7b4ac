"""The served phone's adbd: maps ADB service names to the virtual phone.

``serve_phone(phone, port)`` starts an ``AdbTransportServer`` on loopback whose streams
are handled here: ``shell:`` (v1, raw output), ``shell,v2,…:`` (stdout/stderr/exit
packets), ``exec:``, ``sync:``, ``localabstract:NAME`` (the scrcpy server's socket) and
``tcp:PORT`` (ports a running program listens on: the uiautomator2 server's 9008).
``app_process … com.wetest.uia2.Main -p 9008`` starts ``U2Server`` the same way.
``app_process … scrcpy.Server 3.3.x …`` starts ``ScrcpyServer`` for as long as its shell
stream stays open.  Protocol framing lives in ``adb_server``; commands in ``shell_commands``.
"""

from __future__ import annotations

import logging
import struct
from collections.abc import Callable

from agent.device import Device
from phone.virtual.wire.adb_server import AdbTransportServer, DeviceIdentity, Stream
from phone.virtual.wire.scrcpy_server import AbstractNamespace, ScrcpyServer
from phone.virtual.wire.served_phone import ServedPhone
from phone.virtual.wire.shell_commands import DeviceState, Output, Shell
from phone.virtual.wire.sync_service import serve_sync
from phone.virtual.wire.tcp_ports import TcpPorts, parse_tcp_destination
from phone.virtual.wire.u2_server import U2Server, is_u2_launch

log = logging.getLogger(__name__)

SHELL_V2_STDOUT = 1
SHELL_V2_STDERR = 2
SHELL_V2_EXIT = 3


def default_props(phone: ServedPhone, serial: str) -> dict[str, str]:
    size = phone.size()
    return {
        "ro.product.name": "tapwise_sim",
        "ro.product.model": "Tapwise Virtual Phone",
        "ro.product.device": "tapwise_sim",
        "ro.product.manufacturer": "Tapwise",
        "ro.product.brand": "tapwise",
        "ro.build.version.release": "14",
        "ro.build.version.sdk": "34",
        "ro.serialno": serial,
        "ro.sf.lcd_density": str(phone.density()),
        "ro.product.cpu.abi": "x86_64",
        "sys.boot_completed": "1",
        "tapwise.virtual": "1",
        "tapwise.screen": f"{size.width}x{size.height}",
    }


class SimAdbd:
    """Service dispatcher for one served phone."""

    def __init__(self, phone: Device, serial: str = "tapwise-sim") -> None:
        self.phone = ServedPhone(phone)
        self.state = DeviceState(props=default_props(self.phone, serial))
        self.namespace = AbstractNamespace()
        self.tcp_ports = TcpPorts()
        self.scrcpy_servers: list[ScrcpyServer] = []

    def identity(self, require_auth: bool = False) -> DeviceIdentity:
        props = {k: self.state.props[k] for k in ("ro.product.name", "ro.product.model", "ro.product.device")}
        return DeviceIdentity(props=props, require_auth=require_auth)

    def open(self, destination: str) -> Callable[[Stream], None] | None:
        if destination.startswith("shell,") or destination.startswith("shell:"):
            head, _, command = destination.partition(":")
            v2 = "v2" in head.split(",")[1:]
            return lambda s: self._shell(s, command, v2)
        if destination.startswith("exec:"):
            command = destination[len("exec:") :]
            return lambda s: self._shell(s, command, False)
        if destination.startswith("sync:"):
            return lambda s: serve_sync(s, self.state.fs)
        if destination.startswith("localabstract:"):
            return self.namespace.lookup(destination[len("localabstract:") :])
        if destination.startswith("tcp:"):
            port = parse_tcp_destination(destination)
            return self.tcp_ports.lookup(port) if port is not None else None
        log.info("the virtual phone has no service %r", destination)
        return None

    def _shell(self, stream: Stream, command: str, v2: bool) -> None:
        def packet(kind: int, data: bytes) -> bytes:
            return struct.pack("<BI", kind, len(data)) + data

        def live_write(data: bytes) -> None:
            stream.write(packet(SHELL_V2_STDOUT, data) if v2 else data)

        shell = Shell(self.phone, self.state, app_process=lambda a, e, w: self._app_process(stream, a, e, w))
        shell.live_write = live_write
        if not command.strip():
            msg = b"The virtual phone has no interactive shell; pass a command.\n"
            stream.write(packet(SHELL_V2_STDERR, msg) + packet(SHELL_V2_EXIT, b"\x01") if v2 else msg)
            return
        out = Output()
        status = shell.run(command, out)
        if v2:
            data = b""
            if out.stdout:
                data += packet(SHELL_V2_STDOUT, bytes(out.stdout))
            if out.stderr:
                data += packet(SHELL_V2_STDERR, bytes(out.stderr))
            stream.write(data + packet(SHELL_V2_EXIT, bytes([status & 0xFF])))
        else:
            data = bytes(out.stdout) + bytes(out.stderr)
            if data:
                stream.write(data)

    def _app_process(self, stream: Stream, argv: list[str], env: dict[str, str], write: Callable[[bytes], None]) -> int:
        if is_u2_launch(argv):
            return U2Server(self.phone, self.state, self.tcp_ports, write).run(argv, env, stream.wait_closed)
        server = ScrcpyServer(self.phone, self.namespace, self.state.fs, write, state=self.state)
        self.scrcpy_servers.append(server)
        try:
            return server.run(argv, env, stream.wait_closed)
        finally:
            self.scrcpy_servers.remove(server)


class ServedPhoneServer:
    """A virtual phone reachable with ``adb connect 127.0.0.1:PORT``."""

    def __init__(self, phone: Device, port: int = 5555, *, require_auth: bool = False) -> None:
        self.adbd = SimAdbd(phone)
        self.server = AdbTransportServer(self.adbd.identity(require_auth), self.adbd.open, port=port)
        self.adbd.state.props["ro.serialno"] = self.server.serial

    @property
    def port(self) -> int:
        return self.server.port

    @property
    def serial(self) -> str:
        return self.server.serial

    def start(self) -> ServedPhoneServer:
        self.server.start()
        log.info("virtual phone served on %s", self.serial)
        return self

    def stop(self) -> None:
        """Pull the plug: stop listening, end every stream and scrcpy server."""
        for s in list(self.adbd.scrcpy_servers):
            s.stop.set()
        self.server.stop()

    def __enter__(self) -> ServedPhoneServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def serve_phone(phone: Device, port: int = 5555, *, require_auth: bool = False) -> ServedPhoneServer:
    """Start serving ``phone`` on 127.0.0.1:``port`` (0 picks a free port)."""
    return ServedPhoneServer(phone, port, require_auth=require_auth).start()
