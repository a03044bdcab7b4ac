"""``tapwise mcp`` without a window asks on the terminal: a real pseudo-terminal stands
where the user types."""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from agent.types import Action, DecisionKind, Proposal
from app.cli.mcp import TerminalSupervisor
from app.mcp.supervisor import Review
from vision.geometry import Size


@pytest.fixture
def terminal() -> Iterator[tuple[Any, Any, int]]:
    main, side = os.openpty()
    name = os.ttyname(side)
    reader = open(name, encoding="utf-8")  # opened the way `tapwise mcp` opens /dev/tty
    writer = open(name, "w", encoding="utf-8")
    yield reader, writer, main
    reader.close()
    writer.close()
    os.close(side)
    os.close(main)


def _review(sensitive: bool = False) -> Review:
    proposal = Proposal(Action.tap(996, 1444), planner="mcp:agent", sensitive=sensitive,
                        evidence=("asked by the MCP client “agent” through tap",))
    return Review("agent", "tap", proposal, None, "sending — the target is labelled 'Send SMS'" if sensitive else "")


def _ask(reader: Any, writer: Any, main: int, typed: str, review: Review) -> tuple[Any, str]:
    result: dict[str, Any] = {}
    t = threading.Thread(target=lambda: result.setdefault("d", TerminalSupervisor(reader, writer, Size(1080, 2400))
                                                          .review(review)))
    t.start()
    os.write(main, typed.encode())
    t.join(10)
    shown = os.read(main, 65536).decode(errors="replace")
    return result["d"], re.sub(r"\x1b\[[0-9;]*m", "", shown)  # without the colours


def test_the_terminal_shows_the_proposal_and_approves(terminal: tuple[Any, Any, int]) -> None:
    decision, shown = _ask(*terminal, "a\n", _review(sensitive=True))
    assert decision.kind is DecisionKind.APPROVE
    assert "tap at (996, 1444)" in shown and "sending" in shown and "agent" in shown


def test_a_rejection_carries_the_reason_typed(terminal: tuple[Any, Any, int]) -> None:
    decision, _ = _ask(*terminal, "r\nnot to Alice\n", _review())
    assert decision.kind is DecisionKind.REJECT and decision.feedback == "not to Alice"


def test_an_edit_is_parsed_from_words(terminal: tuple[Any, Any, int]) -> None:
    decision, _ = _ask(*terminal, "e\npress back\n", _review())
    assert decision.kind is DecisionKind.EDIT and decision.action is not None
    assert decision.action.describe() == "go back"
