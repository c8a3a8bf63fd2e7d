"""Hand-built runs the fusion tests share."""

from __future__ import annotations

from hypothesis import strategies as st

# Cosine similarities and BM25 scores: unrelated scales, as in a real hybrid.
DENSE = [("a", 0.9), ("b", 0.5), ("c", 0.1)]
BM25 = [("c", 12.0), ("d", 6.0), ("a", 3.0)]

NORMALISATIONS = ["min-max", "z-score", "theoretical-min", "theoretical"]

runs = st.lists(
    st.tuples(
        st.sampled_from("abcdefgh"), st.floats(-5, 50, allow_nan=False, allow_infinity=False)
    ),
    max_size=8,
    unique_by=lambda pair: pair[0],
)
