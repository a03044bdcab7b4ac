"""Credentials written into a server address are hidden wherever text is shown or stored."""

from __future__ import annotations

import logging

import pytest

from agent.redact import RedactingFilter, redact_url


@pytest.mark.parametrize("text, expected", [
    ("cannot reach http://user:sk-abc@localhost:8080/v1: refused", "cannot reach http://***@localhost:8080/v1: refused"),
    ("https://sk-only@host/v1", "https://***@host/v1"),
    ("http://host/v1/chat?api_key=XYZ&x=1", "http://host/v1/chat?api_key=***&x=1"),
    ("http://host/v1?token=abc", "http://host/v1?token=***"),
    ("http://localhost:11434", "http://localhost:11434"),
    ("write to bob@example.com", "write to bob@example.com"),
    ("type 'a=b' in the field", "type 'a=b' in the field"),
])
def test_credentials_in_urls_are_hidden_and_nothing_else_changes(text, expected):
    assert redact_url(text) == expected


def test_log_records_lose_their_credentials():
    record = logging.LogRecord("x", logging.WARNING, __file__, 1, "cannot reach %s", ("http://u:KEY@h:1",), None)
    assert RedactingFilter().filter(record)
    assert record.getMessage() == "cannot reach http://***@h:1"
