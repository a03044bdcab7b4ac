"""Which remembered goals count as this run's goal.

The same goal is the same words (case, spacing and punctuation aside).  An *equivalent*
goal is one the task repository's scorer (``agent.knowledge.retrieval``: TF-IDF over
stemmed, synonym-folded words blended with a fuzzy token-set ratio, or sentence
embeddings where installed) rates at least ``EQUIVALENT`` when it compares the two goals
alone, and that does not contradict this one: the same numbers on both sides, and not
"on" on one side where the other says "off" (the repository's synonym table folds
"enable", "disable" ... to these).  The bar is
deliberately far above the repository's retrieval threshold: a goal it finds only
*similar* ("Turn off mobile data" and "Turn off data roaming") gives examples to a
planner, never steps to run.  How the threshold was chosen and how it does on goals
it was not chosen on: ``bench/bench_memory.py goals`` (docs/results/decision-memory.md).

Pure functions; no model, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from agent.knowledge.retrieval import SYNONYMS, LexicalScorer, Scorer

#: The scorer's rating (of the two goals alone) from which they are the same task in other words.
EQUIVALENT = 0.7
_NUMBER = re.compile(r"\d+")
_WORD = re.compile(r"[^\W_]+")
#: What the repository's synonym table folds state words to ("enable" -> "on").
_STATES = frozenset({"on", "off"})


def normal(goal: str) -> str:
    """The goal's words, lower-cased, without punctuation or extra spaces."""
    return " ".join(_WORD.findall(goal.casefold()))


def same_goal(a: str, b: str) -> bool:
    return bool(normal(a)) and normal(a) == normal(b)


def _states(goal: str) -> set[str]:
    return {f for w in _WORD.findall(goal.casefold()) if (f := SYNONYMS.get(w, w)) in _STATES}


def contradicts(a: str, b: str, *, strict: bool = True) -> bool:
    """The goals name different numbers, or both name a state (on / off) and not the same.
    ``strict``: a number on one side only counts as different too (the scorer's words alone
    must not turn "set a timer" into "set a 5 minute timer"); the model, which reads the
    words ("the 8:30 alarm", "my Gym alarm"), is shown such goals."""
    numbers_a, numbers_b = set(_NUMBER.findall(a)), set(_NUMBER.findall(b))
    states_a, states_b = _states(a), _states(b)
    numbers_differ = numbers_a != numbers_b if strict else bool(numbers_a and numbers_b and numbers_a != numbers_b)
    return numbers_differ or (bool(states_a) and bool(states_b) and states_a != states_b)


def rating(a: str, b: str, scorer: Scorer | None = None) -> float:
    """How alike two goals are, rated on the two alone (so the figure does not move with
    whatever else the memory holds)."""
    return (scorer or LexicalScorer()).scores(a, [b])[0]


def equivalent_goals(goal: str, known: Iterable[str], scorer: Scorer | None = None,
                     at: float = EQUIVALENT) -> list[tuple[str, float]]:
    """The goals of ``known`` that are ``goal`` in other words, best first, with their
    ratings (the same goal itself is left out: it is not "equivalent", it is the goal)."""
    hits = []
    for other in sorted({g for g in known if not same_goal(g, goal)}):
        r = rating(goal, other, scorer)
        if r >= at and not contradicts(goal, other):
            hits.append((other, r))
    return sorted(hits, key=lambda t: -t[1])
