"""The Claude reranker's reply parser: a permutation or a loud error, nothing in between."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from retrieval_eval.retrieval.rerank.claude import RerankError, parse_ranking


def test_plain_and_fenced_replies() -> None:
    assert parse_ranking('{"ranking": [2, 3, 1]}', count=3, query="q") == [2, 3, 1]
    fenced = '```json\n{"ranking": [1, 2]}\n```'
    assert parse_ranking(fenced, count=2, query="q") == [1, 2]


@pytest.mark.parametrize(
    "reply",
    [
        '{"ranking": [1, 2]}',
        '{"ranking": [1, 2, 2]}',
        '{"ranking": [0, 1, 2]}',
        '{"ranking": [true, 2, 3]}',
        '{"ranking": [1.0, 2, 3]}',
        "[1, 2, 3]",
        "1, 2, 3",
        "",
    ],
)
def test_anything_else_is_refused_with_the_reply_quoted(reply: str) -> None:
    with pytest.raises(RerankError, match="reply for query 'hotel cost' is malformed") as error:
        parse_ranking(reply, count=3, query="hotel cost")
    assert repr(reply)[:20] in str(error.value)


@given(st.text(max_size=60), st.integers(1, 6))
def test_any_text_gives_a_permutation_or_a_rerank_error(reply: str, count: int) -> None:
    try:
        order = parse_ranking(reply, count=count, query="q")
    except RerankError:
        return
    assert sorted(order) == list(range(1, count + 1))


@given(st.permutations(list(range(1, 8))))
def test_every_permutation_is_accepted(order: list[int]) -> None:
    assert parse_ranking(json.dumps({"ranking": order}), count=7, query="q") == order
