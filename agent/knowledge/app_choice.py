"""Which of the phone's apps a goal needs, read from a small model's next-word likelihoods.

On the home screen a goal often names no app ("Show me my texts"), and no icon shares a
word with it.  Asked to pick from a list of the apps, a small model answers by the list's
order, not by what it knows (docs/results/generalization.md, "The app a goal needs").
Here nothing is listed: the model is asked which app does the task, and the
log-probability of each installed app's name as the first word of its answer is read,
minus the same log-probability after a neutral task (the name's prior), so that a name the
model likes anyway ("Settings") does not win by default.  One completion request per goal;
the neutral one once per chooser.

Needs a server that answers plain completions with token log-probabilities
(llama-cpp-python's, which serves the built-in models) and the model's turn format; with
anything else, or when a request fails, it ranks nothing and the caller goes on without
it.  It only orders the apps: it never opens one.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from agent.types import LLMCall

log = logging.getLogger(__name__)

#: How a user's turn and the start of the model's answer are written, per turn format.
TURNS = {
    "chatml": "<|im_start|>user\n{user}<|im_end|>\n<|im_start|>assistant\n{answer}",
    "gemma": "<start_of_turn>user\n{user}<end_of_turn>\n<start_of_turn>model\n{answer}",
}
_QUESTION = "On my Android phone: {goal}. Which app do I open?"
_ANSWER = "Open the"
_NEUTRAL = "do something"  # the task whose answer gives each name's prior
_MIN_PREFIX = 3  # a token shorter than this names an app only when it is the whole name


@dataclass(frozen=True, slots=True)
class AppOdds:
    """The apps ranked for a goal, likeliest first, with their scores (log-probability above
    the name's prior), and the model calls it took."""

    ranked: tuple[tuple[str, float], ...]
    calls: tuple[LLMCall, ...] = ()

    @property
    def best(self) -> str:
        return self.ranked[0][0] if self.ranked else ""


@dataclass
class AppChooser:
    """Ranks app names for a goal with ``client.next_words`` (see the module docstring)."""

    client: Any
    turns: str = "chatml"
    k: int = 100
    _prior: dict[str, float] | None = field(default=None, repr=False)

    @staticmethod
    def usable(client: Any, turns: str) -> bool:
        return turns in TURNS and callable(getattr(client, "next_words", None))

    def rank(self, goal: str, apps: list[str], aliases: dict[str, tuple[str, ...]] | None = None) -> AppOdds:
        """``apps`` ordered by how much likelier the goal makes each name (or the likeliest of
        its ``aliases``: the name its package gives, on a phone in another language); the
        names the model's answer does not start with are left out (none: an empty ranking)."""
        if not apps or not self.usable(self.client, self.turns):
            return AppOdds(())
        calls: list[LLMCall] = []
        try:
            if self._prior is None:
                words, call = self.client.next_words(self._prompt(_NEUTRAL), self.k)
                self._prior = words
                calls.append(call)
            words, call = self.client.next_words(self._prompt(goal.strip().rstrip(".!?")), self.k)
            calls.append(call)
        except Exception as exc:  # advice only: a server that cannot say leaves the order as it is
            log.info("no app likelihoods from the model: %s", exc)
            return AppOdds((), tuple(calls))
        names = {name: (name, *(aliases or {}).get(name, ())) for name in apps}
        every = [n for ns in names.values() for n in ns]
        said, prior = _names_scored(words, every), _names_scored(self._prior, every)
        floor = min(self._prior.values(), default=0.0)
        scored = [(name, max(said[n] - prior.get(n, floor) for n in ns if n in said))
                  for name, ns in names.items() if any(n in said for n in ns)]
        scored.sort(key=lambda x: -x[1])
        return AppOdds(tuple(scored), tuple(calls))

    def _prompt(self, goal: str) -> str:
        return TURNS[self.turns].format(user=_QUESTION.format(goal=goal), answer=_ANSWER)


def _names_scored(words: dict[str, float], apps: list[str]) -> dict[str, float]:
    """Each app's log-probability as the answer's first token: the best token that begins its
    name (at least three letters, or the whole name)."""
    out: dict[str, float] = {}
    for token, p in words.items():
        t = token.strip().casefold()
        if not t:
            continue
        for name in apps:
            n = name.casefold()
            if n.startswith(t) and (len(t) >= _MIN_PREFIX or t == n) and p > out.get(name, float("-inf")):
                out[name] = p
    return out
