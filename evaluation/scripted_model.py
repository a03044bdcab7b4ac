"""A scripted stand-in for an Ollama / OpenAI-compatible LLM server, over real loopback HTTP.

The self-test (``app.selftest``) drives one agent step against it, and the test suite and
bench scripts reuse it, so every scripted conversation goes through the same real HTTP
clients as a real server.  It answers ``POST /api/chat``, ``GET /api/tags``,
``GET /api/version``, ``POST /v1/chat/completions`` and ``GET /v1/models``.  Replies come
from rules: the first rule whose matcher accepts the prompt answers, popping its replies
in order and repeating the last one; without a matching rule the ``responder`` (if any)
or the ``default`` reply answers.  A ``Reply`` can carry a delay (to provoke client
timeouts), an HTTP status or a raw, malformed body.  Every chat request is recorded.

It listens on 127.0.0.1 only, serves no model and downloads nothing.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:  # clients hanging up on timeouts
        pass


@dataclass(frozen=True)
class Reply:
    """One scripted answer: its text, or a delay, an HTTP error status or a raw body."""

    text: str = ""
    delay_s: float = 0.0
    status: int = 200
    raw_body: str | None = None  # sent verbatim instead of a well-formed response
    prompt_tokens: int = 11
    completion_tokens: int = 7


Matcher = str | Callable[[str], bool]


@dataclass
class _Rule:
    matcher: Matcher
    replies: list[Reply]
    used: int = 0

    def accepts(self, prompt: str) -> bool:
        if callable(self.matcher):
            return bool(self.matcher(prompt))
        return self.matcher.lower() in prompt.lower()

    def next(self) -> Reply:
        r = self.replies[min(self.used, len(self.replies) - 1)]
        self.used += 1
        return r


@dataclass
class Seen:
    """A chat request as it arrived: path, JSON body and the prompt's text."""

    path: str
    body: dict[str, Any]
    prompt: str


@dataclass
class ScriptedLLMServer:
    """See the module docstring; use as a context manager (``with ScriptedLLMServer() as s``)."""

    default: Reply | str = field(default_factory=lambda: Reply("wait"))
    models: tuple[str, ...] = ("scripted-model:latest",)
    rules: list[_Rule] = field(default_factory=list)
    requests: list[Seen] = field(default_factory=list)
    responder: Callable[[str], Reply | str] | None = None  # asked when no rule matches

    def __post_init__(self) -> None:
        if isinstance(self.default, str):
            self.default = Reply(self.default)
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None

    @property
    def chat_requests(self) -> int:
        """How many chat requests arrived."""
        with self._lock:
            return len(self.requests)

    # ---- scripting ----------------------------------------------------------------
    def on(self, matcher: Matcher, *replies: Reply | str) -> ScriptedLLMServer:
        items = [r if isinstance(r, Reply) else Reply(r) for r in replies]
        if not items:
            raise ValueError("give at least one reply")
        with self._lock:
            self.rules.append(_Rule(matcher, items))
        return self

    def prompts(self, containing: str = "") -> list[str]:
        return [s.prompt for s in self.requests if containing.lower() in s.prompt.lower()]

    def _pick(self, prompt: str) -> Reply:
        with self._lock:
            for rule in self.rules:
                if rule.accepts(prompt):
                    return rule.next()
        if self.responder is not None:
            r = self.responder(prompt)
            return r if isinstance(r, Reply) else Reply(r)
        return self.default if isinstance(self.default, Reply) else Reply(self.default)

    # ---- lifecycle ------------------------------------------------------------------
    @property
    def url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("the scripted LLM server is not running: use it in a with block")
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def start(self) -> ScriptedLLMServer:
        handler = type("Handler", (_Handler,), {"server_of_script": self})
        self._httpd = _QuietServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, name="scripted-llm", daemon=True).start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> ScriptedLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _prompt_text(messages: list[Any]) -> str:
    """The text of every message, images left out (what the rules match against)."""
    return "\n".join(
        m["content"] if isinstance(m.get("content"), str)
        else " ".join(p.get("text", "") for p in m.get("content", []) if isinstance(p, dict))
        for m in messages
    )


def _completion(path: str, model: str, reply: Reply) -> dict[str, Any]:
    """A finished chat reply in the wire format of ``path`` (Ollama's or OpenAI's)."""
    if path == "/api/chat":
        return {
            "model": model, "created_at": "2026-01-01T00:00:00Z",
            "message": {"role": "assistant", "content": reply.text}, "done": True,
            "done_reason": "stop", "prompt_eval_count": reply.prompt_tokens, "eval_count": reply.completion_tokens,
        }
    return {
        "id": "cmpl-scripted", "object": "chat.completion", "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": reply.text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": reply.prompt_tokens, "completion_tokens": reply.completion_tokens},
    }


class _Handler(BaseHTTPRequestHandler):
    """One HTTP exchange with the scripted server (``server_of_script`` is set per server)."""

    protocol_version = "HTTP/1.1"
    server_of_script: ScriptedLLMServer

    def log_message(self, *args: Any) -> None:  # keep output quiet
        pass

    def _send(self, status: int, body: str, ctype: str = "application/json") -> None:
        data = body.encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout)
            pass

    def do_GET(self) -> None:
        models = self.server_of_script.models
        if self.path == "/api/version":
            self._send(200, json.dumps({"version": "0.0.0-scripted"}))
        elif self.path == "/api/tags":
            self._send(200, json.dumps({"models": [{"model": m, "name": m} for m in models]}))
        elif self.path == "/v1/models":
            self._send(200, json.dumps({"object": "list", "data": [{"id": m} for m in models]}))
        else:
            self._send(404, json.dumps({"error": "not found"}))

    def do_POST(self) -> None:
        script = self.server_of_script
        length = int(self.headers.get("Content-Length") or 0)
        if self.path not in ("/api/chat", "/v1/chat/completions"):
            self.rfile.read(length)
            self._send(404, json.dumps({"error": "not found"}))
            return
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except json.JSONDecodeError:
            self._send(400, json.dumps({"error": "bad json"}))
            return
        prompt = _prompt_text(body.get("messages") or [])
        with script._lock:
            script.requests.append(Seen(self.path, body, prompt))
        reply = script._pick(prompt)
        if reply.delay_s:
            time.sleep(reply.delay_s)
        if reply.raw_body is not None:
            self._send(reply.status, reply.raw_body)
        elif reply.status != 200:
            self._send(reply.status, json.dumps({"error": f"scripted failure {reply.status}"}))
        else:
            self._send(200, json.dumps(_completion(self.path, body.get("model", ""), reply)))
