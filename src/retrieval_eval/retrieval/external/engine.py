"""A vector engine configured by table (Qdrant, LanceDB, Milvus): what the three share.

``index = "ours"`` is the ``dense`` retriever with the engine as its store: the same
chunks and vectors (``[retrievers.dense]``'s model) go into a collection named after
their fingerprint, kept and reused while corpus, chunking and model are unchanged, and a
document ranks by its best chunk (collapse.py), so an engine that searches exactly lands
on ``dense``'s metrics.

``index = "existing"`` searches the team's own collection with queries embedded by the
same model; its vectors must have that model's dimension (anything else is refused
before a query is sent). A record's document id is its ``id_key`` payload field, else its
own id; a document ranks by its best record.

Each engine module supplies a :class:`Store`: how to create, fill, search and read back
a collection. ANN fidelity compares the engine's search with exact search over the very
vectors the engine holds, read back once.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from retrieval_eval.errors import ConfigError
from retrieval_eval.load.documents import Corpus
from retrieval_eval.retrieval.base import AnnFidelity, Hit, SearchResult
from retrieval_eval.retrieval.builtin.collapse import ChunkTable
from retrieval_eval.retrieval.builtin.dense import TAG_KEY_PREFIX, DenseRetriever
from retrieval_eval.retrieval.config import DenseConfig
from retrieval_eval.retrieval.external.ann_fidelity import (
    ExactRecords,
    measure_fidelity,
    search_ranking,
)
from retrieval_eval.retrieval.external.engines_config import OURS_PREFIX, EngineConfig

# Payload keys of our own collections.
DOC_KEY = "doc"
CHUNK_KEY = "chunk"
TAGS_KEY = "tags"
TEXT_KEY = "text"


@dataclass(frozen=True)
class Record:
    """One stored vector as a search or a scan returns it."""

    record_id: str
    score: float  # higher is better (a distance is negated or turned into a similarity)
    payload: Mapping[str, Any]
    vector: Sequence[float] | None = None


class Store(Protocol):
    """One engine's collection, as the retriever uses it."""

    engine: str  # "qdrant"
    approximate: bool  # the engine's search is an ANN index (False: it searches exactly)
    space: str  # "cosine", "l2" or "ip": how scores rank (ExactRecords' spaces)

    def open_ours(self, name: str, dimensions: int, fingerprint: str, count: int) -> bool:
        """Open or (re)create our collection; True when it already holds these chunks."""
        ...

    def add(self, rows: Sequence[Mapping[str, Any]], vectors: np.ndarray) -> None:
        """Store ``rows`` (CHUNK_KEY, DOC_KEY, TEXT_KEY and TAGS_KEY) and their vectors."""
        ...

    def open_existing(self, name: str) -> int:
        """Open the team's collection; its vectors' dimension."""
        ...

    def count(self) -> int: ...

    def search(self, vector: np.ndarray, n: int, tags: Sequence[str]) -> list[Record]:
        """The ``n`` best records, best first; with ``tags``, those whose tag array holds
        ANY of them."""
        ...

    def scan(self) -> Iterator[Record]:
        """Every record with its vector (for exact search)."""
        ...

    def describe(self) -> dict[str, object]: ...

    def close(self) -> None:
        """Let go of the connection (it is made again on the next call)."""
        ...

    def remove(self) -> None:
        """``close``, and remove the store when it lived in a folder of our own."""
        ...


class EngineRetriever(DenseRetriever):
    """``dense`` on an engine's collection (ours), or the team's own collection (existing)."""

    def __init__(self, name: str, table: EngineConfig, dense: DenseConfig, store: Store):
        super().__init__(dense)
        self.name = name
        self.table = table
        self.store = store
        self.label = f"retrievers.{name}"
        self._collection_name: str | None = None
        self._records: ExactRecords | None = None
        self._chunk_counts: dict[str, int] = {}

    # --- the Retriever protocol ------------------------------------------------------

    def index(self, corpus: Corpus) -> None:
        if self.table.index == "ours":
            super().index(corpus)
            return
        from retrieval_eval.index.text_embedding import TextEmbedding

        self.close()
        self._choose_model(corpus)
        name = self.table.collection
        assert name is not None  # EngineConfig requires it for index = "existing"
        dimensions = self.store.open_existing(name)
        self._collection_name = name
        self._embedding = TextEmbedding(
            self.model_dir,
            None,
            intra_op_threads=self.config.threads,
            batch_size=self.config.batch_size,
            token_budget=self.config.token_budget,
            model=self.spec.name,
        )
        if dimensions != self.spec.dimensions:
            raise ConfigError(
                f"{self.label}: collection {name!r} holds {dimensions}-dimensional vectors, "
                f"but [retrievers.dense] model {self.spec.name!r} gives "
                f"{self.spec.dimensions}: set the model its vectors were made with, or "
                'index = "ours" to index the corpus with this one'
            )
        self._collection = self.store
        self._table = ChunkTable(corpus, ())  # no chunks of ours: the engine holds the records

    def describe(self) -> Mapping[str, object]:
        described: dict[str, object] = {
            "retriever": self.name,
            "index": self.table.index,
            "collection": self._collection_name or self.table.collection,
            "model": self.spec.name,
            "model_sha256": self._embedding.model_sha256 if self._embedding is not None else None,
            "space": self.store.space,
            **self.store.describe(),
        }
        if self.table.index == "ours":
            described["chunk_tokens"] = self.config.chunk_tokens
            described["chunk_overlap"] = self.config.chunk_overlap
        else:
            described.update(id_key=self.table.id_key, tag_key=self.table.tag_key)
        return described

    def ann_fidelity(
        self, queries: Sequence[tuple[str, Sequence[str]]], k: int
    ) -> AnnFidelity | None:
        """The engine's search against exact search over the vectors it holds, read back
        once. Unasked (``ann_fidelity_queries`` unset), not measured when the engine
        searches exactly (local mode, a flat index): it would only say 1.0."""
        sample = self.table.fidelity_sample(self.table.index)
        asked = self.table.ann_fidelity_queries is not None
        if sample <= 0 or self._collection is None or not (self.store.approximate or asked):
            return None
        records = self._exact_records()
        embedding = self._embedding
        assert embedding is not None
        return measure_fidelity(
            queries,
            k,
            sample=sample,
            index=f"{self.store.describe().get('search', 'ANN')}, {self.name}",
            approximate=search_ranking(self.search),
            exact=records.ranking(lambda query: embedding.embed_queries([query])[0]),
        )

    def close(self) -> None:
        """Called before indexing and when the run is done: the connection goes (our
        collection stays in the engine, reused next time, unless it lived in a temporary
        folder of its own)."""
        self._records = None
        self._collection = None
        if self._cache is not None:
            self._cache.close()
            self._cache = None
        self.store.remove()

    # --- ours: dense's index and chunks, kept in the engine --------------------------

    def _open_collection(self, fingerprint: str, chunk_count: int) -> bool:
        assert self._embedding is not None
        name = f"{self.table.collection or OURS_PREFIX}_{fingerprint[:16]}"
        self._collection_name = name
        dimensions = self.spec.dimensions
        reused = self.store.open_ours(name, dimensions, fingerprint, chunk_count)
        assert self._table is not None  # dense's index() makes the table first
        self._collection = _Adding(self.store, {c.id: c.text for c in self._table.chunks})
        return reused

    def _embedding_class(self) -> Any:
        from retrieval_eval.index.text_embedding import TextEmbedding

        return TextEmbedding

    # --- search ------------------------------------------------------------------------

    def _wanted(self, queries: Sequence[tuple[str, Sequence[str]]], k: int) -> list[int]:
        """Ours: dense's rule. Existing: every query when k > 0 (the engine answers a tag
        no record carries with nothing, never with an unfiltered search)."""
        if self.table.index == "ours":
            return super()._wanted(queries, k)
        self._searchable()
        return list(range(len(queries))) if k > 0 else []

    def _warm_up_search(self, k: int) -> None:
        if self.table.index == "ours":
            super()._warm_up_search(k)
            return
        _, embedding = self._searchable()
        self._answer(embedding.warm_up(), (), k)

    def _answer(self, vector: np.ndarray | None, tags: Sequence[str], k: int) -> SearchResult:
        if vector is None:
            return SearchResult(hits=())
        if self.table.index == "ours":
            return self._answer_ours(vector, tags, k)
        return SearchResult(hits=self._answer_existing(vector, tags, k))

    def _answer_ours(self, vector: np.ndarray, tags: Sequence[str], k: int) -> SearchResult:
        assert self._table is not None
        table = self._table
        present = table.tags_present(tags)
        total = len(table.chunks)
        wanted = min(total, k * 4)
        while True:
            found = self.store.search(vector, wanted, present)
            positions = np.fromiter(
                (self._position[str(r.payload.get(CHUNK_KEY, r.record_id))] for r in found),
                dtype=np.int64,
                count=len(found),
            )
            distinct = len(set(table.chunk_doc[positions].tolist()))
            if distinct >= k or len(found) < wanted or wanted >= total:
                break
            wanted = min(total, wanted * 4)
        scores = np.zeros(total, dtype=np.float64)
        scores[positions] = [record.score for record in found]
        return SearchResult(hits=table.top_documents(scores, positions, k))

    def _answer_existing(self, vector: np.ndarray, tags: Sequence[str], k: int) -> tuple[Hit, ...]:
        total = self.store.count()
        if k <= 0 or total == 0:
            return ()
        wanted = min(total, k * 4)
        while True:
            found = self.store.search(vector, wanted, sorted(set(tags)))
            hits = collapse_records(found, self.table.id_key, self.table.text_key, self.label)
            if len(hits) >= k or len(found) < wanted or wanted >= total:
                break
            wanted = min(total, wanted * 4)
        return tuple(hits[:k])

    def _exact_records(self) -> ExactRecords:
        if self._records is not None:
            return self._records
        ours = self.table.index == "ours"
        id_key = DOC_KEY if ours else self.table.id_key
        tag_key = TAGS_KEY if ours else self.table.tag_key
        vectors: list[Sequence[float]] = []
        doc_ids: list[str] = []
        tags: list[frozenset[str]] = []
        for record in self.store.scan():
            assert record.vector is not None
            vectors.append(record.vector)
            doc_ids.append(_doc_id(record, id_key, self.label))
            value = record.payload.get(tag_key)
            tags.append(
                frozenset(str(t) for t in value) if isinstance(value, list) else frozenset()
            )
        matrix = np.asarray(vectors, dtype=np.float64) if vectors else np.zeros((0, 1))
        self._records = ExactRecords(self.store.space, matrix, doc_ids, tags)
        return self._records


class _Adding:
    """What dense's indexing loop adds chunks through (``add(ids, embeddings, metadatas)``),
    turned into the engine's rows: the chunk id, its document, text and tags (the text
    too, so the collection can later be searched as index = "existing" with
    text_key = "text")."""

    def __init__(self, store: Store, texts: Mapping[str, str]):
        self.store = store
        self.texts = texts

    def add(
        self, *, ids: Sequence[str], embeddings: np.ndarray, metadatas: Sequence[Mapping[str, Any]]
    ) -> None:
        rows = [
            {
                CHUNK_KEY: chunk_id,
                DOC_KEY: str(metadata[DOC_KEY]),
                TEXT_KEY: self.texts[chunk_id],
                TAGS_KEY: sorted(
                    key[len(TAG_KEY_PREFIX) :] for key in metadata if key.startswith(TAG_KEY_PREFIX)
                ),
            }
            for chunk_id, metadata in zip(ids, metadatas, strict=True)
        ]
        self.store.add(rows, np.asarray(embeddings, dtype=np.float32))


def collapse_records(
    records: Sequence[Record], id_key: str | None, text_key: str | None, label: str
) -> list[Hit]:
    """Records → documents by collapse.py's rule: a document ranks by its best record,
    ties go to the smaller document id, and the hit carries that record's text."""
    best: dict[str, Hit] = {}
    for record in records:
        doc_id = _doc_id(record, id_key, label)
        text = record.payload.get(text_key, "") if text_key is not None else ""
        hit = Hit(doc_id, float(record.score), text if isinstance(text, str) else str(text))
        if doc_id not in best or hit.score > best[doc_id].score:
            best[doc_id] = hit
    return sorted(best.values(), key=lambda hit: (-hit.score, hit.doc_id))


def _doc_id(record: Record, id_key: str | None, label: str) -> str:
    if id_key is None:
        return record.record_id
    value = record.payload.get(id_key)
    if value is None or value == "":
        raise ConfigError(
            f"{label}.id_key: record {record.record_id!r} has no payload field {id_key!r} "
            f"(its fields: {', '.join(sorted(record.payload)) or 'none'}); set id_key to the "
            "field holding the document id, or leave it unset to use the record's own id"
        )
    return str(value)


class LocalFolder:
    """The embedded store's folder: the configured one, else a folder of our own that
    lives until the run is done with the retriever (a run without a cache folder)."""

    def __init__(self, path: Path | None):
        self._path = path
        self._temporary: Path | None = None

    def path(self) -> Path:
        if self._path is not None:
            self._path.mkdir(parents=True, exist_ok=True)
            return self._path
        if self._temporary is None:
            self._temporary = Path(tempfile.mkdtemp(prefix="retrieval-eval-engine-"))
        return self._temporary

    def remove(self) -> None:
        if self._temporary is not None:
            shutil.rmtree(self._temporary, ignore_errors=True)
            self._temporary = None


def unreachable(label: str, where: str, error: BaseException, setting: str) -> ConfigError:
    """The one message an engine that cannot be reached gives."""
    detail = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return ConfigError(
        f"{label}: cannot reach {where} ({type(error).__name__}: {detail[:300]}); check "
        f"{setting} (or url_env), or remove it to run the engine embedded in the cache folder"
    )


def missing_package(name: str, extra: str, error: ImportError) -> ConfigError:
    return ConfigError(
        f"retriever `{name}` needs its client library: pip install 'retrieval-eval[{extra}]' "
        f"({error})"
    )
