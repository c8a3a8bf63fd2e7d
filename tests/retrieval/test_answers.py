"""Checks on what a team's own system answers: the best ``k`` distinct documents by score
(ties by id) however many hits arrive, and every bad hit or cost an error naming the
retriever and the hit."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from retrieval_eval.errors import RetrievalEvalError
from retrieval_eval.retrieval.answers import (
    MAX_QUERY_COST_USD,
    TopHits,
    checked_cost,
    finite,
    normalise_hits,
)
from retrieval_eval.retrieval.base import Hit

WHO = "custom retriever `mine`: answer to `search` for query 'q1'"


def reference(hits: list[Hit], k: int) -> list[Hit]:
    """Sort everything, keep each document's best, cut to k."""
    best: dict[str, Hit] = {}
    for hit in sorted(hits, key=lambda h: (-h.score, h.doc_id)):
        best.setdefault(hit.doc_id, hit)
    return list(best.values())[:k]


@given(
    st.lists(
        st.builds(Hit, st.sampled_from("abcdefg"), st.floats(-2, 2), st.sampled_from(["", "t"])),
        max_size=30,
    ),
    st.integers(0, 5),
)
def test_the_top_k_is_every_hit_sorted_deduplicated_and_cut(hits: list[Hit], k: int) -> None:
    result = normalise_hits(hits, k, cost_usd=0.0, who=WHO)
    assert list(result.hits) == reference(hits, k)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_long_answer_cut_back_as_it_arrives_gives_the_same_top_k(seed: int) -> None:
    """Past the buffer (4096 hits) it is cut back to the top k, and a lower score is
    dropped unread; a document cut can return with a better hit."""
    rng = random.Random(seed)
    hits = [Hit(f"d{rng.randrange(3000)}", rng.uniform(0, 100), "") for _ in range(20_000)]
    hits.append(Hit("late", 1000.0, "best, last"))
    top = TopHits(10, who=WHO)
    for position, hit in enumerate(hits):
        top.add_answer(position, {"id": hit.doc_id, "score": hit.score, "text": hit.text})
    assert list(top.result(0).hits) == reference(hits, 10)
    assert top.result(0).hits[0] == Hit("late", 1000.0, "best, last")


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (["a", 1.0], 'hit 4 must be an object with `id` and `score`, got ["a", 1.0]'),
        ({"id": "a"}, "hit 4 must be an object with `id` and `score`"),
        ({"id": "", "score": 1.0}, "hit 4 has no document id (got '')"),
        ({"id": 7, "score": 1.0}, "hit 4 has no document id (got 7)"),
        ({"id": "a", "score": float("nan")}, "hit 4 (a) has score nan; scores must be finite"),
        ({"id": "a", "score": True}, "hit 4 (a) has score True; scores must be finite"),
        ({"id": "a", "score": 10**400}, "hit 4 (a) has score 1000"),
        ({"id": "a", "score": "1"}, "hit 4 (a) has score '1'"),
        ({"id": "a", "score": 1.0, "text": 3}, "hit 4 (a) has non-text `text`"),
    ],
)
def test_a_bad_hit_names_the_retriever_and_the_hit(raw: object, message: str) -> None:
    with pytest.raises(RetrievalEvalError) as raised:
        TopHits(3, who=WHO).add_answer(4, raw)
    assert str(raised.value).startswith(f"{WHO}: {message}")


def test_an_answer_of_a_thousand_kilobytes_is_named_in_short() -> None:
    with pytest.raises(RetrievalEvalError) as raised:
        TopHits(3, who=WHO).add_answer(0, ["x" * 1000])
    assert str(raised.value).endswith("...")
    assert len(str(raised.value)) < len(WHO) + 300


@pytest.mark.parametrize(
    "cost", [-0.01, MAX_QUERY_COST_USD * 2, float("nan"), True, "0.1", 10**400]
)
def test_a_cost_that_is_no_plausible_cost_is_refused(cost: object) -> None:
    with pytest.raises(RetrievalEvalError, match=r"cost_usd must be a number from 0 to 1,000,000"):
        checked_cost(cost, WHO)


def test_costs_and_scores_that_pass() -> None:
    assert checked_cost(0, WHO) == 0.0
    assert checked_cost(MAX_QUERY_COST_USD, WHO) == MAX_QUERY_COST_USD
    assert finite(10**300) and not finite(10**400) and not finite(float("inf"))
