"""Adapting the project's ``LLMClient`` (``agent.llm.base``) to the plain
``prompt -> reply text`` callables the analysis and parsing agents take.

Keeps the agents testable with a lambda and usable with Ollama/OpenAI clients alike.
No I/O of its own.
"""

from __future__ import annotations

from collections.abc import Callable

from agent.llm.base import ChatRequest, LLMClient


def as_callable(client: LLMClient, purpose: str, *, json_reply: bool = False,
                max_tokens: int | None = 512) -> Callable[[str], str]:
    """``prompt -> text`` through ``client.chat`` (errors propagate as ``LLMError``)."""

    def call(prompt: str) -> str:
        reply = client.chat(ChatRequest(prompt, purpose=purpose, json_schema=json_reply, max_tokens=max_tokens))
        return reply.text

    return call
