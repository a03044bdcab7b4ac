"""The redactor: every phone number and e-mail address the virtual phone's people hold is
replaced, a value keeps its placeholder for the run, replies get the values back, and
what is not private (dates, times, element ids, short numbers) stays."""

from __future__ import annotations

import re

import pytest

from agent.privacy import Redactor
from phone.virtual.apps.people import PEOPLE

PHONES = [p[2] for p in PEOPLE] + ["+1 555-0199", "(555) 123-4567", "0049 30 1234567", "+44 20 7946 0958"]
EMAILS = [p[3] for p in PEOPLE if p[3]] + ["first.last+tag@sub.example.co.uk"]


@pytest.mark.parametrize("value", PHONES)
def test_every_phone_number_is_replaced(value: str) -> None:
    text, replaced = Redactor().redact(f"[e7] list item \"{value}\" (Mobile) · call {value}.")
    assert value not in text
    assert not re.search(r"\d{3}", text.replace("e7", "")), text  # no run of the number's digits is left
    assert [r.kind for r in replaced] == ["phone number"]


@pytest.mark.parametrize("value", EMAILS)
def test_every_email_address_is_replaced(value: str) -> None:
    text, replaced = Redactor().redact(f"Email: {value}, or write to {value}")
    assert value not in text and "@" not in text
    assert [r.kind for r in replaced] == ["e-mail address"]


def test_a_value_keeps_its_placeholder_and_replies_get_it_back() -> None:
    r = Redactor()
    a, _ = r.redact("Alice +1 555-0101, alice.johnson@example.com")
    b, _ = r.redact("thread with +1 555-0101 · code 482913")
    assert "<phone-1>" in a and "<phone-1>" in b and "<email-1>" in a and "<number-1>" in b
    assert r.restore("tap <phone-1>") == "tap +1 555-0101"
    assert r.restore('{"target": "email-1"}') == '{"target": "alice.johnson@example.com"}'  # brackets dropped
    assert r.restore_data({"a": ["<number-1>", 3]}) == {"a": ["482913", 3]}
    assert r.restore("tap <phone-9>") == "tap <phone-9>"  # not one of ours: left as it is


def test_brackets_around_a_number_are_not_part_of_it() -> None:
    r = Redactor()
    assert r.redact('"Tom" (+1 555-0199, mobile)')[0] == '"Tom" (<phone-1>, mobile)'
    assert r.redact("call (555) 123-4567 now")[0] == "call <phone-2> now"


def test_what_is_not_private_stays() -> None:
    text = "[e12] button \"9:41 AM\" 2024-05-01 · 18°C · Page 1 of 2 · (540, 1200) · $12.99 · version 6.9.96"
    assert Redactor().redact(text) == (text, ())


def test_contact_names_only_when_given() -> None:
    text = "Alice Johnson wrote: see you, Alice"
    assert Redactor().redact(text)[0] == text
    out, replaced = Redactor(contact_names=["Alice Johnson", "Ben Carter"]).redact(text)
    assert "Alice" not in out and {r.kind for r in replaced} == {"contact name"}


def test_a_reply_form_is_redacted_in_every_string() -> None:
    schema = {"properties": {"target": {"enum": ["Elena Rossi", "+39 055 123 4567", "elena.rossi@example.it"]}}}
    out, replaced = Redactor().redact_data(schema)
    assert out["properties"]["target"]["enum"] == ["Elena Rossi", "<phone-1>", "<email-1>"]
    assert len(replaced) == 2


def test_contact_names_given_as_a_reader_are_read_once_on_the_first_redaction() -> None:
    reads: list[int] = []

    def read() -> list[str]:
        reads.append(1)
        return ["Alice Johnson"]

    redactor = Redactor(contact_names=read)
    assert reads == []  # made, not yet used: the phone is not asked
    assert redactor.redact("Alice Johnson wrote")[0] == "<name-1> wrote"
    assert redactor.redact("to Alice")[0] == "to <name-2>" and reads == [1]
