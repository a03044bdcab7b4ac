"""Nothing private leaves unasked: the redactor (phone numbers, e-mail addresses, digit
runs, contact names -> stable placeholders, mapped back in replies), the redacting client
for model servers that are not on this machine, and the user's consent (asked through a
gate, remembered per task and model)."""

from __future__ import annotations

from agent.privacy.client import ConsentRefused, RedactingClient, is_remote, sent_text
from agent.privacy.consent import (
           AllowAll,
           Consent,
           ConsentGate,
           ConsentMemory,
           InMemoryConsents,
           RememberedOnly,
)
from agent.privacy.redactor import Redactor
from agent.privacy.types import ConsentAnswer, ConsentKind, ConsentQuestion, Replaced, summarise

__all__ = ["AllowAll", "Consent", "ConsentAnswer", "ConsentGate", "ConsentKind", "ConsentMemory", "ConsentQuestion",
           "ConsentRefused", "InMemoryConsents", "RedactingClient", "Redactor", "RememberedOnly", "Replaced",
           "is_remote", "sent_text", "summarise"]
