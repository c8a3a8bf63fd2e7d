"""k-fold cross-validation over queries for choosing one setting from a grid.

The in-sample best — the grid point with the highest mean over all queries —
is an optimistic estimate of how that choice will do on new queries: with many
points, one of them wins partly by luck. Cross-validation measures the
*procedure* instead: queries are split into ``folds`` (seeded, so the split is
the same on every machine); for each fold the best point on the other folds is
chosen and scored on the held-out fold only. The held-out scores of all queries
give the cross-validated mean and its 95% bootstrap interval. When the
in-sample best exceeds that mean by more than the interval's half-width, the
grid is fitting noise, and the report says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from retrieval_eval.score.ranked import FloatArray
from retrieval_eval.score.stats import bootstrap_ci


@dataclass(frozen=True)
class CrossValidation:
    folds: int
    seed: int
    picks: tuple[int, ...]  # the grid point chosen on each fold's training queries
    fold_means: tuple[float, ...]  # each fold's held-out mean under its pick
    held_out: dict[str, float]  # query id → its score under its fold's pick
    mean: float
    ci: tuple[float, float]
    in_sample_best: int
    in_sample_mean: float

    @property
    def gap(self) -> float:
        return self.in_sample_mean - self.mean

    @property
    def half_width(self) -> float:
        return (self.ci[1] - self.ci[0]) / 2

    @property
    def overfit(self) -> bool:
        return self.gap > self.half_width


def fold_of(query_count: int, folds: int, seed: int) -> np.ndarray:
    """Each query's fold (0..folds−1): a seeded shuffle dealt round-robin, so fold
    sizes differ by at most one."""
    order = np.random.default_rng(seed).permutation(query_count)
    assignment = np.empty(query_count, dtype=np.int64)
    assignment[order] = np.arange(query_count) % folds
    return assignment


def cross_validate(
    scores: FloatArray, query_ids: Sequence[str], *, folds: int = 5, seed: int = 0
) -> CrossValidation:
    """``scores[point, query]``: each grid point's per-query metric.

    Ties between points go to the earlier point in the grid, so a result never
    depends on floating-point noise in the order of evaluation.
    """
    points, count = scores.shape
    if count != len(query_ids):
        raise ValueError("one score column per query id")
    if points == 0:
        raise ValueError("the grid is empty")
    if not 2 <= folds <= count:
        raise ValueError(f"folds must be between 2 and the number of queries ({count})")
    assignment = fold_of(count, folds, seed)
    held_out = np.empty(count, dtype=np.float64)
    picks: list[int] = []
    fold_means: list[float] = []
    for fold in range(folds):
        test = assignment == fold
        pick = int(np.argmax(scores[:, ~test].mean(axis=1)))
        picks.append(pick)
        held_out[test] = scores[pick, test]
        fold_means.append(float(held_out[test].mean()))
    means = scores.mean(axis=1)
    best = int(np.argmax(means))
    return CrossValidation(
        folds=folds,
        seed=seed,
        picks=tuple(picks),
        fold_means=tuple(fold_means),
        held_out=dict(zip(query_ids, held_out.tolist(), strict=True)),
        mean=float(held_out.mean()),
        ci=bootstrap_ci(held_out, seed=seed),
        in_sample_best=best,
        in_sample_mean=float(means[best]),
    )
