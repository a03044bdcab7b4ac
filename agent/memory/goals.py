"""Which remembered goals count as this run's goal.

The same goal is the same words (case, spacing and punctuation aside).  An *equivalent*
goal is one the task repository's scorer (``agent.knowledge.retrieval``: TF-IDF over
stemmed, synonym-folded words blended with a fuzzy token-set ratio, or sentence
embeddings where installed) rates at least ``EQUIVALENT``, and that does not contradict
this one: no number, and no on/off word, on one side that the other lacks.  The bar is
deliberately far above the repository's retrieval threshold: a goal it finds only
*similar* ("Turn off mobile data" and "Turn off data roaming") gives examples to a
planner, never steps to run.  How the threshold was chosen and how it does on goals
it was not chosen on: ``bench/bench_memory.py goals`` (docs/results/decision-memory.md).

Pure functions; no model, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from agent.knowledge.retrieval import LexicalScorer, Scorer, tokens

#: The scorer's rating from which two goals are the same task in other words.
EQUIVALENT = 0.8
_NUMBER = re.compile(r"\d+")
#: Folded words (``retrieval.tokens``) that set a state; goals asking opposite states differ.
_STATES = frozenset({"on", "off"})


def normal(goal: str) -> str:
    """The goal's words, lower-cased, without punctuation or extra spaces."""
    return " ".join(re.findall(r"[^\W_]+", goal.casefold()))


def same_goal(a: str, b: str) -> bool:
    return bool(normal(a)) and normal(a) == normal(b)


def contradicts(a: str, b: str) -> bool:
    """One goal names a number or a state (on/off) the other does not."""
    ta, tb = tokens(a), tokens(b)
    numbers_a = {t for t in ta if _NUMBER.fullmatch(t)}
    numbers_b = {t for t in tb if _NUMBER.fullmatch(t)}
    states_a, states_b = _STATES.intersection(ta), _STATES.intersection(tb)
    return numbers_a != numbers_b or (bool(states_a or states_b) and states_a != states_b)


def equivalent_goals(goal: str, known: Iterable[str], scorer: Scorer | None = None,
                     at: float = EQUIVALENT) -> list[tuple[str, float]]:
    """The goals of ``known`` that are ``goal`` in other words, best first, with their
    scores (the same goal itself is left out: it is not "equivalent", it is the goal)."""
    others = sorted({g for g in known if not same_goal(g, goal)})
    if not others:
        return []
    scores = (scorer or LexicalScorer()).scores(goal, others)
    hits = [(g, s) for g, s in zip(others, scores, strict=True) if s >= at and not contradicts(goal, g)]
    return sorted(hits, key=lambda t: -t[1])
