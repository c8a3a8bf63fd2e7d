"""The dense retriever on the real model and a real in-process chromadb."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from retrieval_eval.load.corpus import load_corpus
from retrieval_eval.load.documents import Corpus, Document
from retrieval_eval.retrieval.builtin.dense import DenseRetriever
from retrieval_eval.retrieval.config import DenseConfig
from retrieval_eval.retrieval.timed import (
    QueryListRetriever,
    QuerySpec,
    TimedResult,
    run_queries,
    search_one_by_one,
)


@pytest.fixture(scope="module")
def dense(notes: Corpus, model_dir: Path) -> Iterator[DenseRetriever]:
    retriever = DenseRetriever(DenseConfig(model_dir=model_dir, threads=2))
    retriever.index(notes)
    yield retriever
    retriever.close()


def _ids(
    retriever: DenseRetriever, query: str, k: int = 10, tags: tuple[str, ...] = ()
) -> list[str]:
    return [hit.doc_id for hit in retriever.search(query, k, tags).hits]


def test_a_paraphrase_finds_the_right_section(dense: DenseRetriever) -> None:
    best = dense.search("how much did the holiday in Portugal cost", 3).hits[0]
    assert best.doc_id == "travel/lisbon"
    assert (
        best.text
        == "Trip to Lisbon > Budget\nThe flights cost 300 euros and the hotel 90 euros a night."
    )
    assert 0.5 < best.score <= 1.0  # cosine similarity


def test_results_are_unique_documents_best_first(dense: DenseRetriever) -> None:
    hits = dense.search("food", 10).hits
    assert len(hits) == 6  # every note once, though lisbon and shakshuka have several chunks
    assert len({h.doc_id for h in hits}) == 6
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_tag_filter_is_or_and_stays_inside_the_tagged_notes(dense: DenseRetriever) -> None:
    assert _ids(dense, "food", tags=("travel", "recipes")) == [
        "travel/lisbon",
        "recipes/shakshuka",
        "recipes/pesto",
        "travel/kyoto",
    ]
    assert _ids(dense, "spicy breakfast eggs", tags=("japan",)) == ["travel/kyoto"]


def test_a_filter_no_document_carries_returns_nothing(dense: DenseRetriever) -> None:
    assert len(_ids(dense, "food")) == 6
    assert _ids(dense, "food", tags=("no-such-tag",)) == []


def test_identical_documents_tie_and_the_smaller_id_comes_first(model_dir: Path) -> None:
    text = "Wind tunnel measurements of a swept wing."
    corpus = Corpus(
        (
            Document("copy-b", "", text),
            Document("copy-a", "", text),
            Document("other", "", "Soup."),
        ),
        "ties",
    )
    retriever = DenseRetriever(DenseConfig(model_dir=model_dir, threads=2))
    retriever.index(corpus)
    hits = retriever.search("swept wing wind tunnel", 2).hits
    retriever.close()
    assert [h.doc_id for h in hits] == ["copy-a", "copy-b"]
    assert hits[0].score == hits[1].score


def test_k_unique_documents_even_when_one_document_has_many_chunks(model_dir: Path) -> None:
    long_text = "\n".join(f"## Part {i}\nTurbine blade cooling, experiment {i}." for i in range(30))
    corpus = Corpus(
        (
            Document("long", "Turbine notes", long_text),
            Document("short-1", "", "Cooling of turbine blades."),
            Document("short-2", "", "Blade vibration in turbines."),
            Document("unrelated", "", "A recipe for lemon cake."),
        ),
        "many",
    )
    retriever = DenseRetriever(DenseConfig(model_dir=model_dir, threads=2))
    retriever.index(corpus)
    ids = _ids(retriever, "turbine blade cooling", k=4)
    retriever.close()
    assert sorted(ids) == ["long", "short-1", "short-2", "unrelated"]
    assert ids[-1] == "unrelated"


def test_the_embedding_cache_makes_reindexing_embed_nothing(
    notes: Corpus, model_dir: Path, tmp_path: Path
) -> None:
    config = DenseConfig(model_dir=model_dir, threads=2, cache_dir=tmp_path / "cache")
    first = DenseRetriever(config)
    first.index(notes)
    assert (
        first.embedding is not None and first.embedding.texts_embedded == 9
    )  # chunks: 2 + 1 + 3 + 1 + 1 + 1
    expected = _ids(first, "food")
    first.close()

    second = DenseRetriever(config)
    second.index(notes)
    assert second.embedding is not None
    assert (second.embedding.texts_embedded, second.embedding.cache_hits) == (0, 9)
    assert _ids(second, "food") == expected
    # Queries are never served from the cache, so latency does not depend on its state.
    _ids(second, "food")
    assert (second.embedding.texts_embedded, second.embedding.cache_hits) == (2, 9)
    second.close()


def test_a_persisted_collection_is_reused_for_the_same_corpus_and_rebuilt_for_a_new_one(
    notes: Corpus, model_dir: Path, tmp_path: Path
) -> None:
    config = DenseConfig(model_dir=model_dir, threads=2, persist_dir=tmp_path / "chroma")
    first = DenseRetriever(config)
    first.index(notes)
    expected = _ids(first, "food")
    first.close()

    reopened = DenseRetriever(config)
    reopened.index(notes)
    assert reopened.embedding is not None and reopened.embedding.texts_embedded == 0
    assert _ids(reopened, "food") == expected

    changed = Corpus((*notes.documents, Document("recipes/soup", "Soup", "Lentil soup.")), "n")
    reopened.index(changed)
    assert reopened.embedding.texts_embedded == 10  # all 10 chunks, into a fresh collection
    assert "recipes/soup" in _ids(reopened, "lentil soup", k=1)
    reopened.close()


def test_describe_names_the_model_and_chunking(dense: DenseRetriever) -> None:
    described = dense.describe()
    assert described["model"] == "all-MiniLM-L6-v2"
    assert (
        described["model_sha256"]
        == "e906719075812f05cd64b32f7e52dd9b43b505198a8abf1b5ccdcaef0c8d65a2"
    )
    assert (described["chunk_tokens"], described["chunk_overlap"]) == (254, 32)


def test_a_long_document_is_embedded_in_windows_and_the_matching_one_is_returned(
    model_dir: Path,
) -> None:
    filler = " ".join(["The committee reviewed the quarterly maintenance schedule."] * 60)
    text = f"{filler} The left engine caught fire during the test flight. {filler}"
    retriever = DenseRetriever(DenseConfig(model_dir=model_dir, threads=2))
    retriever.index(Corpus((Document("report", "", text),), "long"))
    (hit,) = retriever.search("engine fire in flight", 1).hits
    retriever.close()
    assert "The left engine caught fire during the test flight." in hit.text
    assert len(hit.text) < len(text) / 3


REPO = Path(__file__).resolve().parents[3]


def _repository_queries() -> list[tuple[str, tuple[str, ...]]]:
    queries = []
    for path in sorted((REPO / "datasets").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                queries.append((row["query"], tuple((row.get("filters") or {}).get("tags", ()))))
    return queries


@pytest.mark.slow
def test_exact_search_ranks_our_datasets_as_a_chromadb_collection_does(
    model_dir: Path, tmp_path: Path
) -> None:
    corpus = load_corpus(REPO / "datasets" / "corpus")
    queries = _repository_queries()
    assert len(queries) > 50 and any(tags for _, tags in queries)
    exact = DenseRetriever(DenseConfig(model_dir=model_dir, threads=2))
    kept = DenseRetriever(
        DenseConfig(model_dir=model_dir, threads=2, persist_dir=tmp_path / "chroma")
    )
    exact.index(corpus)
    kept.index(corpus)
    try:
        assert exact.describe()["search"] == "exact" and "chromadb" not in exact.describe()
        assert "search" not in kept.describe() and kept.describe()["chromadb"]
        for query, tags in queries:
            ours = exact.search(query, 10, tags).hits
            hnsw = kept.search(query, 10, tags).hits
            assert [hit.doc_id for hit in ours] == [hit.doc_id for hit in hnsw], query
            assert [hit.score for hit in ours] == pytest.approx(
                [hit.score for hit in hnsw], abs=1e-6
            )
    finally:
        exact.close()
        kept.close()


QUERIES = [
    QuerySpec("q1", "how much did the holiday in Portugal cost"),
    QuerySpec("q2", "food", ("travel", "recipes")),
    QuerySpec("q3", "food", ("no-such-tag",)),
    QuerySpec("q4", "spicy breakfast eggs", ("japan",)),
    QuerySpec("q5", "a quiet sunday with a book"),
]


def test_a_datasets_queries_answered_together_are_answered_as_one_by_one(
    dense: DenseRetriever,
) -> None:
    # The run hands dense the whole query list: one model pass embeds every query.
    assert isinstance(dense, QueryListRetriever)
    seen: list[TimedResult] = []
    together = run_queries(dense, QUERIES, 3, on_result=seen.append)
    alone = search_one_by_one(dense, QUERIES, 3)
    assert seen == together
    assert [t.query_id for t in together] == ["q1", "q2", "q3", "q4", "q5"]
    assert [t.result for t in together] == [t.result for t in alone]  # ids, scores and texts
    assert together[2].result.hits == ()
    assert all(0 < t.latency_s < 5 for t in together)
