"""Small statistics for benchmark reports: paired permutation tests and confidence
intervals.  Pure numpy; every random procedure takes a seed so reports are reproducible.
No I/O.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

#: Up to this many non-zero paired differences the permutation test is exact (2**n sign flips).
EXACT_LIMIT = 16


@dataclass(frozen=True, slots=True)
class PermutationResult:
    """A two-sided paired permutation test of mean(a - b) = 0."""

    n: int
    mean_diff: float
    p_value: float
    exact: bool
    resamples: int

    def describe(self) -> str:
        how = "exact" if self.exact else f"Monte Carlo, {self.resamples} resamples"
        return f"Δ={self.mean_diff:+.3f}, p={self.p_value:.4f} (n={self.n}, {how})"


def paired_permutation_test(
    a: Sequence[float],
    b: Sequence[float],
    *,
    resamples: int = 20000,
    seed: int = 0,
    exact_limit: int = EXACT_LIMIT,
) -> PermutationResult:
    """Two-sided paired permutation (sign-flip) test on the mean difference.

    Under the null hypothesis each pair's two values are exchangeable, so every
    difference's sign may flip.  With at most ``exact_limit`` non-zero differences all
    sign patterns are enumerated (exact p); otherwise ``resamples`` random patterns are
    drawn with ``seed`` and p = (1 + hits) / (1 + resamples).  Pairs with no difference
    cannot change the statistic and are not flipped.
    """
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"paired samples must have the same length, got {x.shape} and {y.shape}")
    n = int(x.size)
    if n == 0:
        raise ValueError("a paired test needs at least one pair")
    d = x - y
    observed = float(d.mean())
    nz = d[d != 0]
    k = int(nz.size)
    if k == 0:
        return PermutationResult(n, 0.0, 1.0, True, 1)
    target = abs(nz.sum()) - 1e-12
    if k <= exact_limit:
        signs = ((np.arange(2**k)[:, None] >> np.arange(k)[None, :]) & 1) * 2 - 1
        sums = np.abs(signs @ nz)
        p = float(np.count_nonzero(sums >= target)) / float(2**k)
        return PermutationResult(n, observed, p, True, 2**k)
    rng = np.random.default_rng(seed)
    hits = 0
    done = 0
    chunk = 4096
    while done < resamples:
        m = min(chunk, resamples - done)
        signs = rng.integers(0, 2, size=(m, k)) * 2 - 1
        hits += int(np.count_nonzero(np.abs(signs @ nz) >= target))
        done += m
    return PermutationResult(n, observed, (1 + hits) / (1 + resamples), False, resamples)


@dataclass(frozen=True, slots=True)
class Interval:
    estimate: float
    low: float
    high: float
    method: str

    def describe(self, percent: bool = True) -> str:
        if percent:
            return f"{100 * self.estimate:.1f}% [{100 * self.low:.1f}, {100 * self.high:.1f}]"
        return f"{self.estimate:.3g} [{self.low:.3g}, {self.high:.3g}]"


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> Interval:
    """Wilson score interval for a binomial proportion (sane at 0/n and n/n)."""
    if n <= 0:
        raise ValueError("a proportion needs at least one trial")
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be within 0..{n}, got {successes}")
    z = _z(confidence)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return Interval(p, max(0.0, centre - half), min(1.0, centre + half), "wilson")


def bootstrap_interval(
    values: Sequence[float], confidence: float = 0.95, *, resamples: int = 5000, seed: int = 0
) -> Interval:
    """Percentile bootstrap interval for the mean (seeded)."""
    v = np.asarray(values, dtype=float)
    if v.size == 0:
        raise ValueError("a bootstrap interval needs at least one value")
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, v.size, size=(resamples, v.size))
    means = v[idx].mean(axis=1)
    alpha = (1 - confidence) / 2
    lo, hi = np.quantile(means, [alpha, 1 - alpha])
    return Interval(float(v.mean()), float(lo), float(hi), "bootstrap")


def _z(confidence: float) -> float:
    if not 0 < confidence < 1:
        raise ValueError("confidence must be between 0 and 1")
    # Common levels are tabulated; others invert the normal CDF by bisection.
    table = {0.9: 1.6448536269514722, 0.95: 1.959963984540054, 0.99: 2.5758293035489004}
    for level, z in table.items():
        if abs(confidence - level) < 1e-12:
            return z
    target = 1 - (1 - confidence) / 2
    lo, hi = 0.0, 10.0
    for _ in range(100):
        mid = (lo + hi) / 2
        if 0.5 * (1 + math.erf(mid / math.sqrt(2))) < target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2
