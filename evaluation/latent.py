"""Score latent-state estimates against the virtual phone's truth, without an LLM.

The latent-state paper (Table 2, App. H/J) had annotators judge each estimate.  Here
the virtual phone supplies the truth and a fixed, documented rubric judges:

``performed_action``
    Truth: what the phone actually did on the previous step (the element really hit,
    the text really typed, or *nothing* when a tap was lost), recorded by the
    benchmark's device wrapper.  Correct when the estimate names the same kind of
    action (tap, type, scroll, back, home, open) and, for taps and typing, mentions the
    element's text/label or the typed text (RapidFuzz ``partial_ratio`` ≥ 80, case
    folded), and does not negate it ("did not", "nothing happened", …).  When nothing
    happened, correct only if the estimate says so.
``completion``
    Truth: the task's success condition on the current screen.  Correct when the
    estimate's yes/no equals it; an estimate without a yes/no is *not judged*.
``mistakes``
    Truth (approximate): a mistake is outstanding when the previous action did not do
    what was commanded, or a checkpoint reached earlier no longer holds.  Correct
    when the estimate says "no mistakes" exactly when none is outstanding.  Whether the
    *described* mistake is the right one is not judged.
``progression``
    Truth: the checkpoints reached so far.  Correct when every reached checkpoint is
    mentioned (``partial_ratio`` ≥ 70 against its description) — recall only; claims of
    progress that did not happen are not judged.  Steps before any checkpoint is
    reached are not judged.

Not judged at all: the screen summary (no ground truth for a good summary), the
completion *reason*, and planner-level wrong choices that the phone cannot label as
mistakes.  The naïve baselines of App. J (performed = commanded, never a mistake,
never complete) are reported beside each accuracy.

A step record (a JSON-able dict, produced by the benchmark runner) holds:
``index``, ``commanded`` (text), ``performed`` (text, ``""`` when nothing happened),
``performed_kind``, ``performed_target``, ``performed_text``, ``performed_matches_commanded``
(bool), ``estimate`` (``LatentState`` fields or ``None``), ``truth_complete`` (bool),
``reached`` / ``reached_ever`` / ``checkpoints`` (lists of checkpoint descriptions).
Pure computation, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from rapidfuzz import fuzz

ASPECTS = ("performed_action", "completion", "mistakes", "progression")
NOT_JUDGED = ("screen_summary", "completion_reason", "which mistake was described", "false progress claims")

_NEGATION = re.compile(
    r"\b(did not|didn't|do not|don't|no action|nothing (?:happened|was done|changed)|not performed|"
    r"failed to|was not|wasn't|no effect|had no)\b",
    re.I,
)
_NO_MISTAKE = re.compile(
    r"^\s*(none\.?|no\.?|n/a)\s*$|\bno (?:mistakes?|errors?)\b|\bnothing to (?:correct|fix)\b|"
    r"\bnot made any mistakes?\b|\bhave made no mistakes?\b",
    re.I,
)
_KINDS: dict[str, tuple[str, ...]] = {
    "tap": ("tap", "tapped", "click", "clicked", "press", "pressed", "select", "selected", "touch", "touched",
            "toggle", "toggled", "chose", "choose", "opened", "open", "switched", "turned", "enabled", "disabled"),
    "type": ("type", "typed", "enter", "entered", "input", "wrote", "write", "fill", "filled"),
    "scroll": ("scroll", "scrolled", "swipe", "swiped"),
    "back": ("back",),
    "home": ("home",),
    "open_app": ("open", "opened", "launch", "launched", "start", "started"),
    "enter": ("enter", "submit", "submitted", "search", "searched"),
}


def _mentions(haystack: str, needle: str, threshold: float) -> bool:
    n = needle.strip().casefold()
    if not n:
        return True
    return fuzz.partial_ratio(n, haystack.casefold()) >= threshold


def _has_kind(text: str, kind: str) -> bool:
    words = set(re.findall(r"[a-z']+", text.casefold()))
    return any(w in words for w in _KINDS.get(kind, (kind,)))


def judge_performed(rec: dict[str, Any]) -> bool | None:
    est = (rec.get("estimate") or {}).get("performed_action", "")
    if rec.get("index", 0) == 0 or rec.get("performed") is None:
        return None  # no previous action to infer
    if not est.strip():
        return False
    if not rec.get("performed"):
        return bool(_NEGATION.search(est)) or "nothing" in est.casefold()
    if _NEGATION.search(est):
        return False
    kind = rec.get("performed_kind", "")
    if kind and not _has_kind(est, kind):
        return False
    target = rec.get("performed_target") or ""
    typed = rec.get("performed_text") or ""
    if kind == "type" and typed:
        return _mentions(est, typed, 80)
    if target:
        return _mentions(est, target, 80)
    return True


def judge_completion(rec: dict[str, Any]) -> bool | None:
    est = (rec.get("estimate") or {}).get("completion")
    if est is None:
        return None
    return bool(est) == bool(rec.get("truth_complete"))


def truth_mistake(rec: dict[str, Any]) -> bool:
    slipped = rec.get("index", 0) > 0 and rec.get("performed_matches_commanded") is False
    lost = set(rec.get("reached_ever") or ()) - set(rec.get("reached") or ())
    return bool(slipped or lost)


def says_no_mistake(text: str) -> bool:
    return not text.strip() or bool(_NO_MISTAKE.search(text))


def judge_mistakes(rec: dict[str, Any]) -> bool | None:
    est = rec.get("estimate")
    if est is None:
        return None
    return says_no_mistake(est.get("mistakes", "")) != truth_mistake(rec)


def judge_progression(rec: dict[str, Any]) -> bool | None:
    est = rec.get("estimate")
    reached = list(rec.get("reached") or ())
    if est is None or not reached:
        return None
    text = est.get("progression", "")
    return all(_mentions(text, _keywords(c), 70) for c in reached)


def _keywords(description: str) -> str:
    """A checkpoint description without filler words, so 'Was the Clock app opened?'
    is looked for as 'clock app opened'."""
    stop = {"the", "a", "an", "was", "is", "were", "has", "been", "did", "does", "to", "of", "in", "on", "for", "it"}
    words = [w for w in re.findall(r"[\w'-]+", description.casefold()) if w not in stop]
    return " ".join(words) or description


_JUDGES = {
    "performed_action": judge_performed,
    "completion": judge_completion,
    "mistakes": judge_mistakes,
    "progression": judge_progression,
}


@dataclass(frozen=True)
class AspectScore:
    aspect: str
    judged: int
    correct: int
    not_judged: int
    baseline_correct: int | None = None
    hard_judged: int = 0
    hard_correct: int = 0

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.judged if self.judged else None

    @property
    def baseline(self) -> float | None:
        return None if self.baseline_correct is None or not self.judged else self.baseline_correct / self.judged

    @property
    def hard_accuracy(self) -> float | None:
        return self.hard_correct / self.hard_judged if self.hard_judged else None


def _baseline(aspect: str, rec: dict[str, Any]) -> bool | None:
    """App. J's naïve estimates: performed = commanded, no mistakes, never complete."""
    if aspect == "performed_action":
        return bool(rec.get("performed_matches_commanded"))
    if aspect == "mistakes":
        return not truth_mistake(rec)
    if aspect == "completion":
        return not rec.get("truth_complete")
    return None


def _is_hard(aspect: str, rec: dict[str, Any]) -> bool:
    if aspect == "performed_action":
        return rec.get("performed_matches_commanded") is False
    if aspect == "mistakes":
        return truth_mistake(rec)
    if aspect == "completion":
        return bool(rec.get("truth_complete"))
    return False


def score_records(records: Iterable[dict[str, Any]]) -> dict[str, AspectScore]:
    """Per-aspect accuracy, naïve baseline and accuracy on the hard cases."""
    recs = list(records)
    out: dict[str, AspectScore] = {}
    for aspect, judge in _JUDGES.items():
        judged = correct = skipped = base = hard_n = hard_ok = 0
        has_base = aspect != "progression"
        for rec in recs:
            verdict = judge(rec)
            if verdict is None:
                skipped += 1
                continue
            judged += 1
            correct += verdict
            if has_base:
                base += bool(_baseline(aspect, rec))
            if _is_hard(aspect, rec):
                hard_n += 1
                hard_ok += verdict
        out[aspect] = AspectScore(aspect, judged, correct, skipped, base if has_base else None, hard_n, hard_ok)
    return out


def markdown_section(scores: dict[str, AspectScore], episodes: int, planners: Sequence[str]) -> str:
    def pct(v: float | None) -> str:
        return "–" if v is None else f"{100 * v:.1f}"

    lines = [
        f"Estimates of {', '.join(planners) or 'no planner'} over {episodes} episodes, judged by the LLM-free "
        "rubric in `evaluation/latent.py` against the virtual phone's truth.",
        "",
        "| aspect | judged steps | accuracy % | naïve baseline % | hard cases | accuracy on hard cases % | not judged |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for a in ASPECTS:
        s = scores[a]
        lines.append(
            f"| {a.replace('_', ' ')} | {s.judged} | {pct(s.accuracy)} | {pct(s.baseline)} | {s.hard_judged} | "
            f"{pct(s.hard_accuracy)} | {s.not_judged} |"
        )
    lines += [
        "",
        "Naïve baselines (App. J): performed action = commanded action; no mistakes; task never complete. "
        "Hard cases: the action did not do what was commanded / a mistake was outstanding / the task was complete.",
        "",
        "Cannot be judged by this rubric: " + "; ".join(NOT_JUDGED) + ". Progression is judged on recall of "
        "reached checkpoints only; mistakes on presence, not content.",
    ]
    return "\n".join(lines)
