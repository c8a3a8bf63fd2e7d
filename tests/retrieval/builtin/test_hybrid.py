"""Fusion and reranking over the real dense and bm25 retrievers."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

import pytest

from retrieval_eval.load.documents import Corpus
from retrieval_eval.retrieval.base import Hit, Retriever
from retrieval_eval.retrieval.builtin.hybrid import HybridRetriever
from retrieval_eval.retrieval.config import HybridConfig, RetrieversConfig
from retrieval_eval.retrieval.registry import build_retriever
from retrieval_eval.retrieval.rerank.base import Reranking
from retrieval_eval.retrieval.timed import QuerySpec, TimedResult, run_queries, search_one_by_one


@pytest.fixture(scope="module")
def sides(notes: Corpus, retrievers_config: RetrieversConfig) -> Iterator[dict[str, Retriever]]:
    built = {
        "dense": build_retriever("dense", retrievers_config),
        "bm25": build_retriever("bm25", retrievers_config),
    }
    for retriever in built.values():
        retriever.index(notes)
    yield built
    built["dense"].close()  # type: ignore[attr-defined]


def _hybrid(sides: dict[str, Retriever], **settings: object) -> HybridRetriever:
    """RRF unless ``fusion`` says otherwise. The sides are already indexed; the
    hybrid only fuses their answers."""
    return HybridRetriever(HybridConfig.model_validate({"fusion": "rrf", **settings}), sides)


QUERY = "pesto for the Lisbon trip budget"


def test_fused_score_is_the_sum_of_reciprocal_ranks(sides: dict[str, Retriever]) -> None:
    expected: dict[str, float] = {}
    for retriever in sides.values():
        for rank, hit in enumerate(retriever.search(QUERY, 100).hits, start=1):
            expected[hit.doc_id] = expected.get(hit.doc_id, 0.0) + 1.0 / (60 + rank)
    hits = _hybrid(sides).search(QUERY, 10).hits
    assert {h.doc_id: h.score for h in hits} == pytest.approx(expected)
    assert [h.doc_id for h in hits] == sorted(expected, key=lambda d: (-expected[d], d))


def test_weights_and_rrf_k_are_applied(sides: dict[str, Retriever]) -> None:
    dense_ranks = [h.doc_id for h in sides["dense"].search(QUERY, 100).hits]
    bm25_ranks = [h.doc_id for h in sides["bm25"].search(QUERY, 100).hits]
    hits = _hybrid(sides, rrf_k=10, weights={"dense": 2.0, "bm25": 0.5}).search(QUERY, 10).hits
    for hit in hits:
        score = 0.0
        if hit.doc_id in dense_ranks:
            score += 2.0 / (10 + dense_ranks.index(hit.doc_id) + 1)
        if hit.doc_id in bm25_ranks:
            score += 0.5 / (10 + bm25_ranks.index(hit.doc_id) + 1)
        assert hit.score == pytest.approx(score)


def test_a_zero_weight_side_is_not_consulted(sides: dict[str, Retriever]) -> None:
    bm25_only = _hybrid(sides, weights={"dense": 0.0})
    assert [h.doc_id for h in bm25_only.search(QUERY, 10).hits] == [
        h.doc_id for h in sides["bm25"].search(QUERY, 10).hits
    ]
    assert list(bm25_only.sides) == ["bm25"]


def test_depth_limits_what_each_side_contributes(sides: dict[str, Retriever]) -> None:
    hits = _hybrid(sides, depth=1).search(QUERY, 10).hits
    tops = {sides[name].search(QUERY, 1).hits[0].doc_id for name in ("dense", "bm25")}
    assert {h.doc_id for h in hits} == tops


def test_equal_fused_scores_go_to_the_smaller_document_id(sides: dict[str, Retriever]) -> None:
    # With depth 1 each side contributes only its top document, each scoring 1/61;
    # for "nuts" bm25 finds the pesto note, dense prefers the shakshuka note.
    tops = [sides[name].search("nuts", 1).hits[0].doc_id for name in ("dense", "bm25")]
    assert tops == ["recipes/shakshuka", "recipes/pesto"]
    hits = _hybrid(sides, depth=1).search("nuts", 10).hits
    assert [h.doc_id for h in hits] == sorted(tops)
    assert hits[0].score == hits[1].score == pytest.approx(1 / 61)


def test_tag_filter_and_the_empty_filter_guard(sides: dict[str, Retriever]) -> None:
    hybrid = _hybrid(sides)
    assert {h.doc_id for h in hybrid.search(QUERY, 10, ["travel"]).hits} == {
        "travel/lisbon",
        "travel/kyoto",
    }
    assert hybrid.search(QUERY, 10, ["no-such-tag"]).hits == ()


def test_hit_text_comes_from_the_side_that_ranked_the_document_best(
    sides: dict[str, Retriever],
) -> None:
    hits = {h.doc_id: h.text for h in _hybrid(sides).search("flights euros", 10).hits}
    assert hits["travel/lisbon"].startswith("Trip to Lisbon > Budget\n")


def test_describe_records_fusion_settings_and_both_sides(sides: dict[str, Retriever]) -> None:
    described = _hybrid(sides, weights={"dense": 2.0}).describe()
    assert (described["fusion"], described["rrf_k"], described["depth"]) == ("rrf", 60, 100)
    assert described["weights"] == {"dense": 2.0, "bm25": 1.0}
    assert set(described["sides"]) == {"dense", "bm25"}  # type: ignore[arg-type]
    convex = _hybrid(sides, fusion="convex", alpha=0.3, normalisation="z-score").describe()
    assert (convex["alpha"], convex["normalisation"]) == (0.3, "z-score")
    assert "rrf_k" not in convex and "weights" not in convex


def test_convex_fusion_of_theoretical_min_normalised_scores(sides: dict[str, Retriever]) -> None:
    dense = {h.doc_id: h.score for h in sides["dense"].search(QUERY, 100).hits}
    bm25 = {h.doc_id: h.score for h in sides["bm25"].search(QUERY, 100).hits}
    top_dense, top_bm25 = max(dense.values()), max(bm25.values())
    hits = (
        _hybrid(sides, fusion="convex", alpha=0.7, normalisation="theoretical-min")
        .search(QUERY, 10)
        .hits
    )
    for hit in hits:
        expected = 0.7 * ((dense[hit.doc_id] + 1) / (top_dense + 1) if hit.doc_id in dense else 0)
        expected += 0.3 * (bm25[hit.doc_id] / top_bm25 if hit.doc_id in bm25 else 0)
        assert hit.score == pytest.approx(expected)


def test_convex_fusion_of_theoretically_normalised_scores(sides: dict[str, Retriever]) -> None:
    # Both sides of the notes corpus return every candidate they score (fewer than
    # the depth), so a document one side did not return counts as 0 there.
    dense = {h.doc_id: h.score for h in sides["dense"].search(QUERY, 100).hits}
    bm25_result = sides["bm25"].search(QUERY, 100)
    bm25 = {h.doc_id: h.score for h in bm25_result.hits}
    ceiling = bm25_result.score_ceiling
    assert ceiling is not None and max(bm25.values()) < ceiling
    hits = (
        _hybrid(sides, fusion="convex", alpha=0.6, normalisation="theoretical", depth=1000)
        .search(QUERY, 10)
        .hits
    )
    for hit in hits:
        expected = 0.6 * ((dense[hit.doc_id] + 1) / 2 if hit.doc_id in dense else 0)
        expected += 0.4 * (bm25[hit.doc_id] / ceiling if hit.doc_id in bm25 else 0)
        assert hit.score == pytest.approx(expected)


def test_an_alpha_of_one_runs_only_dense(sides: dict[str, Retriever]) -> None:
    dense_only = _hybrid(sides, fusion="convex", alpha=1.0)
    assert list(dense_only.sides) == ["dense"]
    assert [h.doc_id for h in dense_only.search(QUERY, 5).hits] == [
        h.doc_id for h in sides["dense"].search(QUERY, 5).hits
    ]


class _Reverse:
    """A reranker that puts the fused candidates in reverse order."""

    name = "reverse"

    def __init__(self) -> None:
        self.seen: list[list[str]] = []

    def rerank(self, query: str, candidates: Sequence[Hit]) -> Reranking:
        self.seen.append([hit.doc_id for hit in candidates])
        return Reranking(tuple(hit.doc_id for hit in reversed(candidates)), cost_usd=0.001)

    def describe(self) -> Mapping[str, object]:
        return {"reranker": self.name}


def test_the_reranker_reorders_only_the_top_rerank_depth(sides: dict[str, Retriever]) -> None:
    fused = [h.doc_id for h in _hybrid(sides).search(QUERY, 10).hits]
    reverse = _Reverse()
    config = HybridConfig(fusion="rrf", rerank_depth=3)
    result = HybridRetriever(config, sides, reverse).search(QUERY, 10)
    assert reverse.seen == [fused[:3]]
    assert [h.doc_id for h in result.hits] == fused[:3][::-1] + fused[3:]
    assert [h.score for h in result.hits] == [1 / rank for rank in range(1, len(fused) + 1)]
    assert result.cost_usd == pytest.approx(0.001)
    assert result.rerank_s is not None and result.rerank_s >= 0
    assert _hybrid(sides).search(QUERY, 10).rerank_s is None


def test_a_datasets_queries_are_fused_as_one_by_one_with_their_sides_latency(
    sides: dict[str, Retriever],
) -> None:
    # Each side answers the whole list (dense in one model pass), then each query is fused.
    queries = [
        QuerySpec("q1", QUERY),
        QuerySpec("q2", "food", ("travel", "recipes")),
        QuerySpec("q3", "food", ("no-such-tag",)),
    ]
    hybrid = _hybrid(sides)
    seen: list[TimedResult] = []
    together = run_queries(hybrid, queries, 5, on_result=seen.append)
    alone = search_one_by_one(hybrid, queries, 5)
    assert seen == together
    assert [t.query_id for t in together] == ["q1", "q2", "q3"]
    assert [t.result for t in together] == [t.result for t in alone]
    assert together[2].result.hits == ()
    assert all(0 < t.latency_s < 5 for t in together)


def test_with_a_reranker_each_query_is_searched_on_its_own(sides: dict[str, Retriever]) -> None:
    reverse = _Reverse()
    hybrid = HybridRetriever(HybridConfig(fusion="rrf", rerank_depth=3), sides, reverse)
    timed = run_queries(hybrid, [QuerySpec("q1", QUERY), QuerySpec("q2", "food")], 10)
    assert len(reverse.seen) == 3  # the warm-up, then each query
    assert [t.result.rerank_s is not None for t in timed] == [True, True]
