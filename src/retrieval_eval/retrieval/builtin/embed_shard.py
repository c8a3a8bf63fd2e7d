"""Fill the embedding cache with the dense retriever's chunks, or one shard of them.

The chunks are cut exactly as ``DenseRetriever.index`` cuts them, so a later run
finds every vector in the cache. A chunk belongs to shard ``sha256(text) mod N``
(the text's sha256 is also part of its cache key): adding documents moves no existing
chunk to another shard. Chunks are embedded and stored a batch at a time, so memory
stays flat however large the corpus.
"""

from __future__ import annotations

from dataclasses import dataclass

from retrieval_eval.errors import ConfigError
from retrieval_eval.index.chunking import chunk_corpus
from retrieval_eval.index.embedding import MiniLMEmbedding
from retrieval_eval.index.embedding_cache import EmbeddingCache, text_key
from retrieval_eval.index.model_catalog import model_spec
from retrieval_eval.load.documents import Corpus
from retrieval_eval.retrieval.base import IndexProgress
from retrieval_eval.retrieval.builtin.dense import EMBED_BATCH, chunk_cap, model_token_spans
from retrieval_eval.retrieval.config import DenseConfig
from retrieval_eval.retrieval.defaults import dense_for_corpus
from retrieval_eval.sharding import Shard


@dataclass(frozen=True)
class EmbedSummary:
    chunks: int  # every chunk of the corpus
    selected: int  # this shard's distinct chunk texts
    embedded: int
    cached: int
    model_sha256: str


def embed_into_cache(
    corpus: Corpus,
    config: DenseConfig,
    shard: Shard | None,
    progress: IndexProgress | None = None,
) -> EmbedSummary:
    """``progress(done, total)`` hears the texts embedded (or found cached), batch by batch."""
    config = dense_for_corpus(config, len(corpus.documents))  # a run's callers resolved it
    if config.model_dir is None or config.cache_dir is None:
        raise ConfigError("embedding into the cache needs a model folder and a cache folder")
    chunks = chunk_corpus(
        corpus,
        max_tokens=chunk_cap(config.chunk_tokens, model_spec(config.model)),
        overlap=config.chunk_overlap,
        spans=model_token_spans(config.model_dir, model_spec(config.model)),
    )
    texts = list(dict.fromkeys(chunk.text for chunk in chunks))
    if shard is not None:
        texts = [text for text in texts if shard.holds_digest(text_key(text))]
    with EmbeddingCache(config.cache_dir) as cache:
        embedding = MiniLMEmbedding(
            config.model_dir,
            cache,
            intra_op_threads=config.threads,
            batch_size=config.batch_size,
            token_budget=config.token_budget,
            model=config.model,
        )
        done = 0

        def on_done(count: int) -> None:
            nonlocal done
            done += count
            if progress is not None:
                progress(done, len(texts))

        for start in range(0, len(texts), EMBED_BATCH):
            embedding.embed(texts[start : start + EMBED_BATCH], on_done)
    return EmbedSummary(
        chunks=len(chunks),
        selected=len(texts),
        embedded=embedding.texts_embedded,
        cached=embedding.cache_hits,
        model_sha256=embedding.model_sha256,
    )
