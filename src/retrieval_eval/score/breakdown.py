"""Means per group (retrieval_type, query_type, tag): where a change helped or hurt."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

# Up to this many distinct label lists, positions are found per list with numpy; beyond,
# one pass in Python is cheaper than a scan of every query per list.
_FEW_LISTS = 64


def group_members(labels: Sequence[Sequence[str]]) -> dict[str, np.ndarray]:
    """Label -> positions of the queries carrying it (a label counted once per query).

    Queries that share a combination of groups usually share one list object: the
    queries are then grouped by list at C speed, not walked one by one in Python."""
    identities = list(map(id, labels))
    lists = dict(zip(identities, labels, strict=True))
    if len(lists) > _FEW_LISTS:
        members: dict[str, list[int]] = {}
        for position, query_labels in enumerate(labels):
            for label in dict.fromkeys(query_labels):
                members.setdefault(label, []).append(position)
        return {label: np.asarray(found, dtype=np.intp) for label, found in members.items()}
    number = {identity: n for n, identity in enumerate(lists)}
    which = np.fromiter(map(number.__getitem__, identities), dtype=np.intp, count=len(labels))
    parts: dict[str, list[np.ndarray]] = {}
    for n, query_labels in enumerate(lists.values()):
        positions = np.flatnonzero(which == n)
        for label in dict.fromkeys(query_labels):
            parts.setdefault(label, []).append(positions)
    return {
        label: found[0] if len(found) == 1 else np.sort(np.concatenate(found))
        for label, found in parts.items()
    }


def group_means(
    columns: Mapping[str, Sequence[float | None]], members: Mapping[str, np.ndarray]
) -> dict[str, dict[str, float]]:
    """Per column (a metric's value per query position, None where the query has none):
    label -> the exactly rounded mean (``math.fsum``, so the order of queries does not
    matter) over the label's queries that have a value, in label order; a label none of
    whose queries has a value is left out."""
    means: dict[str, dict[str, float]] = {}
    order = sorted(members)
    for name, column in columns.items():
        size = len(column)
        if None in column:
            present = np.fromiter((value is not None for value in column), dtype=bool, count=size)
            values = np.fromiter(
                (0.0 if value is None else value for value in column), dtype=np.float64, count=size
            )
        else:  # every query has a value: the usual case, read at C speed
            present = np.ones(size, dtype=bool)
            values = np.asarray(column, dtype=np.float64)
        result: dict[str, float] = {}
        every = bool(present.all())
        for label in order:
            chosen = members[label]
            if not every:
                chosen = chosen[present[chosen]]
            if chosen.size:
                result[label] = math.fsum(values[chosen].tolist()) / chosen.size
        means[name] = result
    return means
