"""Confidence intervals and paired tests a reviewer can trust and re-run.

Every function takes an explicit seed, so the same inputs give the same numbers
on every machine and in every CI run (a report that changes when re-run is not
evidence). Degenerate inputs are answered, not raised: no values gives NaN
bounds (there is no mean to bound), one value gives the point itself as both
bounds (one query carries no information about spread; do not read it as
certainty).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from retrieval_eval.score.ranked import FloatArray

_EXACT_SIGN_FLIPS_UP_TO = 16  # 2**16 sign patterns: exact p-value, still instant
_BATCH_CELLS = 1 << 21  # resampled values held in memory at once
# Up to this many distinct values, resamples are drawn per distinct value (see
# _bootstrap_means); each costs a binomial draw, a few times an index draw.
_GROUPED_UP_TO = 1024


def bootstrap_ci(
    values: Sequence[float] | FloatArray,
    *,
    confidence: float = 0.95,
    resamples: int = 10_000,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap interval for the mean of ``values``."""
    data = np.asarray(values, dtype=np.float64)
    if data.size == 0:
        return (math.nan, math.nan)
    if data.size == 1:
        return (float(data[0]), float(data[0]))
    means = _bootstrap_means(data, resamples, seed)
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail])
    return (float(low), float(high))


def _bootstrap_means(data: FloatArray, resamples: int, seed: int) -> FloatArray:
    """Means of ``resamples`` resamples of ``data`` drawn with replacement.

    Per-query metrics usually take few distinct values (MRR@10 at most 11): then a
    resample is drawn as how many times each distinct value is picked, a multinomial
    draw over the values' frequencies. That is the same distribution as picking ``n``
    indices, at a cost of ``resamples × distinct values`` instead of ``resamples × n``,
    which is what keeps 100,000 queries fast.
    """
    rng = np.random.default_rng(seed)
    values, counts = np.unique(data, return_counts=True)
    draw: Callable[[int], FloatArray]
    if values.size <= _GROUPED_UP_TO:
        frequencies = counts / data.size
        width = values.size

        def draw(rows: int) -> FloatArray:
            picked = rng.multinomial(data.size, frequencies, size=rows)
            return (picked @ values) / data.size
    else:
        width = data.size

        def draw(rows: int) -> FloatArray:
            picks = rng.integers(0, data.size, size=(rows, data.size))
            return np.asarray(data[picks].mean(axis=1), dtype=np.float64)

    return np.concatenate(list(_in_batches(draw, resamples, width)))


def _in_batches(
    draw: Callable[[int], FloatArray], resamples: int, width: int
) -> Iterator[FloatArray]:
    """``draw(rows)`` for ``resamples`` rows in all, at most ``_BATCH_CELLS`` cells at once."""
    batch = max(1, _BATCH_CELLS // max(1, width))
    for start in range(0, resamples, batch):
        yield draw(min(batch, resamples - start))


@dataclass(frozen=True)
class PairedComparison:
    """Current minus baseline on the queries both sides scored.

    ``p_value`` is two-sided, from a paired randomization (sign-flip) test: exact
    over all 2**n sign patterns when n <= 16, else ``resamples`` random patterns
    with the usual +1 correction, so it is never exactly 0.
    """

    n_common: int
    mean_diff: float
    ci_low: float
    ci_high: float
    p_value: float
    only_current: tuple[str, ...]
    only_baseline: tuple[str, ...]


def paired_comparison(
    current: Mapping[str, float],
    baseline: Mapping[str, float],
    *,
    seed: int = 0,
    resamples: int = 10_000,
) -> PairedComparison:
    """Compare per-query values; queries on one side only are listed, not dropped silently.

    No common query: mean and interval are NaN and p is 1.0 (no evidence of a change).
    """
    common = sorted(set(current) & set(baseline))
    only_current = tuple(sorted(set(current) - set(baseline)))
    only_baseline = tuple(sorted(set(baseline) - set(current)))
    diffs = np.array([current[q] - baseline[q] for q in common], dtype=np.float64)
    return paired_differences(
        diffs, seed=seed, resamples=resamples, only=(only_current, only_baseline)
    )


def paired_differences(
    diffs: FloatArray,
    *,
    seed: int = 0,
    resamples: int = 10_000,
    only: tuple[tuple[str, ...], tuple[str, ...]] = ((), ()),
) -> PairedComparison:
    """:func:`paired_comparison` of the current-minus-baseline differences themselves, in
    the order of their query ids (the mean is summed in that order), for a caller that
    holds the values as arrays; ``only`` are the ids on one side only (current, baseline)."""
    only_current, only_baseline = only
    if diffs.size == 0:
        return PairedComparison(0, math.nan, math.nan, math.nan, 1.0, only_current, only_baseline)
    low, high = bootstrap_ci(diffs, seed=seed, resamples=resamples)
    return PairedComparison(
        n_common=int(diffs.size),
        mean_diff=float(diffs.mean()),
        ci_low=low,
        ci_high=high,
        p_value=sign_flip_p_value(diffs, seed=seed, resamples=resamples),
        only_current=only_current,
        only_baseline=only_baseline,
    )


Alternative = Literal["two-sided", "less", "greater"]


def sign_flip_p_value(
    diffs: FloatArray,
    *,
    seed: int = 0,
    resamples: int = 10_000,
    alternative: Alternative = "two-sided",
) -> float:
    """p-value of "mean difference is 0" under random sign flips of the pairs.

    ``alternative``: "two-sided" (a mean as far from 0 either way), "less" (as low: the
    evidence that the current run is worse) or "greater" (as high)."""
    n = diffs.size
    if n == 0:
        return 1.0
    signed_mean = float(diffs.mean())
    observed = {"two-sided": abs(signed_mean), "less": -signed_mean, "greater": signed_mean}[
        alternative
    ]
    tolerance = 1e-12 * max(1.0, float(np.abs(diffs).max()))

    def statistic(means: FloatArray) -> FloatArray:
        if alternative == "two-sided":
            return np.abs(means)
        return -means if alternative == "less" else means

    if n <= _EXACT_SIGN_FLIPS_UP_TO:
        patterns = (
            np.arange(1 << n, dtype=np.int64)[:, None] >> np.arange(n, dtype=np.int64)[None, :]
        )
        signs = 1.0 - 2.0 * (patterns & 1)
        flipped = statistic((signs * diffs).mean(axis=1))
        return float(np.count_nonzero(flipped >= observed - tolerance) / flipped.size)
    rng = np.random.default_rng(seed)
    magnitudes, counts = np.unique(np.abs(diffs[diffs != 0.0]), return_counts=True)
    draw: Callable[[int], FloatArray]
    if magnitudes.size <= _GROUPED_UP_TO:
        # Flipping the signs of the c pairs of one magnitude v adds v·(2B − c), with B
        # the number of plus signs, B ~ Binomial(c, 1/2): the same distribution as
        # flipping each pair, at a cost per distinct magnitude instead of per pair.
        # Zero differences add nothing whatever their sign.
        width = magnitudes.size

        def draw(rows: int) -> FloatArray:
            plus = rng.binomial(counts, 0.5, size=(rows, magnitudes.size))
            means = ((2 * plus - counts) @ magnitudes) / n
            return np.asarray(statistic(means), dtype=np.float64)
    else:
        width = n

        def draw(rows: int) -> FloatArray:
            signs = rng.choice(np.array([-1.0, 1.0]), size=(rows, n))
            return np.asarray(statistic((signs * diffs).mean(axis=1)), dtype=np.float64)

    extreme = sum(
        int(np.count_nonzero(flipped >= observed - tolerance))
        for flipped in _in_batches(draw, resamples, width)
    )
    return (extreme + 1) / (resamples + 1)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down correction of ``p_values`` for testing them together, in input order.

    The i-th smallest p (0-based) is multiplied by ``m − i`` and the results are made
    non-decreasing in that order and capped at 1, so a family of ``m`` comparisons keeps
    its chance of any false "better" at the level the corrected p is read against.
    """
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    corrected = [1.0] * m
    running = 0.0
    for position, index in enumerate(order):
        running = max(running, min(1.0, (m - position) * p_values[index]))
        corrected[index] = running
    return corrected


@dataclass(frozen=True)
class Agreement:
    """Two raters' yes/no answers on the same items: the first is the reference."""

    true_positive: int
    false_negative: int
    false_positive: int
    true_negative: int

    @property
    def total(self) -> int:
        return self.true_positive + self.false_negative + self.false_positive + self.true_negative

    def accuracy(self) -> float | None:
        if not self.total:
            return None
        return (self.true_positive + self.true_negative) / self.total

    def kappa(self) -> float | None:
        """Cohen's kappa, (p_o - p_e) / (1 - p_e); None when chance agreement is certain
        (both raters gave one answer to everything), where it is undefined."""
        n = self.total
        if not n:
            return None
        observed = (self.true_positive + self.true_negative) / n
        yes_ref = self.true_positive + self.false_negative
        yes_other = self.true_positive + self.false_positive
        chance = (yes_ref * yes_other + (n - yes_ref) * (n - yes_other)) / (n * n)
        if chance >= 1.0:
            return None
        return (observed - chance) / (1.0 - chance)
