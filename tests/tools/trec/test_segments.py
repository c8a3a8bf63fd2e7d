"""Per-query running values over flat arrays (tools/trec/segments.py), checked against the
one-document-at-a-time loop trec_eval runs in C."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from retrieval_eval.tools.trec.segments import (
    last_of_each,
    positions_within,
    running_sums,
    starts_of,
    suffix_max,
)

# A query column sorted by query (as every caller's is), with one float per element.
QUERIES = st.lists(st.integers(0, 5), max_size=40).map(sorted)
VALUES = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)


def _columns(queries: list[int], values: list[float]) -> tuple[np.ndarray, np.ndarray]:
    return np.array(queries, dtype=np.int64), np.array(values[: len(queries)], dtype=np.float64)


def test_starts_and_positions_of_a_small_column() -> None:
    query = np.array([0, 0, 2, 2, 2, 5], dtype=np.int64)
    assert starts_of(query).tolist() == [0, 2, 5]
    assert positions_within(query).tolist() == [0, 1, 0, 1, 2, 0]
    assert starts_of(np.zeros(0, dtype=np.int64)).tolist() == []


@given(QUERIES, st.lists(VALUES, min_size=40, max_size=40))
def test_running_sums_add_left_to_right_as_c_does(queries: list[int], values: list[float]) -> None:
    query, value = _columns(queries, values)
    expected = []
    total, previous = 0.0, None
    for owner, number in zip(query.tolist(), value.tolist(), strict=True):
        total = number if owner != previous else total + number  # 0.0 + x is x
        previous = owner
        expected.append(total)
    assert running_sums(query, value).tolist() == expected  # bit for bit, not approximately


@given(QUERIES, st.lists(VALUES, min_size=40, max_size=40))
def test_suffix_max_and_last_of_each(queries: list[int], values: list[float]) -> None:
    query, value = _columns(queries, values)
    rows = list(zip(query.tolist(), value.tolist(), strict=True))
    expected = [
        max(v for j, (q, v) in enumerate(rows) if q == owner and j >= i)
        for i, (owner, _) in enumerate(rows)
    ]
    assert suffix_max(query, value).tolist() == expected
    last = dict(rows)  # the later element of a query wins
    assert last_of_each(query, value, 6).tolist() == [last.get(q, 0.0) for q in range(6)]
