"""The vault: named secrets kept outside the database, for ``{{secret:NAME}}`` references.

Two places can keep them, chosen once when the vault is opened (``open_vault``):

* **the OS keyring** through the ``keyring`` library, when a real keyring answers (the
  Secret Service on Linux desktops, the macOS Keychain, Windows' Credential Locker).  A
  keyring cannot list what it keeps, so the secrets' *names* (never values) are kept in
  ``secret-names.json`` beside the settings;
* otherwise **an encrypted file** (``vault.bin``, Fernet from ``cryptography``: AES-128-CBC
  with an HMAC) in the settings folder.  Its key comes from ``TAPWISE_VAULT_PASSPHRASE``
  through scrypt when that is set, else from a key file (``vault.key``).  The folder and
  both files are made readable by the user only (0700 / 0600).  Without a passphrase this
  guards against a stray copy of the vault file, not against someone who can read all of
  the user's files; an OS keyring does better, and ``tapwise secrets list`` says which is in use.

Values leave a vault only through ``value`` (for ``agent.secrets.SecretTypingDevice``);
``names`` never shows them.  Nothing here logs a value or puts one in an error message.
Qt-free; the window's Secrets dialog and ``tapwise secrets`` use this module.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import tempfile
import threading
from pathlib import Path
from typing import Protocol

from agent.secrets import SecretMissing, check_name

log = logging.getLogger(__name__)

SERVICE = "tapwise"
PASSPHRASE_ENV = "TAPWISE_VAULT_PASSPHRASE"
#: The most a secret's value may hold (characters): a password or a PIN, not a file.
MAX_VALUE_CHARS = 4096


class VaultError(RuntimeError):
    """The vault cannot be read or written; the message says why and what to do."""


class Vault(Protocol):
    """Named secrets.  ``value`` raises ``SecretMissing``; the others ``VaultError``."""

    @property
    def where(self) -> str: ...

    def names(self) -> list[str]: ...

    def value(self, name: str) -> str: ...

    def set(self, name: str, value: str) -> None: ...

    def delete(self, name: str) -> bool: ...


def _check_value(value: str) -> str:
    if not value:
        raise ValueError("a secret cannot be empty")
    if len(value) > MAX_VALUE_CHARS:
        raise ValueError(f"a secret holds at most {MAX_VALUE_CHARS} characters")
    if "\n" in value or "\r" in value:
        raise ValueError("a secret is one line (a password or a PIN): it holds no line break")
    return value


def _private_dir(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    try:
        os.chmod(folder, 0o700)
    except OSError as exc:  # a folder we do not own: the files themselves are still 0600
        log.warning("could not make %s private: %s", folder, exc)


def _write_private(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically, readable and writable by the user only."""
    _private_dir(path.parent)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# ---- the encrypted file -----------------------------------------------------------------------


class FileVault:
    """Secrets in an encrypted file (see the module docstring)."""

    def __init__(self, folder: Path, *, passphrase: str | None = None) -> None:
        self.folder = folder
        self.path = folder / "vault.bin"
        self.key_path = folder / "vault.key"
        self._passphrase = passphrase
        self._lock = threading.Lock()

    @property
    def where(self) -> str:
        how = "a passphrase" if self._passphrase else f"the key in {self.key_path}"
        return f"an encrypted file ({self.path}, locked with {how})"

    # -- keys ------------------------------------------------------------------------------
    def _fernet(self, salt: bytes, *, create: bool) -> object:
        try:
            from cryptography.fernet import Fernet
        except ImportError as exc:
            raise VaultError("the vault needs the 'cryptography' package: pip install cryptography") from exc
        if self._passphrase:
            from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

            key = Scrypt(salt=salt, length=32, n=2 ** 15, r=8, p=1).derive(self._passphrase.encode())
            return Fernet(base64.urlsafe_b64encode(key))
        if not self.key_path.exists():
            if not create:
                raise VaultError(f"the vault file {self.path} cannot be opened: its key {self.key_path} is missing "
                                 f"(restore it, or set {PASSPHRASE_ENV} if the vault was made with a passphrase)")
            _write_private(self.key_path, Fernet.generate_key())
        try:
            return Fernet(self.key_path.read_bytes().strip())
        except (OSError, ValueError) as exc:
            raise VaultError(f"the vault's key {self.key_path} cannot be used ({type(exc).__name__}); "
                             "restore it, or delete the vault and its key to start a new one") from None

    # -- the file ---------------------------------------------------------------------------
    def _load(self) -> tuple[dict[str, str], bytes]:
        if not self.path.exists():
            return {}, os.urandom(16)
        try:
            doc = json.loads(self.path.read_bytes())
            salt = base64.b64decode(doc["salt"])
            token = doc["token"].encode()
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise VaultError(f"the vault file {self.path} is damaged ({type(exc).__name__}); "
                             "move it away to start a new one") from None
        from cryptography.fernet import InvalidToken

        try:
            plain = self._fernet(salt, create=False).decrypt(token)  # type: ignore[attr-defined]
        except InvalidToken:
            hint = (f"check {PASSPHRASE_ENV}" if self._passphrase else
                    f"the key file {self.key_path} does not belong to it (or {PASSPHRASE_ENV} was set when it was made)")
            raise VaultError(f"the vault file {self.path} cannot be opened: {hint}") from None
        try:
            data = json.loads(plain)
        except ValueError:  # the key fits, what it opens is not the vault's JSON
            data = None
        if not isinstance(data, dict):
            raise VaultError(f"the vault file {self.path} is damaged (it opens, but holds no list of secrets); "
                             "restore it from a backup, or move it away to start a new one")
        return {str(k): str(v) for k, v in data.items()}, salt

    def _save(self, secrets: dict[str, str], salt: bytes) -> None:
        token = self._fernet(salt, create=True).encrypt(json.dumps(secrets).encode())  # type: ignore[attr-defined]
        doc = {"format": "tapwise-vault", "version": 1, "kdf": "scrypt" if self._passphrase else "keyfile",
               "salt": base64.b64encode(salt).decode(), "token": token.decode()}
        _write_private(self.path, json.dumps(doc).encode())

    # -- Vault --------------------------------------------------------------------------------
    def names(self) -> list[str]:
        with self._lock:
            return sorted(self._load()[0])

    def value(self, name: str) -> str:
        with self._lock:
            secrets, _ = self._load()
        if name not in secrets:
            raise SecretMissing(name)
        return secrets[name]

    def set(self, name: str, value: str) -> None:
        name, value = check_name(name), _check_value(value)
        with self._lock:
            secrets, salt = self._load()
            secrets[name] = value
            self._save(secrets, salt)

    def delete(self, name: str) -> bool:
        with self._lock:
            secrets, salt = self._load()
            if secrets.pop(name, None) is None:
                return False
            self._save(secrets, salt)
            return True


# ---- the OS keyring ------------------------------------------------------------------------


class KeyringVault:
    """Secrets in the OS keyring; their names in ``secret-names.json`` (see the module docstring)."""

    def __init__(self, folder: Path, backend: object | None = None) -> None:
        import keyring

        self._keyring = backend if backend is not None else keyring.get_keyring()
        self.index_path = folder / "secret-names.json"
        self._lock = threading.Lock()

    @property
    def where(self) -> str:
        return f"the OS keyring ({type(self._keyring).__module__}.{type(self._keyring).__name__})"

    def _index(self) -> list[str]:
        try:
            data = json.loads(self.index_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return []
        except (OSError, ValueError) as exc:
            raise VaultError(f"the list of secret names {self.index_path} is damaged ({exc})") from None
        return sorted({str(n) for n in data}) if isinstance(data, list) else []

    def _set_index(self, names: list[str]) -> None:
        _write_private(self.index_path, json.dumps(sorted(set(names))).encode())

    def names(self) -> list[str]:
        with self._lock:
            return self._index()

    def value(self, name: str) -> str:
        from keyring.errors import KeyringError

        try:
            value = self._keyring.get_password(SERVICE, name)  # type: ignore[attr-defined]
        except KeyringError as exc:
            raise VaultError(f"the OS keyring did not answer: {type(exc).__name__}") from None
        if value is None:
            raise SecretMissing(name)
        return str(value)

    def set(self, name: str, value: str) -> None:
        from keyring.errors import KeyringError

        name, value = check_name(name), _check_value(value)
        with self._lock:
            try:
                self._keyring.set_password(SERVICE, name, value)  # type: ignore[attr-defined]
            except KeyringError as exc:
                raise VaultError(f"the OS keyring refused the secret: {type(exc).__name__}") from None
            self._set_index([*self._index(), name])

    def delete(self, name: str) -> bool:
        from keyring.errors import KeyringError, PasswordDeleteError

        with self._lock:
            names = self._index()
            try:
                self._keyring.delete_password(SERVICE, name)  # type: ignore[attr-defined]
            except PasswordDeleteError:
                found = False
            except KeyringError as exc:
                raise VaultError(f"the OS keyring refused to delete it: {type(exc).__name__}") from None
            else:
                found = True
            if name in names:
                self._set_index([n for n in names if n != name])
            return found or name in names


def keyring_answers() -> tuple[bool, str]:
    """Whether a real OS keyring is there (not keyring's "fail" or plain-text backends), and which."""
    try:
        import keyring
    except ImportError:
        return False, "the 'keyring' package is not installed"
    backend = keyring.get_keyring()
    name = f"{type(backend).__module__}.{type(backend).__name__}"
    try:
        priority = float(getattr(backend, "priority", 0))
    except Exception:  # a backend whose priority cannot be read is not trusted
        priority = 0.0
    if priority < 1 or name.startswith(("keyring.backends.fail", "keyrings.alt")):
        return False, f"no OS keyring answers ({name})"
    return True, name


def open_vault(folder: Path | None = None, *, use_keyring: bool | None = None) -> Vault:
    """The user's vault: the OS keyring when one answers (``use_keyring`` None) or when asked
    (True), else the encrypted file in ``folder`` (default: the settings folder)."""
    from app.settings import config_dir

    folder = folder or config_dir()
    if use_keyring is None:
        use_keyring = keyring_answers()[0]
    if use_keyring:
        return KeyringVault(folder)
    return FileVault(folder, passphrase=os.environ.get(PASSPHRASE_ENV) or None)
