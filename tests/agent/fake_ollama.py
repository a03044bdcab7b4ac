"""The test suite's scripted LLM server: the product's ``evaluation.scripted_model`` server (the
one the self-test uses), serving the model names the agent tests expect."""

from __future__ import annotations

from dataclasses import dataclass

from evaluation.scripted_model import Matcher, Reply, ScriptedLLMServer, Seen

__all__ = ["FakeLLMServer", "Matcher", "Reply", "Seen"]


@dataclass
class FakeLLMServer(ScriptedLLMServer):
    models: tuple[str, ...] = ("fake-model:latest", "llava:7b")
