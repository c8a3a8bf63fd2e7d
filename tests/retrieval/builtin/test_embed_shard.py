"""Filling the embedding cache with the dense retriever's chunks, or one shard of them, on
the real model: the shards split the distinct chunk texts between them, each embedded
once; a later run finds every vector cached and embeds nothing; and without a model or a
cache folder it says what it needs."""

from __future__ import annotations

from pathlib import Path

import pytest

from retrieval_eval.errors import ConfigError
from retrieval_eval.load.documents import Corpus, Document
from retrieval_eval.retrieval.builtin.dense import DenseRetriever
from retrieval_eval.retrieval.builtin.embed_shard import embed_into_cache
from retrieval_eval.retrieval.config import RetrieversConfig
from retrieval_eval.sharding import Shard


def test_shards_split_the_chunks_and_a_later_index_embeds_none(
    notes: Corpus, retrievers_config: RetrieversConfig, tmp_path: Path
) -> None:
    # A long note too: chunked with dense's window and overlap, which the cache must match.
    long = Document(
        id="journal/long",
        title="Long",
        text=" ".join(f"Day {n}: walked to the market and cooked dinner." for n in range(120)),
    )
    notes = Corpus(documents=(*notes.documents, long), location="notes")
    dense = retrievers_config.dense.model_copy(update={"cache_dir": tmp_path / "cache"})
    heard: list[tuple[int, int]] = []
    first = embed_into_cache(
        notes, dense, Shard(1, 2), lambda done, total: heard.append((done, total))
    )
    second = embed_into_cache(notes, dense, Shard(2, 2))
    assert first.chunks == second.chunks > 0
    assert first.selected > 0 and second.selected > 0
    assert (first.embedded, first.cached) == (first.selected, 0)
    assert (second.embedded, second.cached) == (second.selected, 0)
    assert heard and heard[-1] == (first.selected, first.selected)
    whole = embed_into_cache(notes, dense, None)
    assert whole.selected == first.selected + second.selected  # disjoint, and all of them
    assert (whole.embedded, whole.cached) == (0, whole.selected)
    assert whole.model_sha256 == first.model_sha256
    retriever = DenseRetriever(dense)
    retriever.index(notes)
    assert retriever.embedding is not None and retriever.embedding.texts_embedded == 0
    retriever.close()


def test_it_needs_a_model_and_a_cache_folder(
    notes: Corpus, retrievers_config: RetrieversConfig
) -> None:
    with pytest.raises(ConfigError, match="needs a model folder and a cache folder"):
        embed_into_cache(notes, retrievers_config.dense, None)
