"""Statistics used by the reports, checked against values worked out by hand."""

from __future__ import annotations

import pytest

from evaluation.stats import bootstrap_interval, paired_permutation_test, wilson_interval


def test_exact_permutation_p_for_three_positive_differences_is_two_in_eight() -> None:
    # Differences (1, 1, 1): of the 8 sign patterns only +++ and --- reach |sum| = 3.
    r = paired_permutation_test([1, 1, 1], [0, 0, 0])
    assert r.exact and r.p_value == pytest.approx(2 / 8) and r.mean_diff == 1.0


def test_ties_are_not_flipped() -> None:
    # Pairs 2 and 3 are equal; only the first difference (1) can flip: p = 2/2 = 1.
    r = paired_permutation_test([1, 1, 0], [0, 1, 0])
    assert r.p_value == pytest.approx(1.0)


def test_exact_p_counts_patterns_at_least_as_extreme() -> None:
    # Differences (2, 1, 1): |sum| over the 8 patterns is 4,2,2,0,0,2,2,4 -> p = 2/8 for 4.
    assert paired_permutation_test([2, 1, 1], [0, 0, 0]).p_value == pytest.approx(0.25)
    # Differences (2, 1, -1): observed |sum| 2 is reached by 6 of 8 patterns.
    assert paired_permutation_test([2, 1, 0], [0, 0, 1]).p_value == pytest.approx(0.75)


def test_identical_samples_give_p_one() -> None:
    assert paired_permutation_test([1, 0, 1], [1, 0, 1]).p_value == 1.0


def test_monte_carlo_is_seeded_and_close_to_the_exact_value() -> None:
    a = [1.0] * 12 + [0.0] * 8
    b = [0.0] * 20
    exact = paired_permutation_test(a, b, exact_limit=20)
    assert exact.p_value == pytest.approx(2 / 2**12)
    mc1 = paired_permutation_test(a, b, exact_limit=4, seed=7, resamples=20000)
    mc2 = paired_permutation_test(a, b, exact_limit=4, seed=7, resamples=20000)
    assert not mc1.exact and mc1.p_value == mc2.p_value
    assert mc1.p_value == pytest.approx(exact.p_value, abs=0.002)


def test_a_large_consistent_improvement_is_significant() -> None:
    a = [1] * 30 + [0] * 10
    b = [0] * 30 + [0] * 10
    assert paired_permutation_test(a, b).p_value < 0.001


def test_unpaired_lengths_are_refused() -> None:
    with pytest.raises(ValueError, match="same length"):
        paired_permutation_test([1, 2], [1])


def test_wilson_interval_matches_the_textbook_value() -> None:
    # 8/10 at 95%: centre (0.8 + 0.19208)/1.38415 = 0.71689, half 0.21536 -> [0.4902, 0.9433].
    iv = wilson_interval(8, 10)
    assert iv.estimate == 0.8
    assert iv.low == pytest.approx(0.4902, abs=1e-3)
    assert iv.high == pytest.approx(0.9433, abs=1e-3)


def test_wilson_interval_stays_inside_zero_one_at_the_extremes() -> None:
    assert wilson_interval(0, 5).low == 0.0 and wilson_interval(0, 5).high > 0
    assert wilson_interval(5, 5).high == 1.0 and wilson_interval(5, 5).low < 1


def test_bootstrap_interval_contains_the_mean_and_is_reproducible() -> None:
    v = [0.0, 0.5, 1.0, 0.25, 0.75]
    a, b = bootstrap_interval(v, seed=3), bootstrap_interval(v, seed=3)
    assert a == b
    assert a.low <= 0.5 <= a.high and a.estimate == 0.5
    assert bootstrap_interval([0.4, 0.4]).low == pytest.approx(0.4)
