"""The vault: an encrypted file only the user can read (or the OS keyring when one
answers), ``tapwise secrets set/list/delete`` with the value on standard input, and the
device wrapper that types a value by reference and never lets it out in an error."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from agent.device import DeviceError
from agent.secrets import MappingSource, SecretMissing, names_in, reference, with_secrets
from app.vault import FileVault, KeyringVault, VaultError, open_vault

SECRET = "Tulip7Harbor"
ROOT = Path(__file__).resolve().parents[2]


def test_the_file_is_encrypted_and_private(tmp_path) -> None:
    v = FileVault(tmp_path / "cfg")
    v.set("library_password", SECRET)
    assert v.names() == ["library_password"] and v.value("library_password") == SECRET
    for f in (v.path, v.key_path):
        assert SECRET.encode() not in f.read_bytes()
        assert stat.S_IMODE(f.stat().st_mode) == 0o600
    assert stat.S_IMODE(v.folder.stat().st_mode) == 0o700
    with pytest.raises(SecretMissing, match="tapwise secrets set other"):
        v.value("other")
    v.key_path.write_bytes(b"7" * 44)  # not a key: refused, with what to do
    with pytest.raises(VaultError, match="cannot be used"):
        FileVault(tmp_path / "cfg").value("library_password")
    from cryptography.fernet import Fernet

    v.key_path.write_bytes(Fernet.generate_key())  # another vault's key: refused, the file left as it was
    with pytest.raises(VaultError, match="cannot be opened"):
        FileVault(tmp_path / "cfg").value("library_password")
    with pytest.raises(ValueError):
        v.set("1 bad name", "x")


def test_a_vault_whose_content_is_not_its_secrets_is_refused_with_what_to_do(tmp_path) -> None:
    import json

    from cryptography.fernet import Fernet

    v = FileVault(tmp_path / "cfg")
    v.set("library_password", SECRET)
    doc = json.loads(v.path.read_bytes())  # the right key, but what it encrypts is not JSON
    doc["token"] = Fernet(v.key_path.read_bytes().strip()).encrypt(b"{half a file").decode()
    v.path.write_text(json.dumps(doc))
    before = v.path.read_bytes()
    with pytest.raises(VaultError, match="is damaged.*move it away to start a new one"):
        FileVault(tmp_path / "cfg").names()
    assert v.path.read_bytes() == before  # left as it was


def test_a_passphrase_locks_the_file_without_a_key_file(tmp_path) -> None:
    v = FileVault(tmp_path, passphrase="correct horse")
    v.set("pin", "4711")
    assert not v.key_path.exists()
    assert FileVault(tmp_path, passphrase="correct horse").value("pin") == "4711"
    with pytest.raises(VaultError):
        FileVault(tmp_path, passphrase="wrong").value("pin")


def test_the_keyring_keeps_values_and_only_the_names_are_on_disk(tmp_path) -> None:
    from keyring.backend import KeyringBackend
    from keyring.errors import PasswordDeleteError

    class Memory(KeyringBackend):
        priority = 5  # type: ignore[assignment]

        def __init__(self) -> None:
            super().__init__()
            self.kept: dict[tuple[str, str], str] = {}

        def get_password(self, service, username):
            return self.kept.get((service, username))

        def set_password(self, service, username, password):
            self.kept[(service, username)] = password

        def delete_password(self, service, username):
            if self.kept.pop((service, username), None) is None:
                raise PasswordDeleteError(username)

    ring = Memory()
    v = KeyringVault(tmp_path, backend=ring)
    v.set("bank_pin", "4711")
    assert ring.kept == {("tapwise", "bank_pin"): "4711"} and v.names() == ["bank_pin"]
    assert "4711" not in v.index_path.read_text()
    assert v.delete("bank_pin") and v.names() == [] and not v.delete("bank_pin")


def test_the_command_line_reads_the_value_from_standard_input(tmp_path) -> None:
    env = {**os.environ, "TAPWISE_CONFIG_DIR": str(tmp_path), "PYTHONPATH": os.pathsep.join(sys.path)}

    def tapwise(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "app.cli", "secrets", *args], input=stdin, text=True,
                              capture_output=True, env=env, cwd=ROOT, timeout=120)

    made = tapwise("set", "library_password", stdin=SECRET + "\n")
    assert made.returncode == 0, made.stderr
    assert "{{secret:library_password}}" in made.stderr and SECRET not in made.stdout + made.stderr
    listed = tapwise("list")
    assert "library_password" in listed.stdout and SECRET not in listed.stdout
    assert open_vault(tmp_path, use_keyring=False).value("library_password") == SECRET
    assert tapwise("set", "x y", stdin="v\n").returncode == 2
    assert tapwise("set", "empty", stdin="\n").returncode == 2
    assert tapwise("delete", "library_password").returncode == 0
    assert tapwise("delete", "library_password").returncode == 1


class _Phone:
    """A device that fails the way adb does: its error quotes the typed text."""

    def __init__(self, fail: bool = False) -> None:
        self.typed: list[str] = []
        self.fail = fail

    def input_text(self, text: str) -> None:
        if self.fail:
            raise DeviceError(f"typing failed: `input text {text}` exited 1")
        self.typed.append(text)

    def tap(self, x: int, y: int) -> None:
        self.typed.append(f"tap {x} {y}")


def test_the_device_types_the_value_and_no_error_quotes_it() -> None:
    source = MappingSource({"pin": SECRET})
    phone = _Phone()
    dev = with_secrets(phone, source)  # type: ignore[arg-type]
    dev.input_text("code " + reference("pin"))
    dev.tap(1, 2)  # everything else goes through unchanged
    assert phone.typed == [f"code {SECRET}", "tap 1 2"]
    failing = with_secrets(_Phone(fail=True), source)  # type: ignore[arg-type]
    with pytest.raises(DeviceError) as caught:
        failing.input_text(reference("pin"))
    assert SECRET not in str(caught.value) and caught.value.__cause__ is None
    with pytest.raises(DeviceError, match="tapwise secrets set nope"):
        dev.input_text(reference("nope"))
    assert names_in("a {{ secret : x.y }} b {{secret:z}}") == ("x.y", "z")
