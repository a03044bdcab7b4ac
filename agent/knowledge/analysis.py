"""The analysis agent (Prompt2Task §4.1.1): a vague goal becomes a confirmed function
description.  It normalises the wording, enriches it from the user's context library,
asks the user when a needed detail is missing, and asks for confirmation at the end.

A two-way generator like the agent runner: it yields ``AskUser`` (send the answer
text; ``None`` or ``""`` stops asking) and ``ConfirmDescription`` (send ``True`` to
accept, a string to replace/choose the description, ``False`` to decline) and returns
the ``FunctionDescription``.  ``LLM`` is any ``prompt -> reply`` callable.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Generator
from dataclasses import dataclass, replace
from typing import Any

from .context import ContextLibrary, extract_json
from .types import FunctionDescription

log = logging.getLogger(__name__)

LLM = Callable[[str], str]


@dataclass(frozen=True, slots=True)
class AskUser:
    question: str
    candidates: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ConfirmDescription:
    description: FunctionDescription
    candidates: tuple[str, ...] = ()


PROMPT = """You help a phone user state precisely what they want the phone to do.
Rewrite their request as one clear function description (which app, which feature,
which values).  Use the user's context profile to fill in details they left out.
If a detail needed to carry the task out is still unknown (a contact, a time, which
device...), ask ONE short question about it instead of guessing.

User's context profile:
{context}

Conversation so far:
{transcript}

Reply with ONLY a JSON object:
{{"function": "<the precise description>", "app": "<app name or null>",
  "candidates": ["<up to 3 alternative readings>"],
  "missing": "<one question for the user, or empty if nothing is missing>",
  "context_updates": {{<new facts about the user worth remembering, or empty>}}}}"""


class AnalysisAgent:
    def __init__(self, llm: LLM, context: ContextLibrary | None = None, max_questions: int = 3) -> None:
        self.llm = llm
        self.context = context
        self.max_questions = max_questions
        self.prompts: list[str] = []

    def _ask_llm(self, transcript: list[tuple[str, str]]) -> dict[str, Any]:
        prompt = PROMPT.format(
            context=self.context.as_prompt() if self.context is not None else "{}",
            transcript="\n".join(f"{who}: {text}" for who, text in transcript),
        )
        self.prompts.append(prompt)
        try:
            data = extract_json(self.llm(prompt))
        except Exception as exc:
            log.warning("analysis agent: unusable LLM reply (%s)", exc)
            return {}
        return data if isinstance(data, dict) else {}

    def run(self, goal: str) -> Generator[AskUser | ConfirmDescription, Any, FunctionDescription]:
        if not goal.strip():
            raise ValueError("say what you want the phone to do")
        transcript: list[tuple[str, str]] = [("user", goal.strip())]
        data: dict[str, Any] = {}
        updates: dict[str, Any] = {}
        asked = 0
        while True:
            data = self._ask_llm(transcript) or data
            if isinstance(data.get("context_updates"), dict):
                updates.update(data["context_updates"])
            question = str(data.get("missing") or "").strip()
            if not question or asked >= self.max_questions:
                break
            cands = tuple(str(c) for c in data.get("candidates") or () if c)
            answer = yield AskUser(question, cands)
            asked += 1
            if answer is None or not str(answer).strip():
                break
            transcript += [("assistant", question), ("user", str(answer).strip())]
        text = str(data.get("function") or goal).strip()
        app = data.get("app") or None
        details = tuple((str(k), json.dumps(v, ensure_ascii=False) if not isinstance(v, str) else v)
                        for k, v in updates.items())
        desc = FunctionDescription(text=text, app=str(app) if app else None, details=details, original=goal)
        cands = tuple(str(c) for c in data.get("candidates") or () if c and str(c) != text)
        answer = yield ConfirmDescription(desc, cands)
        if answer is False:
            return desc
        if isinstance(answer, str) and answer.strip():
            desc = replace(desc, text=answer.strip())
        desc = replace(desc, confirmed=True)
        if self.context is not None and updates:
            changed = self.context.merge(updates)
            log.info("context library updated: %s", changed)
        return desc


def run_with_answers(agent: AnalysisAgent, goal: str, answers: list[str], confirm: Any = True) -> FunctionDescription:
    """Drive the agent with canned answers (tests, CLI scripts)."""
    gen = agent.run(goal)
    reply: Any = None
    queue = list(answers)
    try:
        while True:
            ev = gen.send(reply)
            reply = queue.pop(0) if isinstance(ev, AskUser) and queue else (None if isinstance(ev, AskUser) else confirm)
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]
