"""One plain sentence of why a proposal is what it is, and how sure the agent is of it, for
the proposal card.

Why: from the model where its reply carried one (a structured reply's ``why``, a free-text
thought), else from the grounding evidence ("'Network & internet' is the entry on this
screen whose words are closest to the task"), else from the action itself.  A reply that
is raw JSON is never shown as the reason.

How sure: only where there is a measure, named with it: the share of CoT-SC samples that
agree ("agreement 3/5"), a model's own score (the assessment's), a macro's match with its
recording, or, when none of those exists and the grounder chose the target from a ranked
list of entries, the grounding margin (``agent.grounding.match.margin_confidence``).  No
measure: None, and the card hides the row.  Pure functions: no LLM, no I/O.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from agent.grounding.match import margin_confidence
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


@dataclass(frozen=True, slots=True)
class ShownConfidence:
    """A confidence the card can show: its value (0..1), the measure's name, and one line on
    where the figure comes from."""

    value: float
    measure: str
    detail: str = ""


_TALLY = re.compile(r"×(\d+)")
_MARGIN = re.compile(r"\[[^\]]*\] '([^']+)' sim=([\d.]+) next=([\d.]+)|sim=([\d.]+) next=([\d.]+) \[[^\]]*\] '([^']+)'")
_MACRO_PLANNER = "macro"


def confidence_of(proposal: Proposal) -> ShownConfidence | None:
    """How sure the agent is of ``proposal``, with the measure's name; None without a measure."""
    if proposal.confidence is not None:
        value = max(0.0, min(1.0, proposal.confidence))
        return _named_score(proposal, value)
    for line in proposal.evidence:
        m = _MARGIN.search(line)
        if m is None:
            continue
        name, best, rival = (m.group(1), m.group(2), m.group(3)) if m.group(1) else (m.group(6), m.group(4), m.group(5))
        return ShownConfidence(
            margin_confidence(float(best), float(rival)), "grounding margin",
            f"'{name}' matches the step's words {float(best):.2f}; the next entry on the screen {float(rival):.2f}")
    return None


def _named_score(proposal: Proposal, value: float) -> ShownConfidence:
    for line in proposal.evidence:
        if line.startswith("votes: "):
            agreeing = [int(n) for n in _TALLY.findall(line)]
            unread = sum(1 for e in proposal.evidence if e.startswith("reply: unreadable sample"))
            samples = sum(agreeing) + unread
            if agreeing and samples:
                return ShownConfidence(value, f"agreement {max(agreeing)}/{samples}",
                                       f"{max(agreeing)} of the model's {samples} samples chose this action")
    if any(line.startswith("assessment: ") for line in proposal.evidence):
        return ShownConfidence(value, "model's score", "the assessing model's own score for this step")
    if proposal.planner == _MACRO_PLANNER and any(line.startswith("healed: ") for line in proposal.evidence):
        return ShownConfidence(value, "the model's pick (healed)", "the recording's own clues did not find the "
                                                                   "element; the model chose it")
    if proposal.planner == _MACRO_PLANNER:
        return ShownConfidence(value, "match with the recording", "how well this screen matches the recorded one")
    if proposal.planner == "memory":  # agent.memory: the user's own decision on this screen, for this goal
        return ShownConfidence(value, "your earlier decision", "you decided this step on this screen for this goal")
    return ShownConfidence(value, "model's score", "the model's own score for this step")
