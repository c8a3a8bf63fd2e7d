"""Means per group (retrieval type, query type, tag): the breakdown tables."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval_eval.score.breakdown import group_means, group_members


def test_breakdown_means_per_label() -> None:
    # Queries a, b, c and one with no value: a lists x twice and counts in it once.
    members = group_members([["x", "y", "x"], ["x"], [], ["x"]])
    column = [1.0, 0.0, 0.5, None]
    assert group_means({"m": column}, members) == {"m": {"x": 0.5, "y": 1.0}}


LABELS = st.lists(st.sampled_from(["rt\tsemantic", "rt\tkeyword", "tag\ta", "tag\tb"]), max_size=4)
VALUE = st.one_of(st.none(), st.floats(min_value=0, max_value=1), st.sampled_from([0.1, 1 / 3]))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(LABELS, st.lists(VALUE, min_size=2, max_size=2)), max_size=40))
def test_group_means_are_the_exact_mean_over_each_labels_queries(
    queries: list[tuple[list[str], list[float | None]]],
) -> None:
    """The vectorised means equal the definition: per metric and label, math.fsum over the
    queries that carry the label (once, however often they list it) and have a value."""
    members = group_members([labels for labels, _ in queries])
    columns = {f"m{i}": [values[i] for _, values in queries] for i in range(2)}
    expected: dict[str, dict[str, float]] = {}
    for name, column in columns.items():
        found: dict[str, list[float]] = {}
        for (labels, _), value in zip(queries, column, strict=True):
            for label in set(labels):
                if value is not None:
                    found.setdefault(label, []).append(value)
        expected[name] = {
            label: math.fsum(values) / len(values) for label, values in sorted(found.items())
        }
    means = group_means(columns, members)
    assert means == expected
    assert all(list(means[name]) == list(expected[name]) for name in columns)  # label order
