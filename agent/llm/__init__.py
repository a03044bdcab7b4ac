"""LLM access: the ``LLMClient`` protocol and its Ollama and OpenAI-compatible backends."""

from __future__ import annotations

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


def make_client(backend: str, model: str, base_url: str | None = None, *, policy: RetryPolicy | None = None) -> LLMClient:
    """Build a client for ``backend`` (``ollama`` or ``openai``); a clear error otherwise."""
    policy = policy or RetryPolicy()
    if backend == "ollama":
        from agent.llm.ollama_client import DEFAULT_HOST, OllamaClient

        return OllamaClient(model=model, host=base_url or DEFAULT_HOST, policy=policy)
    if backend in ("openai", "llamacpp", "vllm", "lmstudio"):
        from agent.llm.openai_client import DEFAULT_BASE_URL, OpenAIClient

        return OpenAIClient(model=model, base_url=base_url or DEFAULT_BASE_URL, policy=policy)
    raise ValueError(f"unknown LLM backend {backend!r}: use 'ollama' or 'openai'")


__all__ = [
    "CancelToken", "Cancelled", "ChatRequest", "LLMClient", "LLMError", "LLMReply", "RetryPolicy",
    "make_client", "parse_json_reply",
]
