"""One plain sentence of why a proposal is what it is, for the proposal card.

From the model where its reply carried one (a structured reply's ``why``, a free-text
thought), else from the grounding evidence ("'Network & internet' is the entry on this
screen whose words are closest to the task"), else from the action itself.  A reply that
is raw JSON is never shown as the reason.  Pure functions: no LLM, no I/O.
"""

from __future__ import annotations

import json
import re

from agent.types import ActionType, Proposal

MAX_CHARS = 160
_KEYS = ("why", "needed", "thought", "reason", "reasoning")
_MATCH = re.compile(r"text match \[[^\]]*\] '([^']+)'")
_VOTES = re.compile(r"votes: (.+)")


def _from_json(text: str) -> str:
    try:
        data = json.loads(text)
    except ValueError:
        return ""
    if not isinstance(data, dict):
        return ""
    for key in _KEYS:
        value = data.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return ""


def _sentence(text: str) -> str:
    text = " ".join(text.split())
    first = re.split(r"(?<=[.!?])\s", text, maxsplit=1)[0]
    return first if len(first) <= MAX_CHARS else first[: MAX_CHARS - 1].rstrip() + "…"


def why_line(proposal: Proposal, goal: str = "") -> str:
    """The reason line of ``proposal`` (never empty, never JSON)."""
    raw = (proposal.rationale or "").strip()
    said = _from_json(raw) if raw.startswith("{") else ("" if raw.startswith("[") else raw)
    if said and not said.lower().startswith(("tap ", "open ", "scroll ", "go ", "press ", "type ")):
        return _sentence(said)
    action = proposal.action
    if action.type is ActionType.COMPLETE:
        reason = proposal.latent.completion_reason if proposal.latent is not None else ""
        return _sentence(reason) if reason else "The agent judges that the goal is reached."
    if action.type is ActionType.IMPOSSIBLE:
        return "The agent found no way to do this task on this phone."
    for line in proposal.evidence:
        m = _MATCH.search(line)
        if m:
            task = f" (\"{goal}\")" if goal else ""
            return f"'{m.group(1)}' is the entry on this screen whose words best match the step toward the task{task}."
    for line in proposal.evidence:
        m = _VOTES.search(line)
        if m:
            return f"Most of the model's samples chose this ({m.group(1)})."
    if action.type is ActionType.OPEN_APP:
        return f"The task is done in {action.app}."
    if said:
        return _sentence(said)
    return "The model proposed this step without saying why."
