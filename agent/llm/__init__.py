"""LLM access: the ``LLMClient`` protocol and its Ollama and OpenAI-compatible backends."""

from __future__ import annotations

from collections.abc import Callable

from agent.llm.base import (
    Cancelled,
    CancelToken,
    ChatRequest,
    LLMClient,
    LLMError,
    LLMReply,
    RetryPolicy,
    parse_json_reply,
)


def _ollama(model: str, base_url: str | None, policy: RetryPolicy) -> LLMClient:
    from agent.llm.ollama_client import DEFAULT_HOST, OllamaClient

    return OllamaClient(model=model, host=base_url or DEFAULT_HOST, policy=policy)


def _openai(model: str, base_url: str | None, policy: RetryPolicy) -> LLMClient:
    from agent.llm.openai_client import DEFAULT_BASE_URL, OpenAIClient

    return OpenAIClient(model=model, base_url=base_url or DEFAULT_BASE_URL, policy=policy)


#: The one client registry: backend name -> factory (llama.cpp, vLLM and LM Studio speak OpenAI's API).
CLIENTS: dict[str, Callable[[str, str | None, RetryPolicy], LLMClient]] = {
    "ollama": _ollama, "openai": _openai, "llamacpp": _openai, "vllm": _openai, "lmstudio": _openai,
}


def make_client(backend: str, model: str, base_url: str | None = None, *, policy: RetryPolicy | None = None) -> LLMClient:
    """Build a client for ``backend`` (a ``CLIENTS`` name); a clear error otherwise."""
    factory = CLIENTS.get(backend)
    if factory is None:
        raise ValueError(f"unknown LLM backend {backend!r}: use 'ollama' or 'openai'")
    return factory(model, base_url, policy or RetryPolicy())


def guess_backend(base_url: str) -> str:
    """``ollama`` for Ollama-looking URLs (port 11434, ``/api``), else ``openai``."""
    u = base_url.rstrip("/")
    if ":11434" in u or u.endswith("/api"):
        return "ollama"
    return "openai"


__all__ = [
    "CLIENTS", "CancelToken", "Cancelled", "ChatRequest", "LLMClient", "LLMError", "LLMReply", "RetryPolicy",
    "guess_backend", "make_client", "parse_json_reply",
]
