from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval_eval.score.stats import bootstrap_ci, holm, paired_comparison, sign_flip_p_value


def test_bootstrap_of_two_values_by_hand() -> None:
    # Resampled means of [0, 1] are 0, 0.5, 1 with probability 1/4, 1/2, 1/4.
    assert bootstrap_ci([0.0, 1.0]) == (0.0, 1.0)


def test_bootstrap_is_reproducible_and_seeded() -> None:
    values = [((i * 37) % 101) / 101 for i in range(40)]
    first = bootstrap_ci(values, seed=3)
    assert bootstrap_ci(values, seed=3) == first
    assert bootstrap_ci(values, seed=4) != first
    low, high = first
    assert low < sum(values) / len(values) < high


def test_bootstrap_degenerate_inputs() -> None:
    low, high = bootstrap_ci([])
    assert math.isnan(low) and math.isnan(high)
    assert bootstrap_ci([0.7]) == (0.7, 0.7)
    assert bootstrap_ci([0.5] * 12) == (0.5, 0.5)


def test_paired_comparison_exact_sign_flip_p_value() -> None:
    current = {f"q{i}": 0.6 for i in range(5)} | {"new": 1.0}
    baseline = {f"q{i}": 0.5 for i in range(5)} | {"gone": 0.0}
    result = paired_comparison(current, baseline)
    assert result.n_common == 5
    assert result.mean_diff == pytest.approx(0.1)
    assert (result.ci_low, result.ci_high) == pytest.approx((0.1, 0.1))
    assert result.p_value == 2 / 32  # only all-plus and all-minus are as extreme
    assert result.only_current == ("new",)
    assert result.only_baseline == ("gone",)


def test_paired_comparison_sampled_p_value_is_never_zero() -> None:
    current = {f"q{i}": 1.0 for i in range(30)}
    baseline = {f"q{i}": 0.0 for i in range(30)}
    result = paired_comparison(current, baseline, resamples=999)
    assert result.p_value == 1 / 1000


def test_paired_comparison_no_difference_and_tiny_inputs() -> None:
    same = {"a": 0.3, "b": 0.9}
    assert paired_comparison(same, same).p_value == 1.0
    one = paired_comparison({"a": 1.0}, {"a": 0.0})
    assert (one.n_common, one.mean_diff, one.ci_low, one.ci_high, one.p_value) == (
        1,
        1.0,
        1.0,
        1.0,
        1.0,
    )
    none = paired_comparison({"a": 1.0}, {"b": 0.0})
    assert none.n_common == 0 and none.p_value == 1.0 and math.isnan(none.mean_diff)
    assert none.only_current == ("a",) and none.only_baseline == ("b",)


# Per-query metrics take few distinct values, and resamples are then drawn per value;
# the interval and the p-value must be those of the plain definitions (pick n indices
# with replacement; flip each pair's sign), up to Monte Carlo error.
@settings(max_examples=25)
@given(
    st.lists(st.sampled_from([0.0, 0.1, 0.25, 1 / 3, 0.5, 1.0]), min_size=20, max_size=300),
    st.integers(0, 2**16),
)
def test_resampling_by_distinct_value_matches_the_plain_definitions(
    values: list[float], seed: int
) -> None:
    data = np.array(values)
    rng = np.random.default_rng(seed + 1)
    plain = data[rng.integers(0, data.size, size=(20_000, data.size))].mean(axis=1)
    low, high = np.quantile(plain, [0.025, 0.975])
    assert bootstrap_ci(data, seed=seed) == pytest.approx((low, high), abs=0.02)

    diffs = data - np.roll(data, 1)
    signs = rng.choice([-1.0, 1.0], size=(20_000, diffs.size))
    observed = abs(diffs.mean())
    flipped = np.abs((signs * diffs).mean(axis=1))
    plain_p = np.count_nonzero(flipped >= observed - 1e-12) / flipped.size
    assert sign_flip_p_value(diffs, seed=seed) == pytest.approx(plain_p, abs=0.03)


def test_many_distinct_values_take_the_per_query_draw_and_agree_with_theory() -> None:
    """Past 1,024 distinct values resamples are drawn per query; the interval still brackets
    the mean as the normal approximation does at this size, and the p-value of a clear shift
    is tiny while that of a centred sample is not."""
    data = np.random.default_rng(7).random(2_000)
    half = 1.96 * data.std(ddof=1) / math.sqrt(data.size)
    assert bootstrap_ci(data) == pytest.approx((data.mean() - half, data.mean() + half), abs=0.003)
    assert sign_flip_p_value(data - data.mean() + 0.05) < 0.001
    assert sign_flip_p_value(data - data.mean()) > 0.5


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(min_value=0.0, max_value=1.0), max_size=12))
def test_holm_is_the_step_down_maximum_of_the_scaled_p_values(p_values: list[float]) -> None:
    """Holm: the i-th smallest p times (m − i), then the running maximum, capped at 1."""
    corrected = holm(p_values)
    m = len(p_values)
    ordered = sorted(range(m), key=lambda i: p_values[i])
    for rank, index in enumerate(ordered):
        expected = min(1.0, max((m - j) * p_values[ordered[j]] for j in range(rank + 1)))
        assert corrected[index] == pytest.approx(expected)
        assert p_values[index] <= corrected[index] <= 1.0
