"""A scripted stand-in for an Ollama / OpenAI-compatible server, over real loopback HTTP.

Answers ``POST /api/chat``, ``GET /api/tags``, ``GET /api/version``,
``POST /v1/chat/completions`` and ``GET /v1/models``.  Replies come from rules: the first
rule whose matcher accepts the prompt answers, popping its replies in order and repeating
the last one.  A ``Reply`` can carry a delay (to provoke client timeouts), an HTTP status
or a raw, malformed body.  Every request is recorded for assertions.
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
    path: str
    body: dict[str, Any]
    prompt: str


@dataclass
class FakeLLMServer:
    default: Reply = field(default_factory=lambda: Reply("wait"))
    models: tuple[str, ...] = ("fake-model:latest", "llava:7b")
    rules: list[_Rule] = field(default_factory=list)
    requests: list[Seen] = field(default_factory=list)
    responder: Callable[[str], Reply | str] | None = None  # asked when no rule matches

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None

    # ---- scripting ----------------------------------------------------------------
    def on(self, matcher: Matcher, *replies: Reply | str) -> FakeLLMServer:
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
        return self.default

    # ---- lifecycle ------------------------------------------------------------------
    @property
    def url(self) -> str:
        assert self._httpd is not None, "server not started"
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> FakeLLMServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output quiet
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
                if self.path == "/api/version":
                    self._send(200, json.dumps({"version": "0.0.0-fake"}))
                elif self.path == "/api/tags":
                    self._send(200, json.dumps({"models": [{"model": m, "name": m} for m in server.models]}))
                elif self.path == "/v1/models":
                    self._send(200, json.dumps({"object": "list", "data": [{"id": m} for m in server.models]}))
                else:
                    self._send(404, json.dumps({"error": "not found"}))

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except json.JSONDecodeError:
                    self._send(400, json.dumps({"error": "bad json"}))
                    return
                messages = body.get("messages") or []
                prompt = "\n".join(
                    m["content"] if isinstance(m.get("content"), str)
                    else " ".join(p.get("text", "") for p in m.get("content", []) if isinstance(p, dict))
                    for m in messages
                )
                with server._lock:
                    server.requests.append(Seen(self.path, body, prompt))
                reply = server._pick(prompt)
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                if reply.raw_body is not None:
                    self._send(reply.status, reply.raw_body)
                    return
                if reply.status != 200:
                    self._send(reply.status, json.dumps({"error": f"scripted failure {reply.status}"}))
                    return
                if self.path == "/api/chat":
                    out = {
                        "model": body.get("model", ""), "created_at": "2026-01-01T00:00:00Z",
                        "message": {"role": "assistant", "content": reply.text}, "done": True,
                        "done_reason": "stop", "prompt_eval_count": reply.prompt_tokens,
                        "eval_count": reply.completion_tokens,
                    }
                elif self.path == "/v1/chat/completions":
                    out = {
                        "id": "cmpl-fake", "object": "chat.completion", "model": body.get("model", ""),
                        "choices": [{"index": 0, "message": {"role": "assistant", "content": reply.text},
                                     "finish_reason": "stop"}],
                        "usage": {"prompt_tokens": reply.prompt_tokens, "completion_tokens": reply.completion_tokens},
                    }
                else:
                    self._send(404, json.dumps({"error": "not found"}))
                    return
                self._send(200, json.dumps(out))

        self._httpd = _QuietServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, name="fake-llm", daemon=True).start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
