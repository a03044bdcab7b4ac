"""Fixtures for device tests: an isolated adb server, and a phone served over ADB.

The adb server runs on a free port with its own HOME (keys and logs stay in a temp
folder) and is killed at the end.  The served phone is the real ``VirtualPhone`` when
``phone.virtual.phone`` imports, otherwise the small ``FakePhone`` double.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from phone.adb.adb_host import AdbHost
from phone.ports import free_port


def make_phone():
    """The real virtual phone when available, else the local double."""
    try:
        from phone.virtual.phone import VirtualPhone

        return VirtualPhone()
    except Exception:  # the virtual phone is still being written: use the double
        from tests.phone_adb.fake_phone import FakePhone

        return FakePhone()


@dataclass
class AdbEnv:
    host: AdbHost
    env: dict[str, str]

    def adb(self, *args: str, timeout: float = 20) -> subprocess.CompletedProcess:
        return subprocess.run(["adb", *args], env=self.env, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="session")
def adb_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AdbEnv]:
    if shutil.which("adb") is None:
        pytest.skip("the adb binary is not installed (apt install adb)")
    home = tmp_path_factory.mktemp("adbhome")
    port = free_port()
    saved = {k: os.environ.get(k) for k in ("HOME", "ANDROID_ADB_SERVER_PORT", "ANDROID_USER_HOME")}
    os.environ.update(HOME=str(home), ANDROID_ADB_SERVER_PORT=str(port), ANDROID_USER_HOME=str(home / ".android"))
    env = dict(os.environ)
    env["TMPDIR"] = str(home)  # adb 36 logs there instead of /tmp
    started = subprocess.run(["adb", "start-server"], env=env, capture_output=True, text=True, timeout=30)
    assert started.returncode == 0, started.stderr
    host = AdbHost(port=port)
    try:
        yield AdbEnv(host, env)
    finally:
        subprocess.run(["adb", "kill-server"], env=env, capture_output=True, timeout=30)
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@dataclass
class Served:
    server: object
    phone: object
    serial: str


@pytest.fixture
def served(adb_env: AdbEnv) -> Iterator[Served]:
    from phone.virtual.wire import serve_phone

    phone = make_phone()
    server = serve_phone(phone, port=0)
    out = adb_env.adb("connect", server.serial)
    assert "connected to" in out.stdout, out.stdout + out.stderr
    try:
        yield Served(server, phone, server.serial)
    finally:
        server.stop()
        adb_env.adb("disconnect", server.serial)
