"""The candidates of one query's fusion as arrays: the union sorted by id, each side's hits'
positions in it, and the one ranking rule (score descending, equal scores by id)."""

from __future__ import annotations

import numpy as np
import pytest

from retrieval_eval.retrieval.fusion.candidates import Candidates
from retrieval_eval.retrieval.fusion.normalise import min_max
from tests.retrieval.fusion.runs import BM25, DENSE


def test_the_union_is_sorted_by_id_and_each_hit_points_into_it() -> None:
    candidates = Candidates.of({"dense": DENSE, "bm25": BM25})
    assert candidates.ids == ["a", "b", "c", "d"]
    assert candidates.sides["dense"].positions.tolist() == [0, 1, 2]
    assert candidates.sides["bm25"].positions.tolist() == [2, 3, 0]


def test_a_run_that_reached_the_depth_asked_for_is_cut() -> None:
    candidates = Candidates.of({"dense": DENSE, "bm25": BM25[:2]}, depth=3)
    assert candidates.sides["dense"].cut
    assert not candidates.sides["bm25"].cut
    assert not Candidates.of({"dense": DENSE}).sides["dense"].cut  # no depth: never cut


def test_values_spread_over_the_candidates_the_rest_missing() -> None:
    candidates = Candidates.of({"dense": DENSE, "bm25": BM25})
    spread = candidates.spread("bm25", np.array([3.0, 2.0, 1.0]), -1.0)
    assert spread.tolist() == [1.0, -1.0, 3.0, 2.0]
    assert candidates.spread("absent", np.array([]), 0.5).tolist() == [0.5] * 4


def test_a_side_is_normalised_once_per_setting() -> None:
    candidates = Candidates.of({"dense": DENSE, "bm25": BM25})
    calls: list[str] = []

    def counted(
        run: object, floor: float, ceiling: float | None, cut: bool
    ) -> tuple[dict[str, float], float]:
        calls.append("called")
        return min_max(DENSE, floor)

    first = candidates.normalised("dense", "min-max", counted, -1.0, None)
    again = candidates.normalised("dense", "min-max", counted, -1.0, None)
    assert first is again
    assert calls == ["called"]
    assert first.tolist() == pytest.approx([1.0, 0.5, 0.0, 0.0])  # d: the missing value
    candidates.normalised("dense", "min-max", counted, 0.0, None)  # another floor: computed
    assert len(calls) == 2


def test_equal_scores_rank_by_id_and_a_matrix_row_by_row() -> None:
    candidates = Candidates.of({"x": [("d", 1.0), ("b", 1.0), ("a", 1.0), ("c", 2.0)]})
    assert candidates.ranked(np.array([1.0, 1.0, 2.0, 1.0])) == [
        ("c", 2.0),
        ("a", 1.0),
        ("b", 1.0),
        ("d", 1.0),
    ]
    scores = np.array([[0.0, 0.0, 0.0, 0.0], [0.1, 0.2, 0.3, 0.4]])
    assert candidates.top_ids(scores, 2) == [["a", "b"], ["d", "c"]]
