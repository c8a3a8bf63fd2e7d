"""k-fold cross-validation over queries, on hand-built score matrices."""

from __future__ import annotations

import numpy as np
import pytest

from retrieval_eval.score.cross_validation import cross_validate, fold_of


def test_folds_are_seeded_and_balanced() -> None:
    first = fold_of(23, 5, seed=7)
    assert (first == fold_of(23, 5, seed=7)).all()
    assert not (first == fold_of(23, 5, seed=8)).all()
    assert sorted(np.bincount(first).tolist()) == [4, 4, 5, 5, 5]


def test_a_clear_winner_is_picked_on_every_fold_and_not_flagged() -> None:
    rng = np.random.default_rng(0)
    base = rng.uniform(0.2, 0.6, size=100)
    scores = np.vstack([base, base + 0.2, base - 0.1])  # point 1 is better on every query
    result = cross_validate(scores, [f"q{i}" for i in range(100)], folds=5, seed=0)
    assert result.picks == (1, 1, 1, 1, 1)
    assert result.in_sample_best == 1
    assert result.mean == pytest.approx((base + 0.2).mean())
    assert result.gap == pytest.approx(0.0)
    assert not result.overfit
    assert result.ci[0] < result.mean < result.ci[1]


def test_a_grid_of_noise_is_flagged_as_fitting_the_queries() -> None:
    # 200 points, each query's score pure noise: the in-sample best is luck.
    rng = np.random.default_rng(1)
    scores = rng.integers(0, 2, size=(200, 40)).astype(np.float64)
    result = cross_validate(scores, [f"q{i}" for i in range(40)], folds=5, seed=0)
    assert result.in_sample_mean > result.mean
    assert result.overfit


def test_held_out_scores_come_from_each_folds_own_pick() -> None:
    # Point 0 wins on queries 0-4, point 1 on 5-9; with 2 folds each fold's pick is
    # whichever wins on the other fold's queries.
    scores = np.array([[1.0] * 5 + [0.0] * 5, [0.0] * 5 + [0.9] * 5])
    ids = [f"q{i}" for i in range(10)]
    result = cross_validate(scores, ids, folds=2, seed=3)
    folds = fold_of(10, 2, seed=3)
    for position, qid in enumerate(ids):
        pick = result.picks[folds[position]]
        assert result.held_out[qid] == scores[pick, position]
    for fold, mean in enumerate(result.fold_means):
        members = [result.held_out[qid] for p, qid in enumerate(ids) if folds[p] == fold]
        assert mean == pytest.approx(sum(members) / len(members))


def test_bad_shapes_are_refused() -> None:
    with pytest.raises(ValueError, match="folds"):
        cross_validate(np.zeros((2, 3)), ["a", "b", "c"], folds=5)
    with pytest.raises(ValueError, match="one score column"):
        cross_validate(np.zeros((2, 3)), ["a"], folds=2)
