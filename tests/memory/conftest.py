"""The scripted model server over real HTTP (from the agent tests) for the memory tests."""

from tests.agent.conftest import ollama, server

__all__ = ["ollama", "server"]
