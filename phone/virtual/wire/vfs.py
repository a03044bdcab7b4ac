"""The served phone's tiny in-memory file system (for sync push/pull and dump files).

Files are bytes keyed by absolute path; directories are implied by a fixed set of roots
plus every parent of a stored file.  Thread-safe; knows nothing about adb.
"""

from __future__ import annotations

import posixpath
import stat
import threading
import time
from dataclasses import dataclass

ROOT_DIRS = ("/", "/sdcard", "/sdcard/Download", "/data", "/data/local", "/data/local/tmp", "/dev", "/system")


@dataclass(frozen=True, slots=True)
class Entry:
    name: str
    mode: int
    size: int
    mtime: int


class VirtualFS:
    def __init__(self) -> None:
        self._files: dict[str, tuple[bytes, int, int]] = {}
        self._dirs: set[str] = set(ROOT_DIRS)
        self._lock = threading.Lock()

    @staticmethod
    def norm(path: str) -> str:
        path = path.replace("/storage/emulated/0", "/sdcard").replace("/storage/self/primary", "/sdcard")
        return posixpath.normpath("/" + path.lstrip("/")) if path else "/"

    def write(self, path: str, data: bytes, mode: int = 0o644, *, append: bool = False) -> None:
        path = self.norm(path)
        if path.startswith("/dev/"):
            return
        with self._lock:
            parent = posixpath.dirname(path)
            if parent not in self._dirs:
                raise FileNotFoundError(f"{parent}: No such file or directory")
            if path in self._dirs:
                raise IsADirectoryError(f"{path}: Is a directory")
            if append and path in self._files:
                data = self._files[path][0] + data
            self._files[path] = (bytes(data), mode & 0o7777, int(time.time()))

    def read(self, path: str) -> bytes:
        path = self.norm(path)
        with self._lock:
            if path in self._files:
                return self._files[path][0]
            if path in self._dirs:
                raise IsADirectoryError(f"{path}: Is a directory")
        raise FileNotFoundError(f"{path}: No such file or directory")

    def exists(self, path: str) -> bool:
        path = self.norm(path)
        with self._lock:
            return path in self._files or path in self._dirs

    def mkdir(self, path: str, parents: bool = True) -> None:
        path = self.norm(path)
        with self._lock:
            while path not in self._dirs:
                if path in self._files:
                    raise FileExistsError(f"{path}: File exists")
                self._dirs.add(path)
                if not parents:
                    break
                path = posixpath.dirname(path)

    def remove(self, path: str, recursive: bool = False) -> None:
        path = self.norm(path)
        with self._lock:
            if path in self._files:
                del self._files[path]
                return
            if path in self._dirs and recursive and path not in ROOT_DIRS:
                prefix = path.rstrip("/") + "/"
                for p in [p for p in self._files if p.startswith(prefix)]:
                    del self._files[p]
                self._dirs = {d for d in self._dirs if d != path and not d.startswith(prefix)}
                return
            if path in self._dirs:
                raise IsADirectoryError(f"{path}: Is a directory")
        raise FileNotFoundError(f"{path}: No such file or directory")

    def stat(self, path: str) -> Entry | None:
        path = self.norm(path)
        with self._lock:
            if path in self._files:
                data, mode, mtime = self._files[path]
                return Entry(posixpath.basename(path), stat.S_IFREG | mode, len(data), mtime)
            if path in self._dirs:
                return Entry(posixpath.basename(path) or "/", stat.S_IFDIR | 0o771, 4096, int(time.time()))
        return None

    def listdir(self, path: str) -> list[Entry]:
        path = self.norm(path)
        with self._lock:
            if path not in self._dirs:
                raise FileNotFoundError(f"{path}: No such file or directory")
            names = {posixpath.basename(p) for p in self._files if posixpath.dirname(p) == path}
            names |= {posixpath.basename(d) for d in self._dirs if d != path and posixpath.dirname(d) == path}
        out = []
        for name in sorted(names):
            entry = self.stat(posixpath.join(path, name))
            if entry is not None:
                out.append(entry)
        return out
