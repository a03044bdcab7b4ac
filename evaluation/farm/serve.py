"""``tapwise farm serve``: make this host a farm node — its phones advertised to Ray.

Starts N served virtual phones, each in its own process (``tapwise sim serve``), connects
them to the host's adb server, adds the real phones adb already lists, and starts a Ray
node (``ray start --block``: the head of a new cluster, or a member of an existing one
with ``address``) that advertises every phone as a custom resource
(``evaluation.farm.phones``).  The node's workers inherit this process's environment, so a
model server named for this host (``--model-url``) reaches the cells run here.  Stopping
(Ctrl+C, SIGTERM) stops the Ray node, the phones and their adb connections; nothing is
left running.  Progress goes to the ``say`` callback; this module never prints.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from agent.device import DeviceError
from evaluation.farm.cells import HOST_BACKEND, HOST_BASE_URL, HOST_MODEL
from evaluation.farm.driver import INSTALL_HINT, LOOPBACK_ENV, FarmError
from evaluation.farm.phones import PhoneKind, PhoneSlot, adb_phones, resource_table
from phone.ports import free_port

log = logging.getLogger(__name__)

Say = Callable[[str], None]


@dataclass(frozen=True)
class FarmNodeOptions:
    phones: int = 2
    address: str | None = None
    """None: start the head of a new cluster; else join the cluster at this address."""
    ray_port: int = 6379
    base_port: int = 5600
    """The served phones listen on 127.0.0.1 from this port up (0: free ports)."""
    loopback: bool = False
    """A one-machine cluster that listens on loopback only (tests, a single host)."""
    include_adb_phones: bool = True
    model_url: str = ""
    model_backend: str = ""
    model: str = ""
    num_cpus: int | None = None


@dataclass
class FarmNode:
    """What ``start_node`` started; ``stop()`` ends all of it."""

    slots: list[PhoneSlot]
    address: str
    phone_procs: list[subprocess.Popen[str]] = field(default_factory=list)
    ray_proc: subprocess.Popen[str] | None = None

    def stop(self) -> None:
        if self.ray_proc is not None and self.ray_proc.poll() is None:
            self.ray_proc.send_signal(signal.SIGTERM)
            try:
                self.ray_proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.ray_proc.kill()
        _disconnect([s.serial for s in self.slots if s.kind is PhoneKind.SERVED])
        for p in self.phone_procs:
            if p.poll() is None:
                p.terminate()
        for p in self.phone_procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()


def _start_phone(port: int) -> tuple[subprocess.Popen[str], str]:
    """One served virtual phone in its own process; returns it and its adb serial."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "sim", "serve", "--port", str(port)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    deadline = time.monotonic() + 60
    assert proc.stdout is not None
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        if "serving on" in line:
            serial = line.split("serving on", 1)[1].split()[0]
            threading.Thread(target=_drain, args=(proc,), daemon=True).start()
            return proc, serial
    proc.kill()
    raise FarmError(f"the virtual phone on port {port} did not start (is the port free?)")


def _drain(proc: subprocess.Popen[str]) -> None:
    assert proc.stdout is not None
    for line in proc.stdout:
        log.debug("phone %s: %s", proc.pid, line.rstrip())


def _connect(serial: str, timeout_s: float = 20.0) -> None:
    """``adb connect`` and wait until adb lists the phone as ready."""
    from phone.adb.adb_host import AdbHost
    from phone.adb.discovery import connect

    connect(serial)
    client = AdbHost().client()
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if any(d.serial == serial and d.state == "device" for d in client.list()):
            return
        time.sleep(0.2)
    raise FarmError(f"adb does not list {serial} as ready after {timeout_s:.0f} s")


def _disconnect(serials: list[str]) -> None:
    from phone.adb.discovery import disconnect

    for serial in serials:
        try:
            disconnect(serial)
        except Exception as exc:  # the adb server may already be gone at shutdown
            log.debug("adb disconnect %s failed: %s", serial, exc)


def _ray_command(opts: FarmNodeOptions, resources: dict[str, float]) -> list[str]:
    ray_bin = Path(sys.executable).with_name("ray")
    if not ray_bin.exists():
        raise FarmError(f"the `ray` command is not installed next to {sys.executable}; {INSTALL_HINT}")
    cmd = [str(ray_bin), "start", "--block", "--disable-usage-stats", f"--resources={json.dumps(resources)}"]
    if opts.address:
        cmd.append(f"--address={opts.address}")
    else:
        cmd += ["--head", f"--port={opts.ray_port}", "--include-dashboard=false"]
    if opts.num_cpus is not None:
        cmd.append(f"--num-cpus={opts.num_cpus}")
    return cmd


def _node_env(opts: FarmNodeOptions) -> dict[str, str]:
    env = dict(os.environ)
    if opts.loopback:
        env.update(LOOPBACK_ENV)
    if opts.model_url:
        env[HOST_BASE_URL] = opts.model_url
        if opts.model_backend:
            env[HOST_BACKEND] = opts.model_backend
        if opts.model:
            env[HOST_MODEL] = opts.model
    return env


def _wait_ray(address: str, proc: subprocess.Popen[str], timeout_s: float = 120) -> None:
    host, _, port = address.rpartition(":")
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise FarmError(f"`ray start` exited with status {proc.returncode}; see the messages above")
        try:
            with socket.create_connection((host or "127.0.0.1", int(port)), timeout=1):
                return
        except OSError:
            time.sleep(0.5)
    raise FarmError(f"the Ray head did not answer on {address} within {timeout_s:.0f} s")


def start_node(opts: FarmNodeOptions, say: Say) -> FarmNode:
    """Start the phones and the Ray node; raises ``FarmError`` with what to do."""
    node = FarmNode(slots=[], address=opts.address or "")
    try:
        for i in range(opts.phones):
            port = free_port() if opts.base_port == 0 else opts.base_port + i
            proc, serial = _start_phone(port)
            node.phone_procs.append(proc)
            _connect(serial)
            node.slots.append(PhoneSlot(PhoneKind.SERVED, serial))
            say(f"virtual phone {i + 1}/{opts.phones} serving on {serial}")
        if opts.include_adb_phones:
            real = adb_phones(exclude=[s.serial for s in node.slots])
            node.slots += real
            for slot in real:
                say(f"real phone {slot.serial} added (it can run cells that do not need the virtual phone's oracle)")
        resources = resource_table(node.slots)
        node.ray_proc = subprocess.Popen(_ray_command(opts, resources), env=_node_env(opts), text=True)
        if not opts.address:
            host = "127.0.0.1" if opts.loopback else _host_ip()
            node.address = f"{host}:{opts.ray_port}"
            _wait_ray(f"127.0.0.1:{opts.ray_port}", node.ray_proc)
        say(f"Ray node started with {len(node.slots)} phone(s)"
            + (f"; head at {node.address}" if not opts.address else f"; joined {opts.address}"))
        return node
    except (FarmError, DeviceError, OSError):
        node.stop()
        raise


def _host_ip() -> str:
    """The address other hosts reach this one at (as the host name resolves)."""
    try:
        return socket.gethostbyname(socket.gethostname())
    except OSError:
        return "127.0.0.1"


def run_until_stopped(node: FarmNode, say: Say) -> int:
    """Block until Ctrl+C / SIGTERM, or until the Ray node or a phone ends; then stop all."""
    stop = threading.Event()
    previous = signal.signal(signal.SIGTERM, lambda *_: stop.set())
    code = 0
    try:
        while not stop.wait(1.0):
            if node.ray_proc is not None and node.ray_proc.poll() is not None:
                say(f"the Ray node ended (status {node.ray_proc.returncode}); stopping the phones")
                code = 1
                break
            dead = [p for p in node.phone_procs if p.poll() is not None]
            if dead:
                say(f"{len(dead)} virtual phone process(es) ended; stopping the node")
                code = 1
                break
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        node.stop()
        say("farm node stopped")
    return code
