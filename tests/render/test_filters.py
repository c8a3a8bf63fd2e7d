"""The numbers and phrases every report, comment and terminal line is made of: a real minus
sign, no "−0.000", "< 0.001" for a tiny p, and each informational sentence as written."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from retrieval_eval.render.filters import (
    FILTERS,
    MINUS,
    ann_fidelity_text,
    collapse_text,
    number,
    p_value,
    percent,
    pluralize,
    query_count,
    signed,
    take,
)
from retrieval_eval.results import AnnFidelitySummary, CollapseSummary
from tests.render.reports import dataset, query


@pytest.mark.parametrize(
    ("value", "metric", "shown"),
    [
        (0.12345, "ndcg@10", "0.123"),
        (12.3456, "latency_p95_ms", "12.35"),
        (12.3456, "setup_ms", "12.35"),
        (0.001234, "cost_per_query_usd", "0.0012"),
        (None, "ndcg@10", "—"),
    ],
)
def test_a_number_has_the_digits_its_metric_needs(
    value: float | None, metric: str, shown: str
) -> None:
    assert number(value, metric) == shown


@given(st.floats(-10, 10, allow_nan=False))
def test_a_signed_change_has_a_real_minus_and_no_signed_zero(value: float) -> None:
    text = signed(value)
    if abs(value) < 0.0005:
        assert text == "0.000"
    else:
        assert text[0] == ("+" if value > 0 else MINUS)
        assert float(text[1:]) == pytest.approx(abs(value), abs=0.0005)
    assert "-" not in text
    pct = percent(value)
    assert pct.endswith("%") and "-" not in pct
    assert pct == "0.0%" if abs(value) < 0.05 else pct[0] in ("+", MINUS)


def test_p_values_counts_and_cut_rows() -> None:
    assert (p_value(0.0004), p_value(0.0123)) == ("< 0.001", "0.012")
    assert (pluralize(1, "query", "queries"), pluralize(12345, "query", "queries")) == (
        "1 query",
        "12,345 queries",
    )
    assert pluralize(2, "result") == "2 results"
    assert take([1, 2, 3], 2) == ([1, 2], 1)
    assert take([1, 2], 2) == ([1, 2], 0)
    assert take([1, 2], None) == ([1, 2], 0)


def test_a_heading_counts_the_queries_compared_when_some_are_new() -> None:
    queries = [query("q1", "a"), query("q2", "b")]
    assert query_count(dataset(queries)) == "2 queries"
    # The hand-built comparison counts every query as common; two were added since.
    assert query_count(dataset(queries, added=["q3"])) == "2 of 2 queries compared"
    assert query_count(dataset(queries).model_copy(update={"comparison": None})) == "2 queries"


def test_the_informational_sentences() -> None:
    fidelity = AnnFidelitySummary(index="HNSW, qdrant", k=10, queries=25, recall=0.9876)
    assert ann_fidelity_text(fidelity) == (
        "ANN fidelity: recall@10 0.988 of exact search on 25 queries (HNSW, qdrant); "
        "informational, not gated"
    )
    collapse = CollapseSummary(results=35, documents=30, histogram={1: 25, 2: 5})
    assert collapse_text(collapse) == (
        "Collapse: 35 results (chunks) made 30 documents (documents from 1, 2, ... results: "
        "25 from 1, 5 from 2); informational, not gated"
    )
    empty = CollapseSummary(results=0, documents=0, histogram={})
    assert "results: none)" in collapse_text(empty)


def test_templates_escape_user_text_through_the_one_escaping_function() -> None:
    from retrieval_eval.render.escape import escape_markdown

    assert FILTERS["md"] is escape_markdown
    assert FILTERS["signed"] is signed
