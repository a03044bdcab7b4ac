"""``OllamaClient``: chat with a model served by Ollama through the ``ollama`` package.

A request with ``on_text`` is streamed (the text so far handed over as it grows).
Supports JSON output (``format="json"`` or a JSON schema), images for vision-language
models, token accounting from ``prompt_eval_count``/``eval_count``, and model listing.
Retries, timeouts and cancellation come from ``RetryingClient``.  No prompting here.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from agent.llm.base import ChatRequest, LLMError, RawReply, RetryingClient, TransientError

log = logging.getLogger(__name__)

DEFAULT_HOST = "http://127.0.0.1:11434"


@dataclass
class OllamaClient(RetryingClient):
    host: str = DEFAULT_HOST
    keep_alive: str | None = None
    _clients: dict[float, Any] = field(default_factory=dict, repr=False)

    def describe_backend(self) -> str:
        return f"Ollama at {self.host}"

    def _client(self, timeout_s: float) -> Any:
        client = self._clients.get(timeout_s)
        if client is None:
            import ollama  # lazily: the package is only needed with this backend

            client = self._clients[timeout_s] = ollama.Client(host=self.host, timeout=timeout_s)
        return client

    def _send(self, request: ChatRequest, timeout_s: float) -> RawReply:
        import ollama

        message: dict[str, Any] = {"role": "user", "content": request.prompt}
        if request.images:
            message["images"] = list(request.images)
        messages = request.messages(message)
        options = request.sampling("num_predict")
        fmt: Any = None
        if request.json_schema is True:
            fmt = "json"
        elif isinstance(request.json_schema, dict):
            fmt = request.json_schema
        try:
            if request.on_text is not None:
                return self._stream(request.on_text, messages, fmt, options, timeout_s)
            resp = self._client(timeout_s).chat(
                model=self.model, messages=messages, format=fmt, options=options, stream=False,
                keep_alive=self.keep_alive,
            )
        except httpx.TimeoutException as exc:
            raise TransientError(f"timed out after {timeout_s:g} s ({type(exc).__name__})") from None
        except ConnectionError as exc:
            raise TransientError(f"cannot reach Ollama at {self.host}: {exc}") from None
        except ollama.ResponseError as exc:
            if exc.status_code == 404:
                raise LLMError(f"Ollama has no model {self.model!r}", hint=f"run `ollama pull {self.model}`") from None
            raise TransientError(f"Ollama answered {exc.status_code}: {exc.error}") from None
        except (httpx.HTTPError, ValueError) as exc:  # ValueError covers undecodable bodies
            raise TransientError(f"bad response from Ollama: {type(exc).__name__}: {exc}") from None
        content = (resp.message.content if resp.message is not None else "") or ""
        return RawReply(content, resp.prompt_eval_count, resp.eval_count)

    def _stream(self, on_text: Callable[[str], None], messages: list[dict[str, Any]], fmt: Any,
                options: dict[str, Any], timeout_s: float) -> RawReply:
        deadline = time.monotonic() + timeout_s
        parts: list[str] = []
        prompt_tokens = completion_tokens = None
        for part in self._client(timeout_s).chat(model=self.model, messages=messages, format=fmt, options=options,
                                                 stream=True, keep_alive=self.keep_alive):
            if time.monotonic() > deadline:
                raise TransientError(f"timed out after {timeout_s:g} s (the whole reply)")
            piece = (part.message.content if part.message is not None else "") or ""
            if piece:
                parts.append(piece)
                on_text("".join(parts))
            prompt_tokens = part.prompt_eval_count or prompt_tokens
            completion_tokens = part.eval_count or completion_tokens
        return RawReply("".join(parts), prompt_tokens, completion_tokens)

    def list_models(self) -> list[str]:
        try:
            listing = self._client(self.policy.timeout_s).list()
        except Exception as exc:  # any failure becomes one clear error
            raise LLMError(f"cannot list models at {self.host}: {exc}", hint="is `ollama serve` running?") from None
        return sorted(m.model for m in listing.models if m.model)

    def close(self) -> None:
        for c in self._clients.values():
            c.close()
        self._clients.clear()
