"""Per-query running values over flat arrays sorted by query, without a loop per query.

trec_eval accumulates each query's sums one document at a time in double
precision. A global cumulative sum minus the sum before a query's first element
rounds differently, so exact running sums here are built one position at a time
for every query at once: the Python loop runs over positions within a query (at
most the longest query's length), never over queries.
"""

from __future__ import annotations

import numpy as np

from retrieval_eval.score.ranked import FloatArray, IntArray


def starts_of(query: IntArray) -> IntArray:
    """Index of the first element of each run of equal values in ``query``."""
    if query.size == 0:
        return np.zeros(0, dtype=np.int64)
    first = np.ones(query.size, dtype=bool)
    first[1:] = query[1:] != query[:-1]
    return np.flatnonzero(first)


def positions_within(query: IntArray) -> IntArray:
    """0-based position of each element within its query's run of equal values."""
    if query.size == 0:
        return np.zeros(0, dtype=np.int64)
    starts = starts_of(query)
    return np.arange(query.size, dtype=np.int64) - np.repeat(
        starts, np.diff(np.append(starts, query.size))
    )


def running_sums(query: IntArray, values: FloatArray) -> FloatArray:
    """For each element, the sum of it and the earlier elements of its query.

    Added left to right from 0.0, element by element, exactly as a C loop would.
    """
    out = np.empty(values.size, dtype=np.float64)
    if values.size == 0:
        return out
    position = positions_within(query)
    order = np.argsort(position, kind="stable")
    counts = np.bincount(position).tolist()
    total = np.zeros(int(query.max()) + 1, dtype=np.float64)
    start = 0
    for count in counts:
        rows = order[start : start + count]
        start += count
        owners = query[rows]  # one element per query at each position
        total[owners] += values[rows]
        out[rows] = total[owners]
    return out


def last_of_each(query: IntArray, values: FloatArray, num_queries: int) -> FloatArray:
    """Each query's last value (0.0 for a query with no element)."""
    out = np.zeros(num_queries, dtype=np.float64)
    if query.size:
        last = np.ones(query.size, dtype=bool)
        last[:-1] = query[:-1] != query[1:]
        out[query[last]] = values[last]
    return out


def suffix_max(query: IntArray, values: FloatArray) -> FloatArray:
    """For each element, the maximum of it and the later elements of its query."""
    out = values.copy()
    step = 1
    while step < out.size:
        same = query[step:] == query[:-step]
        np.maximum(out[:-step], np.where(same, out[step:], out[:-step]), out=out[:-step])
        step *= 2
    return out
