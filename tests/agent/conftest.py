"""Fixtures for the agent tests: the scripted fake LLM server and fast clients."""

from __future__ import annotations

import pytest

from agent.llm.base import RetryPolicy
from agent.llm.ollama_client import OllamaClient
from agent.llm.openai_client import OpenAIClient
from tests.agent.fake_ollama import FakeLLMServer

FAST = RetryPolicy(attempts=3, backoff_s=0.01, timeout_s=2.0)


@pytest.fixture
def server():
    with FakeLLMServer() as s:
        yield s


@pytest.fixture
def ollama(server):
    client = OllamaClient(model="fake-model:latest", host=server.url, policy=FAST)
    yield client
    client.close()


@pytest.fixture
def openai_client(server):
    client = OpenAIClient(model="fake-model", base_url=server.url + "/v1", policy=FAST)
    yield client
    client.close()
