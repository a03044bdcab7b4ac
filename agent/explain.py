"""One plain sentence of why a proposal is what it is, and how sure the agent is of it, for
the proposal card.

Why: from the model where its reply carried one (a structured reply's ``why``, a free-text
thought) that speaks of the proposed element — names it, or uses its words — and is not a
copy of what the model was told (a rejection reason, a demonstration note, the task: a
why found nearly word for word in the step's prompt explains nothing); else from the
grounding evidence ("'Network & internet' is the entry on this screen whose words are
closest to the task", "the model chose 'Calendar' from the entries on this screen"), else
from the action itself.  A reply that is raw JSON is never shown as the reason.

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
from vision.types import ScreenParse

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


_WORD = re.compile(r"\w+", re.UNICODE)
#: Share of a why's words found in one line of the prompt from which it counts as copied.
COPIED_SHARE = 0.8
#: Words a why needs before it can be called a copy (shorter ones are names, not notes).
COPY_MIN_WORDS = 4


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def _same_word(a: str, b: str) -> bool:
    """Equal, or sharing a stem (a common start of at least four letters, most of the shorter word)."""
    if a == b:
        return True
    short, long_ = sorted((a, b), key=len)
    return len(short) >= 4 and long_.startswith(short[: max(4, len(short) - 2)])


def _target_names(proposal: Proposal, parse: ScreenParse | None) -> list[str]:
    action, names = proposal.action, []
    if action.type is ActionType.OPEN_APP and action.app:
        names.append(action.app)
    t = action.target
    if t is not None:
        e = parse.element(t.element_id) if parse is not None and t.element_id else None
        if e is not None:
            names += [e.text, e.label.split(" · ")[0], e.resource_id.rsplit("/", 1)[-1].replace("_", " ")]
        names.append(re.sub(r"\[[^\]]*\]", "", t.description))
    return [n for n in names if n.strip()]


def names_target(why: str, proposal: Proposal, parse: ScreenParse | None = None) -> bool:
    """Whether ``why`` speaks of the element (or app) ``proposal`` acts on: one of its name's
    words (three letters or more) is in it.  True for actions on no element (back, scroll)."""
    names = _target_names(proposal, parse)
    if not names:
        return True
    wanted = {w for n in names for w in _words(n) if len(w) >= 3}
    if not wanted:
        return True
    said = _words(why)
    return any(_same_word(w, s) for w in wanted for s in said)


def copies_prompt(why: str, prompts: tuple[str, ...] | list[str]) -> bool:
    """Whether ``why`` repeats something the model was given (``prompts``): found in it
    word for word, or most of its words in one line of it."""
    words = _words(why)
    if len(words) < COPY_MIN_WORDS:
        return False
    joined = " ".join(words)
    for prompt in prompts:
        if joined in " ".join(_words(prompt)):
            return True
        for line in re.split(r"[\n.;:!?]+", prompt):
            have = set(_words(line))
            if have and sum(w in have for w in words) >= COPIED_SHARE * len(words):
                return True
    return False


def _explains(said: str, proposal: Proposal, parse: ScreenParse | None) -> bool:
    prompts = tuple(c.prompt for c in proposal.llm_calls if c.prompt)
    return names_target(said, proposal, parse) and not copies_prompt(said, prompts)


#: The labels of the reply forms the prompts ask for ("Thought: … Action: …"): the thought is
#: the reason, the action is not.
_THOUGHT_LABEL = re.compile(r"^\s*(?:thought|reasoning|reason|why)\s*:\s*", re.I)
_ACTION_PART = re.compile(r"\s*\baction\s*:.*$", re.I | re.S)


def _reason_part(text: str) -> str:
    """A free-text reply's reason: its thought without the label, the action left off."""
    if not _THOUGHT_LABEL.match(text):
        return text
    return _ACTION_PART.sub("", _THOUGHT_LABEL.sub("", text, count=1)).strip()


#: Evidence lines that record the machinery, not a reason (a reply's form, a re-plan, an id).
_NOT_A_REASON = ("reply:", "re-plan", "blocked:", "element id", "text match", "votes:", "assessment:",
                 "no grounding needed")


def _grounding_note(proposal: Proposal, parse: ScreenParse | None) -> str:
    """An evidence line in words that names the proposed element ("Screen evidence: the
    likeliest next step here is 'Network & internet'"): what grounded the step."""
    for line in proposal.evidence:
        low = line.strip().lower()
        if not line.strip() or low.startswith(_NOT_A_REASON) or not names_target(line, proposal, parse):
            continue
        label, sep, rest = line.partition(": ")
        text = rest if sep and len(label.split()) <= 3 else line
        text = re.sub(r"\s*\[[^\]]*\]", "", text).strip()  # element ids are for the model, not for people
        return _sentence(text[:1].upper() + text[1:])
    return ""


def why_line(proposal: Proposal, goal: str = "", parse: ScreenParse | None = None) -> str:
    """The reason line of ``proposal`` (never empty, never JSON); ``parse`` (the screen it
    was planned on) names its element."""
    raw = (proposal.rationale or "").strip()
    said = _from_json(raw) if raw.startswith("{") else ("" if raw.startswith("[") else _reason_part(raw))
    said = _sentence(said) if said else ""
    if said and not _explains(said, proposal, parse):
        said = ""  # it says nothing of the element, or only repeats the prompt
    if said and not said.lower().startswith(("tap ", "open ", "scroll ", "go ", "press ", "type ")):
        return said
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
    grounded = _grounding_note(proposal, parse)
    if grounded:
        return grounded
    names = _target_names(proposal, parse)
    if names:  # a reply that only restates its action ("tap [5] Wi-Fi") explains nothing
        return f"The model chose '{names[0].strip()}' from the entries on this screen, without a reason about it."
    if said:
        return said
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
