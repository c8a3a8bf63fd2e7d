"""Score normalisations on hand-built runs: every normalised value is worked out by hand."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from retrieval_eval.retrieval.fusion.normalise import (
    min_max,
    theoretical,
    theoretical_min,
    z_score,
)
from tests.retrieval.fusion.runs import BM25, DENSE, runs


def test_min_max_normalisation() -> None:
    values, missing = min_max(DENSE, -1.0)
    assert values == pytest.approx({"a": 1.0, "b": 0.5, "c": 0.0})
    assert missing == 0.0
    assert min_max([("a", 3.0), ("b", 3.0)], 0.0)[0] == {"a": 1.0, "b": 1.0}


def test_z_score_normalisation() -> None:
    values, missing = z_score(BM25, 0.0)
    mean, sd = 7.0, math.sqrt(((12 - 7) ** 2 + (6 - 7) ** 2 + (3 - 7) ** 2) / 3)
    assert values == pytest.approx({"c": 5 / sd, "d": -1 / sd, "a": -4 / sd})
    assert missing == pytest.approx(-4 / sd)  # a missing document counts as the run's lowest
    assert mean == 7.0


def test_theoretical_min_uses_the_floor_not_the_observed_minimum() -> None:
    values, missing = theoretical_min(DENSE, -1.0)
    assert values == pytest.approx({"a": 1.0, "b": 1.5 / 1.9, "c": 1.1 / 1.9})
    assert missing == 0.0
    # The observed minimum of a BM25 run is not 0, but its floor is.
    assert theoretical_min(BM25, 0.0)[0] == pytest.approx({"c": 1.0, "d": 0.5, "a": 0.25})


def test_theoretical_divides_by_the_query_ceiling_not_the_observed_best() -> None:
    # BM25 ceiling 24: the best hit (12) matched half of what the query could match.
    values, missing = theoretical(BM25, 0.0, 24.0)
    assert values == pytest.approx({"c": 0.5, "d": 0.25, "a": 0.125})
    assert missing == 0.0  # the run holds every match: the rest matched nothing
    assert theoretical(BM25, 0.0, 24.0, True)[1] == pytest.approx(0.125)  # cut: at most that
    # Cosine over its whole range [-1, 1].
    assert theoretical(DENSE, -1.0, 1.0)[0] == pytest.approx({"a": 0.95, "b": 0.75, "c": 0.55})
    # Without a ceiling the run's best stands in (as theoretical-min, but with the
    # run's lowest for a missing document).
    assert theoretical(BM25, 0.0)[0] == theoretical_min(BM25, 0.0)[0]
    assert theoretical([], 0.0, 5.0) == ({}, 0.0)


@given(runs, st.floats(0, 100), st.floats(0, 100), st.booleans())
def test_theoretical_values_stay_in_the_unit_interval(
    run: list[tuple[str, float]], floor_gap: float, ceiling: float, cut: bool
) -> None:
    values, missing = theoretical(run, -floor_gap, ceiling, cut)
    assert all(0.0 <= value <= 1.0 for value in values.values())
    assert missing == (min(values.values()) if values and cut else 0.0)
