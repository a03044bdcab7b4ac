"""``OpenAIClient``: chat with an OpenAI-compatible server (llama.cpp, vLLM, LM Studio).

Talks ``POST {base_url}/chat/completions`` and ``GET {base_url}/models`` with httpx.
JSON mode is requested with ``response_format``; a request's JSON schema goes along in
the form the server understands: ``schema_style="json_object"`` (the default) sends
``{"type": "json_object", "schema": ...}``, which llama-cpp-python's server and
llama.cpp's own server turn into a grammar; ``"json_schema"`` sends OpenAI's
``{"type": "json_schema", "json_schema": {...}}`` (vLLM, LM Studio).  Servers that
ignore it still get their reply checked.  A request with ``on_text`` is streamed
(server-sent events; a server that answers with one JSON body is read as usual).
Retries, timeouts and cancellation come from ``RetryingClient``.
"""

from __future__ import annotations

import base64
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from agent.llm.base import ChatRequest, LLMError, RawReply, RetryingClient, TransientError
from agent.types import LLMCall

DEFAULT_BASE_URL = "http://127.0.0.1:8080/v1"
log = logging.getLogger(__name__)


class _NoStream(TransientError):
    """The server refused a streamed request or sent a stream that cannot be read."""


@dataclass
class OpenAIClient(RetryingClient):
    base_url: str = DEFAULT_BASE_URL
    api_key: str = "not-needed"
    schema_style: str = "json_object"  # or "json_schema" (OpenAI's form)
    _http: httpx.Client | None = field(default=None, repr=False)
    #: Whether to stream replies someone listens to (set False after a server refused to).
    streams: bool = True

    def describe_backend(self) -> str:
        return f"OpenAI-compatible server at {self.base_url}"

    def _client(self) -> httpx.Client:
        if self._http is None:
            self._http = httpx.Client(headers={"Authorization": f"Bearer {self.api_key}"})
        return self._http

    def _url(self, path: str) -> str:
        base = self.base_url.rstrip("/")
        if not base.endswith("/v1"):
            base += "/v1"
        return f"{base}/{path}"

    def _send(self, request: ChatRequest, timeout_s: float) -> RawReply:
        content: Any = request.prompt
        if request.images:
            content = [{"type": "text", "text": request.prompt}] + [
                {"type": "image_url", "image_url": {"url": "data:image/png;base64," + base64.b64encode(img).decode()}}
                for img in request.images
            ]
        messages = request.messages({"role": "user", "content": content})
        body: dict[str, Any] = {"model": self.model, "messages": messages, **request.sampling("max_tokens")}
        if request.json_schema is True:
            body["response_format"] = {"type": "json_object"}
        elif isinstance(request.json_schema, dict):
            body["response_format"] = self._schema_format(request.json_schema)
        if request.on_text is not None and self.streams:
            try:
                return self._stream(body, request.on_text, timeout_s)
            except _NoStream as exc:  # this server cannot stream: ask again without, and remember
                log.info("streaming from %s failed (%s); asking without streaming", self.base_url, exc)
                self.streams = False
        try:
            r = self._client().post(self._url("chat/completions"), json=body, timeout=timeout_s)
        except httpx.TimeoutException as exc:
            raise TransientError(f"timed out after {timeout_s:g} s ({type(exc).__name__})") from None
        except httpx.HTTPError as exc:
            raise TransientError(f"cannot reach {self.base_url}: {exc}") from None
        if r.status_code == 404:
            raise LLMError(f"{self.base_url} has no chat endpoint or model {self.model!r} (404)",
                           hint="check --base-url (it usually ends in /v1) and the model name")
        if r.status_code >= 400:
            raise TransientError(f"server answered {r.status_code}: {r.text[:200]}")
        try:
            data = r.json()
            text = data["choices"][0]["message"].get("content") or ""
        except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
            raise TransientError(f"malformed completion body: {type(exc).__name__}: {r.text[:120]!r}") from None
        usage = data.get("usage") or {}
        return RawReply(text, usage.get("prompt_tokens"), usage.get("completion_tokens"))

    def _stream(self, body: dict[str, Any], on_text: Callable[[str], None], timeout_s: float) -> RawReply:
        """The reply as server-sent events, each piece handed to ``on_text`` (the text so far)."""
        deadline = time.monotonic() + timeout_s
        parts: list[str] = []
        usage: dict[str, Any] = {}
        try:
            with self._client().stream("POST", self._url("chat/completions"), json={**body, "stream": True},
                                       timeout=timeout_s) as r:
                if r.status_code == 404:
                    raise LLMError(f"{self.base_url} has no chat endpoint or model {self.model!r} (404)",
                                   hint="check --base-url (it usually ends in /v1) and the model name")
                if r.status_code >= 400:
                    raise _NoStream(f"server answered {r.status_code}: {r.read()[:200]!r}")
                if "event-stream" not in r.headers.get("content-type", ""):  # a server that does not stream
                    r.read()
                    data = r.json()
                    text = data["choices"][0]["message"].get("content") or ""
                    on_text(text)
                    usage = data.get("usage") or {}
                    return RawReply(text, usage.get("prompt_tokens"), usage.get("completion_tokens"))
                for line in r.iter_lines():
                    if time.monotonic() > deadline:
                        raise TransientError(f"timed out after {timeout_s:g} s (the whole reply)")
                    if not line.startswith("data:"):
                        continue
                    payload = line[5:].strip()
                    if payload == "[DONE]":
                        break
                    chunk = json.loads(payload)
                    usage = chunk.get("usage") or usage
                    for choice in chunk.get("choices") or ():
                        piece = (choice.get("delta") or {}).get("content") or ""
                        if piece:
                            parts.append(piece)
                            on_text("".join(parts))
        except httpx.TimeoutException as exc:
            raise TransientError(f"timed out after {timeout_s:g} s ({type(exc).__name__})") from None
        except httpx.HTTPError as exc:
            raise TransientError(f"cannot reach {self.base_url}: {exc}") from None
        except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
            raise _NoStream(f"malformed streamed reply: {type(exc).__name__}: {exc}") from None
        return RawReply("".join(parts), usage.get("prompt_tokens"), usage.get("completion_tokens"))

    def _schema_format(self, schema: dict[str, Any]) -> dict[str, Any]:
        if self.schema_style == "json_schema":
            return {"type": "json_schema", "json_schema": {"name": "reply", "schema": schema, "strict": True}}
        if self.schema_style != "json_object":
            raise LLMError(f"unknown schema_style {self.schema_style!r}", hint="use 'json_object' or 'json_schema'")
        return {"type": "json_object", "schema": schema}

    def next_words(self, prompt: str, k: int = 100) -> tuple[dict[str, float], LLMCall]:
        """The ``k`` likeliest first tokens after ``prompt`` (raw text, no chat template added)
        with their log-probabilities, from the server's plain completions endpoint, and the
        call's accounting.  llama-cpp-python's server (the built-in models) answers it; a
        server without the endpoint or without log-probabilities raises ``LLMError``."""
        body = {"model": self.model, "prompt": prompt, "max_tokens": 1, "temperature": 0.0, "logprobs": k}
        t0 = time.perf_counter()
        try:
            r = self._client().post(self._url("completions"), json=body, timeout=self.policy.timeout_s)
            r.raise_for_status()
            top = r.json()["choices"][0]["logprobs"]["top_logprobs"][0]
            words = {str(t): float(p) for t, p in top.items()}
        except (httpx.HTTPError, ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
            raise LLMError(f"{self.base_url} gave no token log-probabilities: {type(exc).__name__}: {exc}",
                           hint="only servers with a completions endpoint and log-probabilities answer this") from None
        best = max(words, key=words.__getitem__, default="")
        call = LLMCall(purpose="next words", model=self.model, prompt=prompt, reply=best,
                       latency_ms=(time.perf_counter() - t0) * 1000.0, completion_tokens=1)
        return words, call

    def list_models(self) -> list[str]:
        try:
            r = self._client().get(self._url("models"), timeout=self.policy.timeout_s)
            r.raise_for_status()
            return sorted(str(m.get("id")) for m in r.json().get("data", []) if m.get("id"))
        except (httpx.HTTPError, ValueError, AttributeError) as exc:
            raise LLMError(f"cannot list models at {self.base_url}: {exc}", hint="is the server running?") from None

    def close(self) -> None:
        if self._http is not None:
            self._http.close()
            self._http = None
