"""The model's embeddings as a run uses them, on the real model: a query embedded with
its time is the same vector as one embedded untimed, and from a cache it comes back with
the seconds recorded when it was embedded; passages calibrated ahead are not embedded a
second time; each text is counted once, as embedded or as a cache hit."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from retrieval_eval.index.embedding_cache import EmbeddingCache
from retrieval_eval.index.text_embedding import DIMENSIONS, TextEmbedding

QUERIES = [
    "what did the flights to lisbon cost",
    "basil pesto",
    "what did the flights to lisbon cost",
]
PASSAGES = ["Flights cost 300 euros.", "Blend basil, pine nuts and garlic.", "Tag the commit."]


def test_a_timed_query_is_the_untimed_vector_and_a_cached_one_keeps_its_seconds(
    model_dir: Path, tmp_path: Path
) -> None:
    plain = TextEmbedding(model_dir, intra_op_threads=2).embed_queries(QUERIES)
    with EmbeddingCache(tmp_path / "cache") as cache:
        first = TextEmbedding(model_dir, intra_op_threads=2)
        vectors, seconds = first.embed_queries_timed(QUERIES, cache)
        assert np.allclose(vectors, plain, atol=1e-6)
        assert seconds[0] == seconds[2] > 0  # one text, embedded once, timed once
        assert (first.texts_embedded, first.cache_hits) == (2, 0)
        again = TextEmbedding(model_dir, intra_op_threads=2)
        cached_vectors, cached_seconds = again.embed_queries_timed(QUERIES, cache)
    assert np.array_equal(cached_vectors, vectors)
    assert cached_seconds == seconds  # not re-measured: the time does not depend on the cache
    assert (again.texts_embedded, again.cache_hits) == (0, 2)
    empty, none = again.embed_queries_timed([])
    assert empty.shape == (0, DIMENSIONS) and none == []


def test_calibrated_passages_are_embedded_once_and_cached_when_asked_for(
    model_dir: Path, tmp_path: Path
) -> None:
    with EmbeddingCache(tmp_path / "cache") as cache:
        embedding = TextEmbedding(model_dir, cache, intra_op_threads=2)
        assert embedding.cached_passages(PASSAGES) == set()
        assert embedding.calibrate(PASSAGES[:2]) > 0
        assert embedding.calibrate(PASSAGES[:2]) == 0.0  # already waiting
        assert embedding.texts_embedded == 0  # counted when `embed` asks for them
        run_model = embedding._run_model
        through_the_model: list[str] = []

        def counted(texts: list[str], *rest: object) -> np.ndarray:
            through_the_model.extend(texts)
            return run_model(texts, *rest)  # type: ignore[arg-type]

        embedding._run_model = counted  # type: ignore[method-assign]
        heard: list[int] = []
        vectors = embedding.embed(PASSAGES, heard.append)
        assert through_the_model == [PASSAGES[2]]  # the calibrated two are not run again
        assert sum(heard) == len(PASSAGES)
        assert (embedding.texts_embedded, embedding.cache_hits) == (3, 0)
        assert embedding.cached_passages(PASSAGES) == set(PASSAGES)
        fresh = TextEmbedding(model_dir, intra_op_threads=2).embed(PASSAGES)
        assert np.allclose(vectors, fresh, atol=1e-6)
        assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_the_warm_up_runs_once(model_dir: Path) -> None:
    embedding = TextEmbedding(model_dir, intra_op_threads=2)
    warm = embedding.warm_up()
    assert embedding.warm_up() is warm
    assert warm.shape == (DIMENSIONS,)
    assert (embedding.texts_embedded, embedding.cache_hits) == (0, 0)
    assert embedding.cached_passages(["x"]) == set()  # no cache: none held


def test_without_prefixes_a_query_and_a_passage_embed_alike(model_dir: Path) -> None:
    embedding = TextEmbedding(model_dir, intra_op_threads=2)
    assert np.allclose(embedding.embed(PASSAGES), embedding.embed_queries(PASSAGES), atol=1e-6)
