"""Start and stop llama.cpp's OpenAI-compatible server (llama-cpp-python) on loopback
with a bundled GGUF, reporting progress while the model is prepared and loaded.

``BuiltinServer`` runs the server as a child process (``python -m app.builtin_model.server ...``)
so a crash in native code cannot take the caller down, and stops it cleanly (terminate,
then kill).  ``serve_main`` is that child's entry point: it carries the CPU workaround
(llama.cpp's AMX/"extra buffer" weight repacking crashes with a general-protection fault
on CPUs that report AMX inside sandboxes that do not grant it; the server has no option
for it, so the default model parameters are patched before the server starts).
This module only binds 127.0.0.1 and never downloads anything.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import httpx

from app.builtin_model.catalog import BundledModel, ModelFileError, prepare
from phone.ports import free_port

log = logging.getLogger(__name__)

LOOPBACK = "127.0.0.1"


class ServerError(RuntimeError):
    """The built-in server could not start (missing extra, bad model file, crash, timeout)."""


@dataclass(frozen=True)
class ServerProgress:
    """One progress report: ``phase`` is preparing, loading, ready or stopped;
    ``fraction`` is in [0, 1] or None when unknown."""

    phase: str
    message: str
    fraction: float | None = None


ProgressFn = Callable[[ServerProgress], None]


@dataclass(frozen=True)
class ServerOptions:
    """How the server runs.  ``threads`` 0 picks half the cores (at least one) for generating
    tokens — on a busy two-core machine more threads make llama.cpp's thread barriers spin —
    and every core for reading the prompt, which is most of a step's wait and scales: a
    600-token prompt of the 0.5B model took 7.5 s on one core and 3.9 s on two (quiet
    2-core machine, 2026-11-25)."""

    port: int = 0  # 0: a free port
    n_ctx: int = 8192
    threads: int = 0
    start_timeout_s: float = 180.0

    def resolved_threads(self) -> int:
        return self.threads or max(1, (os.cpu_count() or 2) // 2)

    def resolved_batch_threads(self) -> int:
        return self.threads or max(1, os.cpu_count() or 1)


def missing_server_extra() -> str | None:
    """Why the server cannot run here, or None when llama-cpp-python[server] is importable."""
    import importlib.util

    for mod in ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings"):
        if importlib.util.find_spec(mod) is None:
            return f"{mod} is not installed; install the built-in model's server with: pip install 'tapwise[builtin]'"
    return None


class BuiltinServer:
    """llama.cpp's server for one bundled model, owned by the caller: ``start()`` blocks
    until it answers (or raises ``ServerError``), ``stop()`` ends it; also a context manager."""

    def __init__(self, model: BundledModel, options: ServerOptions | None = None, *, log_dir: Path | None = None) -> None:
        self.model = model
        self.options = options or ServerOptions()
        self.port = self.options.port or 0
        self._proc: subprocess.Popen[bytes] | None = None
        self._log_dir = log_dir
        self._log_file: IO[bytes] | None = None
        self.log_path: Path | None = None
        self._lock = threading.Lock()

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible base URL (ends in ``/v1``)."""
        return f"http://{LOOPBACK}:{self.port}/v1"

    @property
    def alias(self) -> str:
        return self.model.alias

    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def command(self, gguf: Path) -> list[str]:
        threads = str(self.options.resolved_threads())
        cmd = [sys.executable, "-m", "app.builtin_model.server", "--model", str(gguf), "--model_alias", self.model.alias,
               "--host", LOOPBACK, "--port", str(self.port), "--n_ctx", str(self.options.n_ctx),
               "--n_threads", threads, "--n_threads_batch", str(self.options.resolved_batch_threads())]
        if self.model.chat_format:
            cmd += ["--chat_format", self.model.chat_format]
        return cmd

    def log_tail(self, chars: int = 2000) -> str:
        if self.log_path is None or not self.log_path.exists():
            return ""
        return self.log_path.read_text(errors="replace")[-chars:]

    def start(self, progress: ProgressFn | None = None, cancel: threading.Event | None = None) -> str:
        """Prepare the model file, start the server and wait until it serves; returns the base URL."""
        report = progress or (lambda p: None)
        problem = missing_server_extra()
        if problem:
            raise ServerError(problem)

        def on_file(phase: str, done: int, total: int) -> None:
            word = "Assembling" if phase == "assembling" else "Verifying"
            report(ServerProgress("preparing", f"{word} {self.model.title}", done / total if total else None))

        report(ServerProgress("preparing", f"Preparing {self.model.title}", 0.0))
        try:
            gguf = prepare(self.model, progress=on_file)
        except ModelFileError as exc:
            raise ServerError(str(exc)) from exc
        with self._lock:
            if self.running():
                return self.base_url
            if not self.port:
                self.port = free_port()
            folder = self._log_dir or Path(tempfile.mkdtemp(prefix="tapwise-llm-"))
            folder.mkdir(parents=True, exist_ok=True)
            self.log_path = folder / f"llama-server-{self.port}.log"
            self._log_file = self.log_path.open("wb")
            env = {**os.environ, "PYTHONUNBUFFERED": "1"}
            self._proc = subprocess.Popen(self.command(gguf), stdout=self._log_file, stderr=subprocess.STDOUT,
                                          env=env)
        log.info("started llama.cpp server pid %s on port %s for %s", self._proc.pid, self.port, gguf)
        self._wait_ready(report, cancel)
        report(ServerProgress("ready", f"{self.model.title} is ready at {self.base_url}", 1.0))
        return self.base_url

    def _wait_ready(self, report: ProgressFn, cancel: threading.Event | None) -> None:
        t0 = time.monotonic()
        deadline = t0 + self.options.start_timeout_s
        while True:
            proc = self._proc
            if proc is None:
                raise ServerError("the server was stopped while starting")
            if proc.poll() is not None:
                tail = self.log_tail()
                self.stop()
                raise ServerError(f"the llama.cpp server exited with code {proc.returncode} while loading:\n{tail}")
            if cancel is not None and cancel.is_set():
                self.stop()
                raise ServerError("start cancelled")
            try:
                if httpx.get(f"{self.base_url}/models", timeout=2.0).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            elapsed = time.monotonic() - t0
            if elapsed > self.options.start_timeout_s:
                tail = self.log_tail()
                self.stop()
                raise ServerError(f"the llama.cpp server did not answer within {self.options.start_timeout_s:.0f} s:\n{tail}")
            report(ServerProgress("loading", f"Loading {self.model.title} ({elapsed:.0f} s)",
                                  min(0.95, elapsed / max(1.0, deadline - t0))))
            time.sleep(0.3)

    def stop(self, timeout_s: float = 10.0) -> None:
        """End the server: terminate, then kill after ``timeout_s``.  Safe to call twice."""
        with self._lock:
            proc, self._proc = self._proc, None
            if proc is not None and proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout_s)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(5)
                log.info("stopped llama.cpp server on port %s", self.port)
            if self._log_file is not None:
                self._log_file.close()
                self._log_file = None

    def __enter__(self) -> BuiltinServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def serve_main() -> None:
    """Entry point of the server process: the AMX workaround, then llama_cpp.server's main
    (which reads its own command-line arguments)."""
    import llama_cpp.llama_cpp as bindings  # the module ``llama_cpp.llama`` calls into

    original = bindings.llama_model_default_params

    def without_extra_buffers():  # type: ignore[no-untyped-def]
        params = original()
        params.use_extra_bufts = False
        return params

    bindings.llama_model_default_params = without_extra_buffers
    _exit_with_parent()
    from llama_cpp.server.__main__ import main as serve

    serve()


def _exit_with_parent() -> None:
    """End this server when the process that started it is gone (killed without the chance
    to stop us), so no orphaned model keeps a core busy.  ctypes releases the GIL during
    inference, so the watcher runs even while a long prompt is evaluated."""
    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(1.0)
            if os.getppid() != parent:
                os._exit(0)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


if __name__ == "__main__":
    serve_main()
