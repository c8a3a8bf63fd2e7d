"""Means per group (retrieval_type, query_type, tag): where a change helped or hurt."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence


def breakdown(
    per_query: Mapping[str, float], groups: Mapping[str, Sequence[str]]
) -> dict[str, float]:
    """Group label -> mean over the queries carrying it, in label order.

    A query may carry several labels (tags) and counts in each; queries absent
    from ``per_query`` (e.g. expect-empty fixtures) are not counted anywhere.
    """
    members: dict[str, list[float]] = {}
    for qid, labels in groups.items():
        if qid not in per_query:
            continue
        for label in dict.fromkeys(labels):
            members.setdefault(label, []).append(per_query[qid])
    return {label: math.fsum(values) / len(values) for label, values in sorted(members.items())}
