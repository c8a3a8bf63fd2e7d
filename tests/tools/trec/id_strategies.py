"""Hypothesis strategies for the ids and score texts of small trec files: short and long
ids, ids that are prefixes of each other, and scores written in several forms (integers,
negatives, an exponent, a value that ties another only after rounding)."""

from __future__ import annotations

from hypothesis import strategies as st

QUERY_IDS = st.sampled_from(["1", "2", "10", "q", "Q", "a-very-long-query-identifier-1", "b"])
DOC_IDS = st.sampled_from(["d1", "d2", "d10", "x", "doc-with-a-long-identifier-42", "z9"])
SCORES = st.sampled_from(["1", "0.5", "0.25", "-1", "0", "2e1", "0.5000001"])
