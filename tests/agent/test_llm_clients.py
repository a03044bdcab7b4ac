"""The LLM clients over real HTTP against the scripted fake server."""

from __future__ import annotations

import threading
import time

import pytest

from agent.llm import Cancelled, CancelToken, ChatRequest, LLMError, make_client
from agent.llm.base import RetryPolicy
from agent.llm.ollama_client import OllamaClient
from tests.agent.fake_ollama import Reply


def test_ollama_chat_returns_text_and_token_accounting(server, ollama):
    server.on("hello", Reply("hi there", prompt_tokens=5, completion_tokens=2))
    reply = ollama.chat(ChatRequest("hello", purpose="greet"))
    assert reply.text == "hi there"
    assert reply.call.purpose == "greet"
    assert reply.call.prompt_tokens == 5 and reply.call.completion_tokens == 2
    assert reply.call.latency_ms > 0
    assert server.requests[0].path == "/api/chat"


def test_ollama_lists_server_models(ollama):
    assert ollama.list_models() == ["fake-model:latest", "llava:7b"]


def test_openai_client_lists_models_and_chats(server, openai_client):
    server.on("ping", Reply("pong", prompt_tokens=3, completion_tokens=1))
    assert "fake-model:latest" in openai_client.list_models()
    reply = openai_client.chat(ChatRequest("ping"))
    assert reply.text == "pong" and reply.call.prompt_tokens == 3
    assert server.requests[-1].path == "/v1/chat/completions"


def test_json_mode_is_requested_and_parsed(server, ollama):
    server.on("give json", '```json\n{"a": 1}\n```')
    reply = ollama.chat(ChatRequest("give json", json_schema=True))
    assert reply.data == {"a": 1}
    assert server.requests[0].body["format"] == "json"


def test_images_are_sent_to_vision_models(server, ollama):
    server.on("look", "a phone")
    ollama.chat(ChatRequest("look", images=(b"\x89PNG fake",)))
    assert server.requests[0].body["messages"][-1]["images"]


@pytest.mark.parametrize("client_fixture", ["ollama", "openai_client"])
def test_malformed_then_good_reply_is_retried(server, client_fixture, request):
    client = request.getfixturevalue(client_fixture)
    server.on("q", Reply(raw_body="{not json at all"), Reply(""), Reply('{"ok": true}'))
    reply = client.chat(ChatRequest("q", json_schema=True))
    assert reply.data == {"ok": True}
    assert len(reply.failed_attempts) == 2
    assert all(c.error for c in reply.failed_attempts)


def test_malformed_json_reply_exhausts_retries_into_clear_error(server, ollama):
    server.on("q", "this is not json")
    with pytest.raises(LLMError, match="no usable reply.*malformed JSON") as info:
        ollama.chat(ChatRequest("q", json_schema=True, purpose="fused_latent"))
    assert len(info.value.calls) == 3
    assert len(server.requests) == 3


def test_server_error_status_is_retried(server, ollama):
    server.on("q", Reply(status=500), Reply("fine"))
    assert ollama.chat(ChatRequest("q")).text == "fine"


def test_timeout_is_retried_then_surfaced(server):
    server.on("slow", Reply("late", delay_s=1.0))
    client = OllamaClient(model="m", host=server.url, policy=RetryPolicy(attempts=2, backoff_s=0.01, timeout_s=0.2))
    t0 = time.perf_counter()
    with pytest.raises(LLMError, match="timed out"):
        client.chat(ChatRequest("slow"))
    assert time.perf_counter() - t0 < 3


def test_unknown_model_is_reported_without_retrying(server, ollama):
    server.on("q", Reply(status=404))
    with pytest.raises(LLMError, match="no model"):
        ollama.chat(ChatRequest("q"))
    assert len(server.requests) == 1


def test_no_server_gives_actionable_error():
    client = OllamaClient(model="m", host="http://127.0.0.1:9", policy=RetryPolicy(attempts=2, backoff_s=0.01))
    with pytest.raises(LLMError, match="cannot reach Ollama"):
        client.chat(ChatRequest("q"))


def test_cancel_token_abandons_in_flight_request(server, ollama):
    server.on("slow", Reply("late", delay_s=1.5))
    token = CancelToken()
    threading.Timer(0.1, token.cancel).start()
    t0 = time.perf_counter()
    with pytest.raises(Cancelled):
        ollama.chat(ChatRequest("slow"), cancel=token)
    assert time.perf_counter() - t0 < 1.0


def test_make_client_rejects_unknown_backend():
    with pytest.raises(ValueError, match="ollama.*openai"):
        make_client("gpt5", "m")


def test_a_reply_cache_answers_the_same_deterministic_request_again_without_the_server(server, openai_client):
    from agent.llm.base import ReplyCache

    server.on("same question", Reply("same answer"))
    openai_client.replies = ReplyCache()
    first = openai_client.chat(ChatRequest("same question", purpose="plan.a"))
    sent = len(server.requests)
    again = openai_client.chat(ChatRequest("same question", purpose="plan.b"))  # what it is for does not matter
    assert again.text == first.text == "same answer" and len(server.requests) == sent
    assert openai_client.replies.hits == 1
    openai_client.chat(ChatRequest("same question", temperature=0.7))  # sampled: never from the cache
    assert len(server.requests) == sent + 1
