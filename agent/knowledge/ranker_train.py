"""Fitting the step ranker the way it is judged: by leaving one group (app) out.

``held_out(examples)`` fits on every group but one and ranks the left-out group's steps,
for each group in turn, so every step gets a prediction from weights that never saw its
app.  ``choose_policy`` reads those predictions to pick, as data, when the ranker may
act alone (``Policy.act`` / ``Policy.done``: the lowest probability at which the
held-out precision is still at least ``PRECISION``, over at least ``MIN_SUPPORT``
steps), when "complete" is not offered to the model at all (``Policy.no_done``), and how
much of the ranking the model is offered (``Policy.mass``: the smallest share of the
probability whose held-out set still holds the recorded element in ``RECALL`` of the
steps).  ``train`` does both — policy from the held-out predictions, weights from every
group — and records the held-out figures in the ranker's ``meta``.

Pure computation over examples; no files, no model calls.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from agent.knowledge.ranker import L2, Example, Policy, Ranked, StepRanker, fit
from agent.knowledge.step_features import Candidate, Move

#: Acting alone needs at least this held-out precision ...
PRECISION = 0.95
#: ... over at least this many steps.
MIN_SUPPORT = 15
#: "complete" is withheld from the model only where so few steps are really the last one.
NOT_DONE_PRECISION = 0.99
#: The set offered to the model holds the recorded element in at least this share of steps.
RECALL = 0.95
_GRID = tuple(round(0.5 + 0.01 * i, 2) for i in range(50))

#: ``right(example, candidate)``: whether taking ``candidate`` is the recorded step (the
#: caller knows about typed texts).
Judge = Callable[[Example, Candidate], bool]


def _same(ex: Example, c: Candidate) -> bool:
    return ex.gold is not None and ex.view.candidates[ex.gold] is c


@dataclass(frozen=True, slots=True)
class HeldOut:
    """One step ranked by weights fitted without its group."""

    example: Example
    ranked: Ranked


def held_out(examples: Sequence[Example], *, l2: float = L2,
             on_fold: Callable[[str], None] | None = None) -> list[HeldOut]:
    """Every example ranked by a fit on the other groups (leave one group out)."""
    groups = sorted({ex.group for ex in examples})
    if len(groups) < 2:
        raise ValueError("leaving one group out needs at least two groups (apps)")
    out: list[HeldOut] = []
    for g in groups:
        if on_fold is not None:
            on_fold(g)
        ranker = fit([ex for ex in examples if ex.group != g], l2=l2)
        out += [HeldOut(ex, ranker.rank(ex.view)) for ex in examples if ex.group == g]
    return out


def _lowest(points: list[tuple[float, bool]], precision: float, support: int) -> float:
    """The lowest threshold of the grid from which on every threshold keeps ``precision``."""
    best = 1.01
    for t in sorted(_GRID, reverse=True):
        sel = [ok for p, ok in points if p >= t]
        if len(sel) < support:
            continue
        if sum(sel) / len(sel) < precision:
            break
        best = t
    return best


def kept(ranked: Ranked, mass: float, most: int = 0) -> list[Candidate]:
    """The element candidates offered to the model: best first, until their probabilities
    add up to ``mass`` of the elements' share (at least one; at most ``most`` when > 0)."""
    els = [(c, p) for c, p in zip(ranked.candidates, ranked.probs, strict=True) if c.move is not Move.COMPLETE]
    total = sum(p for _, p in els) or 1.0
    out, acc = [], 0.0
    for c, p in els:
        out.append(c)
        acc += p / total
        if acc >= mass or (most and len(out) >= most):
            break
    return out


def choose_policy(preds: Sequence[HeldOut], judge: Judge = lambda ex, c: _same(ex, c)) -> tuple[Policy, dict]:
    """The policy the held-out predictions support, and the figures it was chosen on."""
    acts = [(h.ranked.p_top, judge(h.example, h.ranked.top)) for h in preds if h.ranked.top.move is not Move.COMPLETE]
    dones = [(h.ranked.p_done(), _is_done(h.example)) for h in preds]
    act = _lowest(acts, PRECISION, MIN_SUPPORT)
    done = _lowest(dones, PRECISION, MIN_SUPPORT)
    # "complete" withheld below the highest p_done under which nearly no step is the last one
    no_done = 0.0
    for t in sorted({round(p, 3) for p, _ in dones}):
        sel = [d for p, d in dones if p <= t]
        if len(sel) >= MIN_SUPPORT and 1 - sum(sel) / len(sel) >= NOT_DONE_PRECISION:
            no_done = t
        elif len(sel) >= MIN_SUPPORT:
            break
    element_steps = [h for h in preds if h.example.gold is not None and not _is_done(h.example)]
    mass = 0.99
    for m in (0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 0.97, 0.99):
        hit = sum(1 for h in element_steps
                  if any(_same(h.example, c) for c in kept(h.ranked, m)))
        if element_steps and hit / len(element_steps) >= RECALL:
            mass = m
            break
    policy = Policy(act=act, done=done, no_done=no_done, mass=mass)
    return policy, held_out_figures(preds, policy, judge)


def held_out_figures(preds: Sequence[HeldOut], policy: Policy, judge: Judge = lambda ex, c: _same(ex, c)) -> dict:
    """What the policy does on held-out predictions: how often and how well it acts alone,
    the ranker's own accuracy, and the size and recall of the set offered to the model."""
    n = len(preds)
    alone = [h for h in preds if h.ranked.top.move is not Move.COMPLETE and h.ranked.p_top >= policy.act]
    done = [h for h in preds if h.ranked.p_done() >= policy.done]
    withheld = [h for h in preds if h.ranked.p_done() <= policy.no_done]
    element_steps = [h for h in preds if h.example.gold is not None and not _is_done(h.example)]
    sets = [kept(h.ranked, policy.mass) for h in element_steps]
    return {
        "steps": n,
        "top1": round(sum(judge(h.example, h.ranked.top) for h in preds) / max(n, 1), 4),
        "act_alone_steps": len(alone),
        "act_alone_precision": round(sum(judge(h.example, h.ranked.top) for h in alone) / max(len(alone), 1), 4),
        "done_alone_steps": len(done),
        "done_alone_precision": round(sum(_is_done(h.example) for h in done) / max(len(done), 1), 4),
        "done_alone_recall": round(sum(_is_done(h.example) for h in done)
                                   / max(sum(_is_done(h.example) for h in preds), 1), 4),
        "done_curve": [(t, *_precision_recall(preds, t)) for t in (0.3, 0.5, 0.7, 0.9)],
        "done_withheld_steps": len(withheld),
        "done_withheld_wrongly": sum(_is_done(h.example) for h in withheld),
        "offered_mean": round(sum(len(s) for s in sets) / max(len(sets), 1), 2),
        "offered_recall": round(sum(any(_same(h.example, c) for c in s) for h, s in zip(element_steps, sets, strict=True))
                                / max(len(sets), 1), 4),
    }


def _precision_recall(preds: Sequence[HeldOut], t: float) -> tuple[float, float]:
    """Precision and recall of "complete" said at probability ``t`` or more."""
    said = [h for h in preds if h.ranked.p_done() >= t]
    right = sum(_is_done(h.example) for h in said)
    return round(right / max(len(said), 1), 4), round(right / max(sum(_is_done(h.example) for h in preds), 1), 4)


def _is_done(ex: Example) -> bool:
    return ex.gold is not None and ex.view.candidates[ex.gold].move is Move.COMPLETE


#: How many ranked elements a small model is offered.  Measured with the built-in model on
#: the development tasks (docs/results/generalization.md): offered the best three, when it
#: tapped another than the ranker's first it was seldom right where the first was wrong and
#: often wrong where the first was right, on every app; so it is offered the best one, and
#: still decides whether to tap it, type, scroll, go back or say the task is done.
KEEP_SMALL = 1


def train(examples: Sequence[Example], *, l2: float = L2, judge: Judge = lambda ex, c: _same(ex, c),
          on_fold: Callable[[str], None] | None = None, keep_small: int = KEEP_SMALL) -> StepRanker:
    """Weights fitted on every example, with the policy their held-out predictions support
    (the held-out figures in ``meta['held_out']``); a small model is offered at most
    ``keep_small`` elements."""
    preds = held_out(examples, l2=l2, on_fold=on_fold)
    policy, figures = choose_policy(preds, judge)
    policy = replace(policy, keep_small=keep_small)
    ranker = fit(examples, l2=l2)
    return StepRanker(ranker.weights, policy, {**ranker.meta, "held_out": figures})
