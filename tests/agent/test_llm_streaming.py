"""The LLM timeout bounds the whole call, and replies stream to whoever listens.

A small HTTP server on loopback plays the awkward server: it trickles a reply in pieces
(each piece well inside a read timeout, the whole far beyond the call's timeout), or
streams server-sent events as llama.cpp's server does.  The clients are the product's own
(httpx underneath).  Timings are bounds with a wide margin, never exact figures.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from agent.llm.base import CancelToken, ChatRequest, LLMError, RetryPolicy
from agent.llm.openai_client import OpenAIClient

PIECES = 10


def _completion(text: str) -> bytes:
    return json.dumps({"choices": [{"message": {"content": text}}],
                       "usage": {"prompt_tokens": 5, "completion_tokens": 3}}).encode()


class _Handler(BaseHTTPRequestHandler):
    gap_s = 0.3
    refuse_stream = False

    def log_message(self, *args: object) -> None:  # quiet
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        try:
            if body.get("stream") and self.refuse_stream:
                self.send_response(400)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            if body.get("stream"):
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                for word in ("tap ", "Network ", "& internet"):
                    chunk = {"choices": [{"delta": {"content": word}}]}
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                    self.wfile.flush()
                    time.sleep(0.05)
                self.wfile.write(b"data: [DONE]\n\n")
                return
            data = _completion("tap Display")
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            step = -(-len(data) // PIECES)
            for i in range(0, len(data), step):  # a trickle: each piece inside any read timeout
                self.wfile.write(data[i:i + step])
                self.wfile.flush()
                time.sleep(self.gap_s)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up, as it should
            pass


@pytest.fixture
def awkward_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def _chat_heard(client, prompt: str = "next?") -> tuple[str, list[str]]:
    """Ask ``client`` with a listener on the reply's stream: the reply's text, and every
    partial text the listener heard on the way."""
    heard: list[str] = []
    token = CancelToken()
    token.listen(heard.append)
    return client.chat(ChatRequest(prompt), token).text, heard


def test_a_trickled_reply_cannot_outlast_the_timeout(awkward_server):
    client = OpenAIClient(model="m", base_url=awkward_server, policy=RetryPolicy(attempts=1, timeout_s=1.0))
    t0 = time.monotonic()
    with pytest.raises(LLMError, match="timed out after 1 s"):
        client.chat(ChatRequest("next?"))
    assert time.monotonic() - t0 < PIECES * _Handler.gap_s * 0.7  # well before the trickle ends
    client.close()


def test_a_trickled_reply_inside_the_timeout_arrives_whole(awkward_server):
    client = OpenAIClient(model="m", base_url=awkward_server, policy=RetryPolicy(attempts=1, timeout_s=30.0))
    assert client.chat(ChatRequest("next?")).text == "tap Display"
    client.close()


def test_a_listener_on_the_cancel_token_hears_the_reply_grow(awkward_server):
    client = OpenAIClient(model="m", base_url=awkward_server, policy=RetryPolicy(attempts=1, timeout_s=10.0))
    text, heard = _chat_heard(client)
    assert text == "tap Network & internet"
    assert heard == ["tap ", "tap Network ", "tap Network & internet"]
    client.close()


def test_streaming_also_reads_a_server_that_answers_with_one_body(server, openai_client):
    server.on("next?", "go back")
    assert _chat_heard(openai_client) == ("go back", ["go back"])


def test_ollama_streams_too(server, ollama):
    server.on("next?", "scroll down")
    text, heard = _chat_heard(ollama)
    assert text == "scroll down"
    assert heard and heard[-1] == "scroll down"


def test_a_server_that_cannot_stream_is_asked_again_without(awkward_server, monkeypatch):
    monkeypatch.setattr(_Handler, "refuse_stream", True)
    monkeypatch.setattr(_Handler, "gap_s", 0.0)
    client = OpenAIClient(model="m", base_url=awkward_server, policy=RetryPolicy(attempts=1, timeout_s=10.0))
    token = CancelToken()
    token.listen(lambda text: None)
    assert client.chat(ChatRequest("next?"), token).text == "tap Display"
    assert client.streams is False  # not tried again on this server
    client.close()
