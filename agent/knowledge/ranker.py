"""The learned step ranker: which candidate next step (``agent.knowledge.step_features``)
a goal most likely wants on this screen, how sure that is, and when it may act alone.

A conditional logit: each candidate's score is the dot product of its sparse features
with one weight vector, and a softmax over the screen's candidates gives each one's
probability.  Weights are fitted on recorded steps (``fit``); the learned word features
(``tok:…``) keep only words of letters seen in at least ``min_apps`` of the training apps,
so a word one or two apps use for themselves — a file's, a song's name — carries no weight.  The policy that goes with the weights
is data too, chosen on held-out folds by ``scripts/train_evidence.py``:

* ``act`` — the top candidate's probability at or above which it is taken with no model
  call (chosen so that its cross-validated precision is at least 0.95);
* ``done`` — the same for "the task is complete";
* ``no_done`` — the probability of "complete" at or below which the model is not offered
  it (held-out, nearly no such step was the last one);
* ``mass`` — the share of the probability whose best elements the model is offered when
  the ranker does not act alone (the smallest share whose held-out set still holds the
  recorded element in 95 % of the steps);
* ``keep_small`` — at most this many for a small model (the built-in ones), which picks
  better from a short list; a capable model is never cut below ``mass``.

Weights, policy and the figures they were chosen with ship as JSON
(``agent/knowledge/data/step_ranker.json``).  Hand-written numerics (a small full-batch
gradient fit in numpy) rather than a library: the model has a few hundred weights and a
softmax per screen, which scikit-learn's estimators do not fit directly, and numpy is
already a dependency.  No I/O but ``load`` / ``save``; no model calls.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from agent.knowledge.step_features import Candidate, Move, StepView

log = logging.getLogger(__name__)

SCHEMA = 1
#: Where the shipped weights live (package data).
SHIPPED = "step_ranker.json"


class RankerError(ValueError):
    """A weights file cannot be read; the message says which and why."""


@dataclass(frozen=True, slots=True)
class Policy:
    """When the ranker acts alone, and how many elements the model is offered otherwise."""

    act: float = 1.01  # the top element is taken alone at this probability (above 1: never)
    done: float = 1.01  # "complete" is said alone at this probability
    no_done: float = 0.0  # at or below this probability of "complete" the model is not offered it
    mass: float = 1.0  # the model is offered the best elements holding this share of the probability
    keep_small: int = 0  # a small (built-in) model is offered at most this many (0: no other limit)


@dataclass(frozen=True, slots=True)
class Example:
    """One recorded step: its candidates and which one the recording took (None: none of them)."""

    view: StepView
    gold: int | None
    group: str = ""  # the fold it belongs to (the app)
    typed: str = ""  # the text the recording typed, when it typed


@dataclass(frozen=True, slots=True)
class Ranked:
    """A step's candidates, best first, with their probabilities."""

    candidates: tuple[Candidate, ...]
    probs: tuple[float, ...]

    @property
    def top(self) -> Candidate:
        return self.candidates[0]

    @property
    def p_top(self) -> float:
        return self.probs[0]

    def elements(self, k: int = 0) -> list[Candidate]:
        """The element candidates, best first (the first ``k`` when ``k`` > 0)."""
        out = [c for c in self.candidates if c.move is not Move.COMPLETE]
        return out[:k] if k > 0 else out

    def p_done(self) -> float:
        return next((p for c, p in zip(self.candidates, self.probs, strict=True) if c.move is Move.COMPLETE), 0.0)


@dataclass(frozen=True)
class StepRanker:
    """Weights over named features, and the policy chosen with them."""

    weights: dict[str, float]
    policy: Policy = Policy()
    meta: dict[str, Any] = field(default_factory=dict)

    def score(self, c: Candidate) -> float:
        w = self.weights
        return sum(w.get(k, 0.0) * v for k, v in c.features.items())

    def rank(self, view: StepView) -> Ranked:
        if not view.candidates:
            return Ranked((), ())
        s = np.array([self.score(c) for c in view.candidates])
        p = np.exp(s - s.max())
        p /= p.sum()
        order = sorted(range(len(s)), key=lambda i: -p[i])
        return Ranked(tuple(view.candidates[i] for i in order), tuple(float(p[i]) for i in order))

    def with_policy(self, policy: Policy) -> StepRanker:
        return replace(self, policy=policy)

    # ---- storage ------------------------------------------------------------------------
    def to_data(self) -> dict[str, Any]:
        p = self.policy
        return {"schema": SCHEMA, "policy": {"act": p.act, "done": p.done, "no_done": p.no_done, "mass": p.mass,
                                             "keep_small": p.keep_small},
                "meta": self.meta, "weights": {k: round(v, 6) for k, v in sorted(self.weights.items()) if v}}

    @classmethod
    def from_data(cls, data: Any, source: str = "weights") -> StepRanker:
        if not isinstance(data, dict) or data.get("schema") != SCHEMA or not isinstance(data.get("weights"), dict):
            raise RankerError(f"{source}: not step-ranker weights of schema {SCHEMA}")
        pol = data.get("policy") or {}
        try:
            policy = Policy(float(pol.get("act", 1.01)), float(pol.get("done", 1.01)), float(pol.get("no_done", 0.0)),
                            float(pol.get("mass", 1.0)), int(pol.get("keep_small", 0)))
            weights = {str(k): float(v) for k, v in data["weights"].items()}
        except (TypeError, ValueError) as exc:
            raise RankerError(f"{source}: {exc}") from None
        return cls(weights, policy, dict(data.get("meta") or {}))

    def save(self, path: str | Path) -> None:
        p = Path(path)
        tmp = p.with_suffix(p.suffix + ".part")
        tmp.write_text(json.dumps(self.to_data(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        tmp.replace(p)

    @classmethod
    def load(cls, path: str | Path) -> StepRanker:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise RankerError(f"{path}: {exc}") from None
        return cls.from_data(data, str(path))

    @classmethod
    def shipped(cls) -> StepRanker | None:
        """The weights that ship with Tapwise, or None when the data file is absent."""
        ref = resources.files("agent.knowledge") / "data" / SHIPPED
        if not ref.is_file():
            return None
        try:
            return cls.from_data(json.loads(ref.read_text(encoding="utf-8")), f"agent/knowledge/data/{SHIPPED}")
        except (json.JSONDecodeError, RankerError) as exc:
            log.warning("the shipped step ranker cannot be read: %s", exc)
            return None


# ---- fitting ---------------------------------------------------------------------------
def _word_support(examples: Sequence[Example]) -> dict[str, set[str]]:
    """For each learned word feature, the groups (apps) whose screens show it."""
    seen: dict[str, set[str]] = {}
    for ex in examples:
        for c in ex.view.candidates:
            for k in c.features:
                if k.startswith("tok"):
                    seen.setdefault(k, set()).add(ex.group)
    return seen


def _ui_word(feature: str) -> bool:
    """A learned word feature names a word of the interface, not content: letters only
    ("settings", "options"), never a file or item name ("video1", "m4a")."""
    word = feature.split(":", 1)[1]
    return word.isalpha() and len(word) >= 2


#: The fit's L2 penalty, chosen by leave-one-app-out accuracy on the development folds
#: (1: 75.2 % held out, 79.6 % in sample; 2: 76.1 / 78.5; 4: 73.2 / 76.4): the smallest
#: gap between the two without losing held-out accuracy.
L2 = 2.0


def fit(examples: Iterable[Example], *, l2: float = L2, min_apps: int = 3, steps: int = 600,
        lr: float = 0.05) -> StepRanker:
    """Weights maximising the recorded steps' likelihood (softmax per step, L2 penalty
    ``l2``), learned word features kept only when seen in ``min_apps`` groups or more."""
    data = [ex for ex in examples if ex.gold is not None and ex.view.candidates]
    if not data:
        raise ValueError("no recorded step to fit on")
    support = _word_support(data)
    groups = {ex.group for ex in data}
    need = min(min_apps, len(groups))
    names = sorted({k for ex in data for c in ex.view.candidates for k in c.features
                    if not k.startswith("tok") or (len(support.get(k, ())) >= need and _ui_word(k))})
    index = {k: i for i, k in enumerate(names)}
    mats, golds = [], []
    for ex in data:
        m = np.zeros((len(ex.view.candidates), len(names)))
        for r, c in enumerate(ex.view.candidates):
            for k, v in c.features.items():
                j = index.get(k)
                if j is not None:
                    m[r, j] = v
        mats.append(m)
        golds.append(ex.gold)
    w = np.zeros(len(names))
    # word features are many and sparse: a stronger penalty keeps them from memorising screens
    penalty = np.array([l2 * (4.0 if k.startswith("tok") else 1.0) for k in names])
    m1, m2 = np.zeros_like(w), np.zeros_like(w)
    n = len(mats)
    for t in range(1, steps + 1):  # Adam on the mean negative log-likelihood
        grad = penalty * w / n
        for m, g in zip(mats, golds, strict=True):
            s = m @ w
            p = np.exp(s - s.max())
            p /= p.sum()
            grad += (m.T @ p - m[g]) / n
        m1 = 0.9 * m1 + 0.1 * grad
        m2 = 0.999 * m2 + 0.001 * grad * grad
        w -= lr * (m1 / (1 - 0.9 ** t)) / (np.sqrt(m2 / (1 - 0.999 ** t)) + 1e-8)
    return StepRanker({k: float(v) for k, v in zip(names, w, strict=True) if abs(v) > 1e-6},
                      meta={"examples": n, "groups": sorted(groups), "l2": l2, "min_apps": need})


def log_loss(ranker: StepRanker, examples: Iterable[Example]) -> float:
    total, n = 0.0, 0
    for ex in examples:
        if ex.gold is None:
            continue
        r = ranker.rank(ex.view)
        gold = ex.view.candidates[ex.gold]
        p = next(p for c, p in zip(r.candidates, r.probs, strict=True) if c is gold)
        total -= math.log(max(p, 1e-12))
        n += 1
    return total / max(n, 1)
