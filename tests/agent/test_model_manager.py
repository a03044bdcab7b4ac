"""The model manager through the ``ollama`` client library: listing Ollama's models with
the adapter each name selects, pulling with progress, and per-model preferences.

The Ollama side is a small HTTP server speaking Ollama's documented wire format
(``GET /api/tags``, ``POST /api/pull`` streaming one JSON object per line)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from app.model_prefs import ModelManager, ModelPrefs, PrefsStore, PullError, PullProgress

TAGS = {"models": [
    {"name": "qwen3-vl:4b", "model": "qwen3-vl:4b", "modified_at": "2026-11-01T00:00:00Z", "size": 3_300_000_000,
     "digest": "a" * 64, "details": {"parameter_size": "4.4B", "quantization_level": "Q4_K_M"}},
    {"name": "llama3.2:latest", "model": "llama3.2:latest", "modified_at": "2026-11-01T00:00:00Z", "size": 2_000_000_000,
     "digest": "b" * 64, "details": {"parameter_size": "3.2B", "quantization_level": "Q4_K_M"}},
]}
PULL = [{"status": "pulling manifest"},
        {"status": "pulling 6a0746a1ec1a", "digest": "sha256:6a07", "total": 1000, "completed": 250},
        {"status": "pulling 6a0746a1ec1a", "digest": "sha256:6a07", "total": 1000, "completed": 1000},
        {"status": "verifying sha256 digest"}, {"status": "success"}]


class _Ollama(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        body = json.dumps(TAGS).encode() if self.path == "/api/tags" else b"{}"
        self.send_response(200 if self.path == "/api/tags" else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.path != "/api/pull":
            self.send_response(404)
            self.end_headers()
            return
        if request.get("model", request.get("name")) == "no-such-model":
            body = json.dumps({"error": "pull model manifest: file does not exist"}).encode()
            self.send_response(500)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        lines = b"".join(json.dumps(p).encode() + b"\n" for p in PULL)
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Content-Length", str(len(lines)))
        self.end_headers()
        self.wfile.write(lines)


@pytest.fixture
def ollama_url():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Ollama)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
    thread.join(5)


def test_the_list_names_each_models_adapter_and_adds_the_builtin_ones(ollama_url: str) -> None:
    listing = ModelManager(ollama_url).list_models()
    assert listing.ollama_reachable and not listing.problems
    by_name = {m.name: m for m in listing.models}
    assert by_name["qwen3-vl:4b"].adapter == "qwen3-vl" and by_name["qwen3-vl:4b"].source == "ollama"
    assert by_name["llama3.2:latest"].adapter == ""
    assert "4.4B" in by_name["qwen3-vl:4b"].note
    assert all("demo-grade" in m.note for m in listing.models if m.source == "builtin")


def test_an_unreachable_ollama_is_a_problem_line_not_a_crash() -> None:
    listing = ModelManager("http://127.0.0.1:9", timeout_s=1.0).list_models()
    assert not listing.ollama_reachable
    assert "not reachable at http://127.0.0.1:9" in listing.problems[0]


def test_a_pull_reports_progress_until_success(ollama_url: str) -> None:
    seen: list[PullProgress] = []
    ModelManager(ollama_url).pull("qwen3-vl:4b", seen.append)
    assert [p.status for p in seen][0] == "pulling manifest" and seen[-1].status == "success"
    assert [p.fraction for p in seen if p.fraction is not None] == [0.25, 1.0]


def test_a_failed_or_cancelled_pull_says_so(ollama_url: str) -> None:
    with pytest.raises(PullError, match="could not pull no-such-model"):
        ModelManager(ollama_url).pull("no-such-model")
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(PullError, match="cancelled"):
        ModelManager(ollama_url).pull("qwen3-vl:4b", cancel=cancel)


def test_preferences_are_kept_per_model_and_a_broken_file_is_set_aside(tmp_path: Path) -> None:
    path = tmp_path / "models.json"
    store = PrefsStore.load(path)
    store.set("qwen3-vl:4b", context_length=8192, image_max_side=1280, adapter="qwen3-vl")
    again = PrefsStore.load(path)
    assert again.get("qwen3-vl:4b") == ModelPrefs(8192, 0.0, 1280, "qwen3-vl")
    assert again.planner_for("qwen3-vl:4b", "zeroshot-") == "adapter:qwen3-vl"
    assert again.planner_for("llama3.2", "zeroshot-") == "zeroshot-"
    with pytest.raises(ValueError, match="choose one of"):
        again.set("llama3.2", adapter="no-such-family")
    with pytest.raises(ValueError, match="temperature"):
        again.set("llama3.2", temperature=5.0)
    path.write_text("{not json")
    broken = PrefsStore.load(path)
    assert "could not be read" in broken.problem and broken.get("qwen3-vl:4b") == ModelPrefs()
    assert list(tmp_path.glob("models.json.broken-*"))
