"""A reranker's answer applied to the fused run: its order for the candidates it ranked,
the candidates it left out next in fused order, the rest below the depth after them,
scores 1 / rank; and a reranker that invents or repeats a result is an error."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest

from retrieval_eval.errors import RetrievalEvalError
from retrieval_eval.retrieval.base import Hit
from retrieval_eval.retrieval.rerank.base import Reranking, apply_reranking

FUSED = tuple(
    Hit(doc, score, f"text of {doc}") for doc, score in zip("abcde", (5, 4, 3, 2, 1), strict=True)
)


class Fixed:
    """Answers with the same ids every time, and remembers what it was shown."""

    name = "fixed"

    def __init__(self, *ranked: str, cost: float = 0.0) -> None:
        self.answer = Reranking(ranked=ranked, cost_usd=cost)
        self.shown: list[tuple[str, tuple[str, ...]]] = []

    def rerank(self, query: str, candidates: Sequence[Hit]) -> Reranking:
        self.shown.append((query, tuple(hit.doc_id for hit in candidates)))
        return self.answer

    def describe(self) -> Mapping[str, object]:
        return {}


def test_the_top_depth_is_reordered_and_the_rest_follows() -> None:
    reranker = Fixed("c", "a", cost=0.002)
    reranked = apply_reranking(reranker, "wing flutter", FUSED, depth=3)
    assert reranker.shown == [("wing flutter", ("a", "b", "c"))]
    assert [hit.doc_id for hit in reranked.hits] == ["c", "a", "b", "d", "e"]
    assert [hit.score for hit in reranked.hits] == pytest.approx([1, 1 / 2, 1 / 3, 1 / 4, 1 / 5])
    assert reranked.hits[0].text == "text of c"
    assert reranked.cost_usd == 0.002


def test_nothing_fused_is_nothing_to_rerank() -> None:
    reranker = Fixed("a")
    assert apply_reranking(reranker, "q", (), depth=5).hits == ()
    assert reranker.shown == []


@pytest.mark.parametrize(
    ("ranked", "message"),
    [
        (("a", "d"), "reranker fixed: ranked 'd', which was not one of the 3 candidates"),
        (("b", "b"), "reranker fixed: ranked 'b' twice"),
    ],
)
def test_an_invented_or_repeated_result_is_an_error(ranked: tuple[str, ...], message: str) -> None:
    with pytest.raises(RetrievalEvalError) as raised:
        apply_reranking(Fixed(*ranked), "q", FUSED, depth=3)
    assert str(raised.value) == message
